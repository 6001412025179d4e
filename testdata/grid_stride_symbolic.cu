// grid_stride_symbolic: size_t and unsigned grid-stride loops in a file
// whose launch is computed at run time from the command line, so copper
// knows nothing of the grid: the stride `blockDim.x * gridDim.x` is only
// known to be within the hardware's limits (at most 1024 threads a block,
// 2^31 − 1 blocks). A 64-bit stride needs no assumption on the launch; a
// 32-bit one wraps around (to 0 at 2^32 threads), so copper bounds its
// loops assuming a grid small enough, and says so. Written for copper.

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void axpy_sizet(size_t n, double a, const double *x, double *y) {
    const size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = fma(a, x[i], y[i]);
    }
}

__global__ void fill_u32(unsigned int *out, unsigned int n, unsigned int value) {
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        out[i] = value ^ i;
    }
}

__global__ void copy4_sizet(const float4 *__restrict__ in, float4 *__restrict__ out, size_t n4) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += blockDim.x * gridDim.x) {
        float4 v = in[i];
        v.x *= 2.0f;
        out[i] = v;
    }
}

int main(int argc, char **argv) {
    const size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 4096;
    const int threads = argc > 2 ? std::atoi(argv[2]) : 256;
    const int blocks = static_cast<int>((n + threads - 1) / threads);
    double *x = nullptr;
    double *y = nullptr;
    unsigned int *u = nullptr;
    float4 *a = nullptr;
    float4 *b = nullptr;
    cudaMalloc(&x, n * sizeof(double));
    cudaMalloc(&y, n * sizeof(double));
    cudaMalloc(&u, n * sizeof(unsigned int));
    cudaMalloc(&a, n * sizeof(float4));
    cudaMalloc(&b, n * sizeof(float4));
    axpy_sizet<<<blocks, threads>>>(n, 3.0, x, y);
    fill_u32<<<blocks, threads>>>(u, static_cast<unsigned int>(n), 7u);
    copy4_sizet<<<blocks, threads>>>(a, b, n);
    cudaDeviceSynchronize();
    std::printf("done\n");
    return 0;
}
