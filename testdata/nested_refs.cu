// nested_refs: references to members of array elements, as particle codes
// write them: `float3 &p = bodies[i].pos;` then `p.x += …`, a `const`
// reference to another member, a reference to a scalar member (`float &m
// = bodies[i].mass`) and to a nested struct (`Tag &t = bodies[i].tag`).
// Written for copper. Each reference names the element's member itself:
// writes through it reach the array, and the index is evaluated once.

#include <cuda_runtime.h>

struct Tag {
    int hits;
    float last;
};

struct Body {
    float3 pos;
    float3 vel;
    Tag tag;
    float mass;
};

__global__ void drift(Body *bodies, float dt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float3 &p = bodies[i].pos;
    const float3 &v = bodies[i].vel;
    p.x += dt * v.x;
    p.y += dt * v.y;
    p.z += dt * v.z;
    float &m = bodies[i].mass;
    m = m * 0.5f + 1.0f;
    Tag &t = bodies[i].tag;
    t.hits += 1;
    t.last = p.x + m;
}

int main() {
    const int n = 500;
    Body *d_bodies;
    cudaMalloc(&d_bodies, n * sizeof(Body));
    drift<<<(n + 127) / 128, 128>>>(d_bodies, 0.01f, n);
    cudaDeviceSynchronize();
    return 0;
}
