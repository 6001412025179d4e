// Sum of each warp's elements with shuffles; lane 0 writes the warp's sum.
#include <cuda_runtime.h>

__global__ void warpSum(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < n) ? in[i] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffff, v, offset);
    }
    if ((threadIdx.x & 31) == 0) {
        out[i / 32] = v;
    }
}
