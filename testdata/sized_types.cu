// Fixed-width and size types in device code: size_t and int64_t indices,
// uint32_t hashing, bool flags, and dim3 / uint3 values copied from the
// builtins. Written for copper.

#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>

__global__ void hash_flags(const uint32_t* keys, bool* hit, uint32_t mask, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        uint32_t h = keys[i] * 2654435761u;
        h ^= h >> 16;
        bool set = (h & mask) == 0;
        hit[i] = set;
    }
}

__global__ void offsets64(const int* counts, int64_t* offs, int n) {
    const dim3 b = blockDim;
    const uint3 t = threadIdx;
    const uint3 g = blockIdx;
    int64_t i = (int64_t)g.x * b.x + t.x;
    if (i < n) {
        offs[i] = i * 1024 + counts[i];
    }
}
