// particles_pos_vel: an explicit Euler step over particles whose position
// and velocity are `float[3]` members, as N-body and SPH codes written in
// C style keep them. Written for copper. `euler_step` updates each
// component through a local copy (`p.pos[0] += dt * p.vel[0]`, constant
// member indices) and writes it back; `euler_loop` loops over the
// dimensions (`parts[i].pos[d]`, a run-time member index); `kinetic`
// reduces |v|^2 per particle with a `double` accumulator.

#include <cuda_runtime.h>

typedef struct {
    float pos[3];
    float vel[3];
} Particle;

__global__ void euler_step(Particle *parts, float dt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    Particle p = parts[i];
    p.pos[0] += dt * p.vel[0];
    p.pos[1] += dt * p.vel[1];
    p.pos[2] += dt * p.vel[2];
    parts[i] = p;
}

__global__ void euler_loop(Particle *parts, const float *accel, float dt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        for (int d = 0; d < 3; d++) {
            parts[i].vel[d] += dt * accel[3 * i + d];
            parts[i].pos[d] += dt * parts[i].vel[d];
        }
    }
}

__global__ void kinetic(const Particle *parts, double *energy, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double e = 0.0;
        for (int d = 0; d < 3; ++d) {
            float v = parts[i].vel[d];
            e += 0.5 * (double)(v * v);
        }
        energy[i] = e;
    }
}

int main() {
    const int n = 500;
    Particle *d_parts;
    float *d_accel;
    double *d_energy;
    cudaMalloc(&d_parts, n * sizeof(Particle));
    cudaMalloc(&d_accel, 3 * n * sizeof(float));
    cudaMalloc(&d_energy, n * sizeof(double));
    euler_step<<<(n + 127) / 128, 128>>>(d_parts, 0.01f, n);
    euler_loop<<<(n + 127) / 128, 128>>>(d_parts, d_accel, 0.01f, n);
    kinetic<<<(n + 127) / 128, 128>>>(d_parts, d_energy, n);
    cudaDeviceSynchronize();
    return 0;
}
