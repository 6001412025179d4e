// Each thread brightens one row of a grayscale image, WIDTH pixels
// (the lab sheet: "give every thread a whole row so it has enough work").
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define WIDTH 64

__global__ void brightenRows(const float *img, float *out, int height, float gain) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < height) {
        for (int c = 0; c < WIDTH; c++) {
            float v = img[row * WIDTH + c] * gain;
            out[row * WIDTH + c] = v > 1.0f ? 1.0f : v;
        }
    }
}

int main() {
    int height = 1000;
    size_t bytes = height * WIDTH * sizeof(float);
    float *h_img = (float *)malloc(bytes);
    for (int i = 0; i < height * WIDTH; i++) {
        h_img[i] = (i % 256) / 255.0f;
    }
    float *d_img, *d_out;
    cudaMalloc(&d_img, bytes);
    cudaMalloc(&d_out, bytes);
    cudaMemcpy(d_img, h_img, bytes, cudaMemcpyHostToDevice);
    int threads = 128;
    int blocks = (height + threads - 1) / threads;
    brightenRows<<<blocks, threads>>>(d_img, d_out, height, 1.5f);
    cudaMemcpy(h_img, d_out, bytes, cudaMemcpyDeviceToHost);
    printf("out[0] = %f\n", h_img[0]);
    cudaFree(d_img);
    cudaFree(d_out);
    free(h_img);
    return 0;
}
