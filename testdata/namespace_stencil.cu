// namespace_stencil: a 1-D box filter whose helpers live in a namespace,
// as library-style CUDA code organizes them: `stencil::RADIUS` (a
// constexpr), `stencil::clamp_index` (a `static __device__ __forceinline__`
// helper) and `stencil::weight()`, called with qualified names. Written
// for copper.

#include <cuda_runtime.h>

namespace stencil {
constexpr int RADIUS = 2;

static __device__ __forceinline__ int clamp_index(int i, int n) {
    return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

__device__ inline float weight() {
    return 1.0f / static_cast<float>(2 * RADIUS + 1);
}
}  // namespace stencil

__global__ void box_filter(const float *__restrict__ in, float *__restrict__ out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float acc = 0.0f;
    for (int k = -stencil::RADIUS; k <= stencil::RADIUS; ++k) {
        acc += in[stencil::clamp_index(i + k, n)];
    }
    out[i] = acc * stencil::weight();
}
