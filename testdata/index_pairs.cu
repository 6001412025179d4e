// Gathers through int2 index pairs (an edge list or sparse pattern stored
// as pairs), and an int4 / uint4 packed variant: one 8- or 16-byte load
// brings all indices of a thread. Written for copper.

#include <cstdint>
#include <cuda_runtime.h>

__global__ void pair_sum(const int2* __restrict__ pairs, const float* __restrict__ vals, float* __restrict__ out, int m) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < m) {
        int2 p = pairs[e];
        out[e] = vals[p.x] + vals[p.y];
    }
}

__global__ void quad_gather(const int4* quads, const uint4* weights, const float* vals, float* out, int m) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < m) {
        const int4 q = quads[e];
        const uint4 w = weights[e];
        out[e] = w.x * vals[q.x] + w.y * vals[q.y] + w.z * vals[q.z] + w.w * vals[q.w];
    }
}

__global__ void swap_pairs(int2* pairs, int m) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < m) {
        int2 p = pairs[e];
        pairs[e] = make_int2(p.y, p.x);
    }
}
