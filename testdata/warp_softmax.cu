// Row-wise softmax with one warp per row, in the style of inference
// libraries: each lane strides over the row by the warp size, the row's
// maximum and sum are reduced with butterfly and tree shuffles.
#include <cfloat>
#include <cuda_runtime.h>

#ifndef WARP
#define WARP 32
#endif

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int offset = WARP / 2; offset > 0; offset /= 2)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = WARP >> 1; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

__global__ void warp_softmax(const float* __restrict__ x, float* __restrict__ y, int rows,
                             int cols) {
    const int row = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
    const int lane = threadIdx.x % WARP;
    if (row >= rows) return;
    const float* xr = x + static_cast<size_t>(row) * cols;
    float* yr = y + static_cast<size_t>(row) * cols;
    float m = -FLT_MAX;
    for (int c = lane; c < cols; c += WARP) m = fmaxf(m, __ldg(&xr[c]));
    m = __shfl_sync(0xffffffffu, warp_max(m), 0);
    float s = 0.0f;
    for (int c = lane; c < cols; c += WARP) s += __expf(xr[c] - m);
    s = __shfl_sync(0xffffffffu, warp_sum(s), 0);
    const float inv = 1.0f / s;
    for (int c = lane; c < cols; c += WARP) yr[c] = __expf(xr[c] - m) * inv;
}
