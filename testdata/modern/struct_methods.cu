// Structs with __device__ member functions, used as locals, through
// pointers and as array elements: a small n-body step in the style of the
// SDK's samples (written for copper's tests).
#include <cuda_runtime.h>

struct Vec3 {
    float x, y, z;

    __host__ __device__ float dot(const Vec3 &o) const { return x * o.x + y * o.y + z * o.z; }
    __host__ __device__ float norm2() const { return dot(*this); }
    __device__ void scale(float s) {
        x *= s;
        y *= s;
        this->z *= s;
    }
    __device__ void add(const Vec3 &o) {
        x += o.x;
        y += o.y;
        z += o.z;
    }
};

struct Acc {
    float s;
    int n;
    __device__ void add(float v) {
        s += v;
        n++;
    }
    __device__ float mean() const { return n > 0 ? s / n : 0.0f; }
};

struct Body {
    Vec3 pos;
    Vec3 vel;
    float mass;
    __host__ __device__ float kinetic() const { return 0.5f * mass * vel.norm2(); }
};

// Each body sums the pull of every other body (softened), then moves.
__global__ void nbody_step(Body *bodies, float *energy, int n, float dt) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Body me = bodies[i];
    Vec3 force = {0.0f, 0.0f, 0.0f};
    for (int j = 0; j < n; j++) {
        Vec3 d = {bodies[j].pos.x - me.pos.x, bodies[j].pos.y - me.pos.y,
                  bodies[j].pos.z - me.pos.z};
        float r2 = d.norm2() + 0.01f;
        d.scale(bodies[j].mass / (r2 * sqrtf(r2)));
        force.add(d);
    }
    force.scale(dt / me.mass);
    me.vel.add(force);
    bodies[i].vel = me.vel;
    energy[i] = bodies[i].kinetic();
}

// A running mean per row through a member function on a local.
__global__ void row_means(const float *m, float *means, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        Acc acc = {0.0f, 0};
        for (int c = 0; c < cols; c++) acc.add(m[r * cols + c]);
        means[r] = acc.mean();
    }
}

// Member functions called through a pointer to an array element.
__global__ void rescale(Vec3 *v, float *len2, int n, float s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Vec3 *p = &v[i];
        p->scale(s);
        len2[i] = p->norm2();
    }
}

int main() {
    int n = 512;
    Body *bodies;
    float *energy, *m, *means, *len2;
    Vec3 *v;
    cudaMalloc(&bodies, n * sizeof(Body));
    cudaMalloc(&energy, n * sizeof(float));
    cudaMalloc(&m, n * 64 * sizeof(float));
    cudaMalloc(&means, n * sizeof(float));
    cudaMalloc(&v, n * sizeof(Vec3));
    cudaMalloc(&len2, n * sizeof(float));
    nbody_step<<<(n + 127) / 128, 128>>>(bodies, energy, n, 0.01f);
    row_means<<<(n + 127) / 128, 128>>>(m, means, n, 64);
    rescale<<<(n + 127) / 128, 128>>>(v, len2, n, 2.0f);
    cudaDeviceSynchronize();
    return 0;
}
