// histogram256: 256-bin byte histogram with per-block bins in shared memory
// (after the SDK histogram256 benchmark of Muller & Hoffmann, Table 1).
// Written for copper. Threads add into the shared bins with atomicAdd, at
// bin indices taken from the input bytes, so the number of bank conflicts
// depends on the data; the block's bins are then merged into the global
// histogram with atomicAdd.

#include <cstdio>
#include <cuda_runtime.h>

#define BIN_COUNT 256

__global__ void histogram256(unsigned char *data, unsigned int *hist, int n) {
    __shared__ unsigned int s_hist[BIN_COUNT];
    for (int b = threadIdx.x; b < BIN_COUNT; b += blockDim.x) {
        s_hist[b] = 0;
    }
    __syncthreads();
    int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        unsigned char v = data[i];
        atomicAdd(&s_hist[v], 1);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BIN_COUNT; b += blockDim.x) {
        atomicAdd(&hist[b], s_hist[b]);
    }
}

int main() {
    const int n = 4096;
    unsigned char *data = nullptr;
    unsigned int *hist = nullptr;
    cudaMallocManaged(&data, n);
    cudaMallocManaged(&hist, BIN_COUNT * sizeof(unsigned int));
    for (int i = 0; i < n; i++) {
        data[i] = static_cast<unsigned char>((i * 7) & 0xff);
    }
    cudaMemset(hist, 0, BIN_COUNT * sizeof(unsigned int));
    histogram256<<<4, 64>>>(data, hist, n);
    cudaDeviceSynchronize();
    std::printf("bin 0: %u, bin 7: %u\n", hist[0], hist[7]);
    cudaFree(data);
    cudaFree(hist);
    return 0;
}
