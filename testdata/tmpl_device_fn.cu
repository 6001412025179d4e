// tmpl_device_fn: device-function templates called with explicit arguments
// from an ordinary kernel: `dot<4>` (an unrolled fixed-length dot product,
// `template <int N>`) and `square<float>` (`template <typename T>`), the
// building blocks of small-vector kernels. Written for copper.

#include <cuda_runtime.h>

template <int N>
__device__ float dot(const float *a, const float *b) {
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < N; ++k) {
        s += a[k] * b[k];
    }
    return s;
}

template <typename T>
__device__ __forceinline__ T square(T x) {
    return x * x;
}

__global__ void point_norms(const float *points, const float *dir, float *proj, float *len2, int count) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) {
        proj[i] = dot<4>(points + 4 * i, dir);
        float s = 0.0f;
        for (int k = 0; k < 4; ++k) {
            s += square<float>(points[4 * i + k]);
        }
        len2[i] = s;
    }
}
