// Counting the elements above a threshold: every thread adds its own
// finding to one global counter with atomicAdd.
#include <cuda_runtime.h>

__global__ void countAbove(const int *data, int *count, int n, int threshold) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && data[i] > threshold) {
        atomicAdd(count, 1);
    }
}
