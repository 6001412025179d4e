// Moving average of radius RADIUS with its host program: elements
// outside the array do not count.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define RADIUS 4

__global__ void moving_average(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float sum = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; k++) {
        if (i + k >= 0 && i + k < n) {
            sum += in[i + k];
        }
    }
    out[i] = sum / (2 * RADIUS + 1);
}

int main() {
    int n = 5000;
    size_t bytes = n * sizeof(float);
    float *h_in = (float *)malloc(bytes);
    float *h_out = (float *)malloc(bytes);
    for (int i = 0; i < n; i++) {
        h_in[i] = (float)(i % 17);
    }
    float *d_in, *d_out;
    cudaMalloc(&d_in, bytes);
    cudaMalloc(&d_out, bytes);
    cudaMemcpy(d_in, h_in, bytes, cudaMemcpyHostToDevice);
    moving_average<<<(n + 255) / 256, 256>>>(d_in, d_out, n);
    cudaMemcpy(h_out, d_out, bytes, cudaMemcpyDeviceToHost);
    printf("out[0] = %f\n", h_out[0]);
    cudaFree(d_in);
    cudaFree(d_out);
    free(h_in);
    free(h_out);
    return 0;
}
