// SAXPY with a grid-stride loop, so any grid covers any n.
#include <cuda_runtime.h>

__global__ void saxpyStride(int n, float alpha, const float *x, float *y) {
    int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = alpha * x[i] + y[i];
    }
}
