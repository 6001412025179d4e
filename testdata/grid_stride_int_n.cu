// grid_stride_int_n: grid-stride and block-stride loops whose counter is
// unsigned (`unsigned int`, `size_t`) and whose bound is an `int n`, as
// course kernels and older SDK samples write them. In `i < n` C converts n
// to the counter's unsigned type, so a negative n becomes a huge bound and
// the loop runs until the counter wraps around: copper bounds these loops
// assuming 0 ≤ n, and says so. Written for copper.

#include <cstdio>
#include <cuda_runtime.h>

#define THREADS 256
#define BINS 64

__global__ void scale_int_n(float *data, float s, int n) {
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        data[i] *= s;
    }
}

__global__ void histogram_int_n(const int *in, unsigned int *bins, int n) {
    __shared__ unsigned int local[BINS];
    for (unsigned int b = threadIdx.x; b < BINS; b += blockDim.x) {
        local[b] = 0;
    }
    __syncthreads();
    const size_t stride = static_cast<size_t>(blockDim.x) * gridDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        atomicAdd(&local[in[i] & (BINS - 1)], 1u);
    }
    __syncthreads();
    for (unsigned int b = threadIdx.x; b < BINS; b += blockDim.x) {
        atomicAdd(&bins[b], local[b]);
    }
}

__global__ void row_sums_int_cols(const float *__restrict__ m, float *sums, int rows, int cols) {
    const unsigned int r = blockIdx.x;
    if (r >= rows) {
        return;
    }
    float acc = 0.0f;
    for (unsigned int c = threadIdx.x; c < cols; c += blockDim.x) {
        acc += m[r * cols + c];
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        acc += __shfl_down_sync(0xffffffffu, acc, offset);
    }
    if ((threadIdx.x & 31u) == 0) {
        atomicAdd(&sums[r], acc);
    }
}

int main() {
    const int n = 1 << 16;
    const int rows = 64;
    const int cols = 300;
    float *d = nullptr;
    int *in = nullptr;
    unsigned int *bins = nullptr;
    float *m = nullptr;
    float *sums = nullptr;
    cudaMalloc(&d, n * sizeof(float));
    cudaMalloc(&in, n * sizeof(int));
    cudaMalloc(&bins, BINS * sizeof(unsigned int));
    cudaMalloc(&m, rows * cols * sizeof(float));
    cudaMalloc(&sums, rows * sizeof(float));
    scale_int_n<<<32, THREADS>>>(d, 0.5f, n);
    histogram_int_n<<<32, THREADS>>>(in, bins, n);
    row_sums_int_cols<<<rows, 128>>>(m, sums, rows, cols);
    cudaDeviceSynchronize();
    std::printf("done\n");
    return 0;
}
