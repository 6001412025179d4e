// Pointwise complex multiply and magnitude with float2 (cuFFT-style
// interleaved complex numbers): z = a * conj(b) * scale. Written for copper.

#include <cuda_runtime.h>

__device__ __forceinline__ float norm2(float2 z) {
    return z.x * z.x + z.y * z.y;
}

__global__ void cmul_conj(const float2* a, const float2* b, float2* z, int n, float scale) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float2 p = a[i];
        float2 q = b[i];
        float2 r;
        r.x = (p.x * q.x + p.y * q.y) * scale;
        r.y = (p.y * q.x - p.x * q.y) * scale;
        z[i] = r;
    }
}

__global__ void magnitude(const float2* __restrict__ z, float* __restrict__ mag, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        mag[i] = sqrtf(norm2(z[i]));
    }
}

__global__ void twiddle(double2* w, int n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) {
        double angle = -2.0 * 3.141592653589793 * k / n;
        w[k] = make_double2(cos(angle), sin(angle));
    }
}
