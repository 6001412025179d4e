// Scales a rows x cols matrix, one thread per element, with its host
// program: the sizes come from variables in main.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void scaleMatrix(float *m, int rows, int cols, float factor) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) {
        m[i] = m[i] * factor;
    }
}

int main() {
    int rows = 300;
    int cols = 700;
    float *d_m;
    cudaMalloc(&d_m, rows * cols * sizeof(float));
    cudaMemset(d_m, 0, rows * cols * sizeof(float));
    const int threads = 128;
    int blocks = (rows * cols + threads - 1) / threads;
    scaleMatrix<<<blocks, threads>>>(d_m, rows, cols, 2.0f);
    cudaDeviceSynchronize();
    printf("done\n");
    cudaFree(d_m);
    return 0;
}
