// Row sums of an integer matrix with its host program.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void rowSums(const int *mat, int *sums, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        int s = 0;
        for (int c = 0; c < cols; c++) {
            s += mat[row * cols + c];
        }
        sums[row] = s;
    }
}

int main() {
    int rows = 1000;
    int cols = 64;
    size_t bytes = rows * cols * sizeof(int);
    int *h_mat = (int *)malloc(bytes);
    int *h_sums = (int *)malloc(rows * sizeof(int));
    for (int i = 0; i < rows * cols; i++) {
        h_mat[i] = i % 7;
    }
    int *d_mat, *d_sums;
    cudaMalloc(&d_mat, bytes);
    cudaMalloc(&d_sums, rows * sizeof(int));
    cudaMemcpy(d_mat, h_mat, bytes, cudaMemcpyHostToDevice);
    rowSums<<<(rows + 255) / 256, 256>>>(d_mat, d_sums, rows, cols);
    cudaMemcpy(h_sums, d_sums, rows * sizeof(int), cudaMemcpyDeviceToHost);
    printf("sums[0] = %d\n", h_sums[0]);
    cudaFree(d_mat);
    cudaFree(d_sums);
    free(h_mat);
    free(h_sums);
    return 0;
}
