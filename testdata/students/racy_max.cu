// A broken maximum: every thread stores its element into the single result
// slot when it is larger than what it read, so which value survives depends
// on the order threads and blocks run in.
#include <cuda_runtime.h>

__global__ void racyMax(const int *data, int *result, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && data[i] > result[0]) {
        result[0] = data[i];
    }
}
