// y = a*x + y over __half arrays with a float scale, computed in float and
// rounded back to half once (the usual mixed-precision AXPY), and the same
// in half arithmetic throughout (__hfma and the C++ operators of
// cuda_fp16.hpp), with a grid-stride loop.
#include <cstdio>
#include <vector>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void half_axpy(int n, float a, const __half *__restrict__ x, __half *__restrict__ y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float xi = __half2float(x[i]);
        float yi = __half2float(y[i]);
        y[i] = __float2half_rn(a * xi + yi);
    }
}

__global__ void half_axpy_native(int n, __half a, const __half *x, __half *y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        __half v = __hfma(a, x[i], y[i]);
        // Clamp to [-8, 8] with the comparison operators and __hmax/__hmin.
        const __half lim = __float2half(8.0f);
        if (v > lim || v < -lim) {
            v = __hmin(__hmax(v, -lim), lim);
        }
        y[i] = v;
    }
}

int main() {
    const int n = 1000;
    std::vector<__half> h(n);
    for (int i = 0; i < n; ++i) h[i] = __float2half(0.25f * (i % 17));
    __half *x, *y;
    cudaMalloc(&x, n * sizeof(__half));
    cudaMalloc(&y, n * sizeof(__half));
    cudaMemcpy(x, h.data(), n * sizeof(__half), cudaMemcpyHostToDevice);
    cudaMemcpy(y, h.data(), n * sizeof(__half), cudaMemcpyHostToDevice);
    half_axpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
    half_axpy_native<<<2, 128>>>(n, __float2half(0.5f), x, y);
    cudaDeviceSynchronize();
    std::printf("done\n");
    cudaFree(x);
    cudaFree(y);
    return 0;
}
