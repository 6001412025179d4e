// Out-of-place transpose of a width x height matrix, no shared memory.
#include <cuda_runtime.h>

__global__ void transposeNaive(float *out, const float *in, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        out[x * height + y] = in[y * width + x];
    }
}
