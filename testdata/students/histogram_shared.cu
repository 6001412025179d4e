// 256-bin histogram of bytes with a per-block histogram in shared memory.
#include <cuda_runtime.h>

#define BINS 256

__global__ void histogramShared(const unsigned char *data, unsigned int *hist, int n) {
    __shared__ unsigned int local[BINS];
    local[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&local[data[i]], 1u);
    }
    __syncthreads();
    atomicAdd(&hist[threadIdx.x], local[threadIdx.x]);
}
