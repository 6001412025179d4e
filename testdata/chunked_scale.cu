// chunked_scale: each block scales one chunk of ITEMS * blockDim.x * stride
// elements, every thread ITEMS elements of it, blockDim.x * stride apart.
// Written for copper. The first kernel computes its offsets in 32-bit
// arithmetic, which wraps once the array passes 2^31 (or 2^32) elements;
// the second computes them in 64 bits (size_t), the fix `copper lint`'s
// index-overflow suggests.

#include <cstddef>
#include <cuda_runtime.h>

#ifndef ITEMS
#define ITEMS 4
#endif

__global__ void scale_chunks(float *data, int stride, float k) {
    int base = blockIdx.x * blockDim.x * stride * ITEMS + threadIdx.x;
    for (int j = 0; j < ITEMS; ++j) {
        data[base + j * blockDim.x * stride] *= k;
    }
}

__global__ void scale_chunks_wide(float *data, int stride, float k) {
    size_t base = static_cast<size_t>(blockIdx.x) * blockDim.x * stride * ITEMS + threadIdx.x;
    for (int j = 0; j < ITEMS; ++j) {
        data[base + static_cast<size_t>(j) * blockDim.x * stride] *= k;
    }
}
