// 1-D stencil of radius R over an array of N elements; sizes are set at
// compile time (nvcc -DN=... -DR=...).
#include <cuda_runtime.h>

#ifndef N
#define N 1024
#endif
#ifndef R
#define R 3
#endif

__global__ void stencil1d(const float *in, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= R && i < N - R) {
        float s = 0.0f;
        for (int j = -R; j <= R; j++) {
            s += in[i + j];
        }
        out[i] = s / (float)(2 * R + 1);
    }
}
