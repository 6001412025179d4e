// 3 x 3 box blur of a W x H image; the image size is a compile-time
// constant (nvcc -DW=... -DH=...).
#include <cuda_runtime.h>

#ifndef W
#define W 640
#endif
#ifndef H
#define H 480
#endif

__global__ void boxBlur(const float *img, float *out) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1) {
        return;
    }
    float s = 0.0f;
    for (int dy = -1; dy <= 1; dy++) {
        for (int dx = -1; dx <= 1; dx++) {
            s += img[(y + dy) * W + (x + dx)];
        }
    }
    out[y * W + x] = s / 9.0f;
}
