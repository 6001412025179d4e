// An n-body style integration step over an array of Particle structs
// (array of structs: float3 position and velocity, a mass), and a second
// kernel over a `typedef struct` with a float4 field (position + weight,
// 16-byte aligned, so the struct is aligned to 16: 16 + 12 + 4 = 32
// bytes). Written for copper.

#include <cuda_runtime.h>

struct Particle {
    float3 pos;
    float3 vel;
    float mass;
};

typedef struct {
    float4 pw;
    float3 acc;
    float charge;
} body_t;

__global__ void integrate(Particle* p, const float3* force, float dt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Particle q = p[i];
        const float3 f = force[i];
        const float inv = 1.0f / q.mass;
        q.vel.x += f.x * inv * dt;
        q.vel.y += f.y * inv * dt;
        q.vel.z += f.z * inv * dt;
        q.pos.x += q.vel.x * dt;
        q.pos.y += q.vel.y * dt;
        q.pos.z += q.vel.z * dt;
        p[i] = q;
    }
}

__global__ void potential(const body_t* __restrict__ bodies, float* __restrict__ phi, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 me = bodies[i].pw;
        float sum = 0.0f;
        for (int j = 0; j < n; j++) {
            const float4 other = bodies[j].pw;
            float dx = other.x - me.x;
            float dy = other.y - me.y;
            float dz = other.z - me.z;
            float r2 = dx * dx + dy * dy + dz * dz + 0.01f;
            sum += bodies[j].charge * other.w * rsqrtf(r2);
        }
        phi[i] = sum;
    }
}
