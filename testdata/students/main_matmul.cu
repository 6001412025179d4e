// Matrix multiplication with its host program: a 2-D launch computed from N.
#include <cstdio>
#include <cuda_runtime.h>

#define BLOCK 16

__global__ void matMul(const float *A, const float *B, float *C, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < n) {
        float acc = 0.0f;
        for (int k = 0; k < n; k++) {
            acc += A[row * n + k] * B[k * n + col];
        }
        C[row * n + col] = acc;
    }
}

int main() {
    const int N = 500;
    size_t bytes = N * N * sizeof(float);
    float *dA, *dB, *dC;
    cudaMalloc((void **)&dA, bytes);
    cudaMalloc((void **)&dB, bytes);
    cudaMalloc((void **)&dC, bytes);
    cudaMemset(dA, 0, bytes);
    cudaMemset(dB, 0, bytes);
    dim3 block(BLOCK, BLOCK);
    dim3 grid((N + BLOCK - 1) / BLOCK, (N + BLOCK - 1) / BLOCK);
    matMul<<<grid, block>>>(dA, dB, dC, N);
    cudaDeviceSynchronize();
    printf("done\n");
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    return 0;
}
