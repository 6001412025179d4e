// Kinetic energy of each particle: an array of structs allocated with
// sizeof(Particle), the way a physics assignment writes it.
#include <cstdio>
#include <cuda_runtime.h>

struct Particle {
    float3 pos;
    float3 vel;
    float mass;
};

__global__ void kinetic(const Particle *p, float *energy, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float3 v = p[i].vel;
        energy[i] = 0.5f * p[i].mass * (v.x * v.x + v.y * v.y + v.z * v.z);
    }
}

int main() {
    int n = 5000;
    Particle *d_p;
    float *d_e;
    cudaMalloc(&d_p, n * sizeof(Particle));
    cudaMalloc(&d_e, n * sizeof(float));
    kinetic<<<(n + 127) / 128, 128>>>(d_p, d_e, n);
    cudaDeviceSynchronize();
    printf("done\n");
    cudaFree(d_p);
    cudaFree(d_e);
    return 0;
}
