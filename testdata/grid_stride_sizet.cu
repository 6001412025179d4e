// grid_stride_sizet: grid-stride loops over size_t and unsigned counters,
// the way current CUDA code and the SDK samples write them (the NVIDIA
// blog's saxpy with size_t, reduce6's `unsigned int i` loop over `n`).
// Written for copper. A counter of an unsigned type may wrap around when
// n is within a stride of the type's maximum, so copper bounds these loops
// assuming n is at most half the counter type's range, and says so.

#include <cstddef>
#include <cstdio>
#include <cuda_runtime.h>

__global__ void saxpy_sizet(size_t n, float a, const float *__restrict__ x, float *__restrict__ y) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += static_cast<size_t>(blockDim.x) * gridDim.x) {
        y[i] = a * x[i] + y[i];
    }
}

template <unsigned int blockSize>
__global__ void reduce_grid(const int *g_idata, int *g_odata, unsigned int n) {
    __shared__ int sdata[blockSize];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockSize * 2 + threadIdx.x;
    unsigned int gridSize = blockSize * 2 * gridDim.x;
    int mySum = 0;
    while (i < n) {
        mySum += g_idata[i];
        if (i + blockSize < n) {
            mySum += g_idata[i + blockSize];
        }
        i += gridSize;
    }
    sdata[tid] = mySum;
    __syncthreads();
    for (unsigned int s = blockSize / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] = mySum = mySum + sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        g_odata[blockIdx.x] = mySum;
    }
}

__global__ void clear_u64(unsigned long long count, double *out) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long k = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; k < count; k += stride) {
        out[k] = 0.0;
    }
}

int main() {
    const size_t n = 1 << 20;
    float *x = nullptr;
    float *y = nullptr;
    int *in = nullptr;
    int *partial = nullptr;
    double *d = nullptr;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    cudaMalloc(&in, n * sizeof(int));
    cudaMalloc(&partial, 64 * sizeof(int));
    cudaMalloc(&d, n * sizeof(double));
    saxpy_sizet<<<64, 256>>>(n, 2.0f, x, y);
    reduce_grid<256><<<64, 256>>>(in, partial, (unsigned int)n);
    clear_u64<<<64, 256>>>(n, d);
    cudaDeviceSynchronize();
    std::printf("done\n");
    return 0;
}
