// Row-wise softmax in half precision with float accumulation, one warp per
// row: each lane loads __half elements and widens them, the row's maximum
// and sum are reduced in float with butterfly shuffles, and the result is
// rounded back to __half on the store. A second kernel reduces in half with
// __shfl_xor_sync on __half values directly.
#include <cfloat>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define WARP 32

__device__ __forceinline__ float warp_max(float v) {
    for (int offset = WARP / 2; offset > 0; offset /= 2)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = WARP / 2; offset > 0; offset /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

__global__ void softmax_fp16(const __half *__restrict__ x, __half *__restrict__ y, int rows,
                             int cols) {
    const int row = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
    const int lane = threadIdx.x % WARP;
    if (row >= rows) return;
    const __half *xr = x + row * cols;
    __half *yr = y + row * cols;
    float m = -FLT_MAX;
    for (int c = lane; c < cols; c += WARP) m = fmaxf(m, __half2float(xr[c]));
    m = warp_max(m);
    float s = 0.0f;
    for (int c = lane; c < cols; c += WARP) s += expf(__half2float(xr[c]) - m);
    s = warp_sum(s);
    const float inv = 1.0f / s;
    for (int c = lane; c < cols; c += WARP) yr[c] = __float2half(expf(__half2float(xr[c]) - m) * inv);
}

// Row maxima in half: __hmax over the lane's elements, then a butterfly of
// __half shuffles.
__global__ void row_max_half(const __half *__restrict__ x, __half *__restrict__ out, int rows,
                             int cols) {
    const int row = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
    const int lane = threadIdx.x % WARP;
    if (row >= rows) return;
    __half m = __float2half(-65504.0f);
    for (int c = lane; c < cols; c += WARP) m = __hmax(m, x[row * cols + c]);
    for (int offset = WARP / 2; offset > 0; offset /= 2)
        m = __hmax(m, __shfl_xor_sync(0xffffffffu, m, offset));
    if (lane == 0) out[row] = m;
}
