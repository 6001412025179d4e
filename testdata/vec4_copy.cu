// Vectorized copy and saxpy with float4: each thread moves 16 bytes per
// access, so a warp's load is 512 bytes (16 sectors) in one request.
// The tail that does not fill a float4 is handled by a scalar kernel.
// Written for copper.

#include <cstdio>
#include <cuda_runtime.h>

#ifndef BLOCK
#define BLOCK 256
#endif

__global__ void copy4(const float4* __restrict__ in, float4* __restrict__ out, int n4) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += blockDim.x * gridDim.x) {
        out[i] = in[i];
    }
}

__global__ void __launch_bounds__(BLOCK) saxpy4(int n4, float a, const float4* x, float4* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        const float4 xv = x[i];
        float4 yv = y[i];
        yv.x = fmaf(a, xv.x, yv.x);
        yv.y = fmaf(a, xv.y, yv.y);
        yv.z = fmaf(a, xv.z, yv.z);
        yv.w = fmaf(a, xv.w, yv.w);
        y[i] = yv;
    }
}

__global__ void saxpy_tail(int n, int done, float a, const float* x, float* y) {
    int i = done + blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}

int main() {
    const int n = 4099;
    const int n4 = n / 4;
    float *x = nullptr, *y = nullptr;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    cudaMemset(x, 0, n * sizeof(float));
    cudaMemset(y, 0, n * sizeof(float));
    saxpy4<<<(n4 + BLOCK - 1) / BLOCK, BLOCK>>>(n4, 2.0f, reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(y));
    saxpy_tail<<<1, 32>>>(n, n4 * 4, 2.0f, x, y);
    copy4<<<4, BLOCK>>>(reinterpret_cast<const float4*>(y), reinterpret_cast<float4*>(x), n4);
    cudaDeviceSynchronize();
    std::printf("done\n");
    cudaFree(x);
    cudaFree(y);
    return 0;
}
