// One leapfrog step of an all-pairs n-body simulation over an array of
// Particle structs (positions and velocities as float3, a float mass and
// an int id), staged through a `__shared__` tile of Particles, as the
// GPU Gems 3 kernel does with float4s. Compile with -DTILE=... to change
// the tile. Written for copper.

#include <cuda_runtime.h>
#include <math.h>

#ifndef TILE
#define TILE 64
#endif

#define SOFTENING 1e-3f

struct Particle {
    float3 pos;
    float3 vel;
    float mass;
    int id;
};

static_assert(sizeof(Particle) == 32, "Particle is 8 words");

__device__ float3 body_accel(float3 acc, float3 p, const Particle &other) {
    float3 r;
    r.x = other.pos.x - p.x;
    r.y = other.pos.y - p.y;
    r.z = other.pos.z - p.z;
    float dist2 = r.x * r.x + r.y * r.y + r.z * r.z + SOFTENING;
    float inv = rsqrtf(dist2);
    float s = other.mass * inv * inv * inv;
    acc.x += r.x * s;
    acc.y += r.y * s;
    acc.z += r.z * s;
    return acc;
}

__global__ void nbody_step(const Particle *__restrict__ in, Particle *__restrict__ out, int n,
                           float dt) {
    __shared__ Particle tile[TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Particle me = in[min(i, n - 1)];
    float3 acc = make_float3(0.0f, 0.0f, 0.0f);
    for (int base = 0; base < n; base += TILE) {
        int j = base + threadIdx.x;
        if (threadIdx.x < TILE && j < n) {
            tile[threadIdx.x] = in[j];
        }
        __syncthreads();
        int count = min(TILE, n - base);
        for (int k = 0; k < count; ++k) {
            acc = body_accel(acc, me.pos, tile[k]);
        }
        __syncthreads();
    }
    if (i < n) {
        me.vel.x += acc.x * dt;
        me.vel.y += acc.y * dt;
        me.vel.z += acc.z * dt;
        me.pos.x += me.vel.x * dt;
        me.pos.y += me.vel.y * dt;
        me.pos.z += me.vel.z * dt;
        out[i] = me;
    }
}

// Kinetic energy per particle, tagged with the particle's id.
__global__ void kinetic_energy(const Particle *p, float *energy, int *ids, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float3 v = p[i].vel;
        energy[i] = 0.5f * p[i].mass * (v.x * v.x + v.y * v.y + v.z * v.z);
        ids[i] = p[i].id;
    }
}
