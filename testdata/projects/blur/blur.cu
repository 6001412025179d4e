// blur.cu: a horizontal box blur of a w x h image, each row staged in
// tiles of TILE pixels plus a RADIUS halo in shared memory (sizes and the
// clamp helper from blur.h). Written for copper.
#include <cstdio>
#include <cuda_runtime.h>
#include "blur.h"

__global__ void blur_tiles(const float *__restrict__ in, float *__restrict__ out, int w, int h) {
    __shared__ float row[TILE + 2 * RADIUS];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y;
    row[threadIdx.x + RADIUS] = in[y * w + clamp_index(x, w)];
    if (threadIdx.x < RADIUS) {
        row[threadIdx.x] = in[y * w + clamp_index(x - RADIUS, w)];
        row[threadIdx.x + TILE + RADIUS] = in[y * w + clamp_index(x + TILE, w)];
    }
    __syncthreads();
    if (x < w && y < h) {
        float acc = 0.0f;
        for (int k = 0; k < DIAMETER; k++) {
            acc += row[threadIdx.x + k];
        }
        out[y * w + x] = acc / DIAMETER;
    }
}

int main() {
    const int w = 64, h = 8;
    float *in, *out;
    cudaMalloc(&in, w * h * sizeof(float));
    cudaMalloc(&out, w * h * sizeof(float));
    blur_tiles<<<dim3(w / TILE, h), TILE>>>(in, out, w, h);
    zero_borders<<<1, 32>>>(out, w, h);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
