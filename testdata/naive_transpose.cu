// naive_transpose: B = A^T for a rows x cols row-major float matrix, one
// thread per element in 16 x 16 blocks, as in a first CUDA lab. Written
// for copper. The reads of A are coalesced (col from threadIdx.x) but the
// writes of B are `rows` elements apart; swapping the thread indices
// would only move the problem to the reads, so remapping does not pay:
// the fix is a staged transposition through a padded shared tile.

#include <cstdio>
#include <cuda_runtime.h>

#define TILE 16

__global__ void transpose_naive2d(const float *A, float *B, int rows, int cols)
{
    int col = blockIdx.x * TILE + threadIdx.x;
    int row = blockIdx.y * TILE + threadIdx.y;
    if (row < rows && col < cols)
        B[col * rows + row] = A[row * cols + col];
}

int main()
{
    const int rows = 1000, cols = 700;
    float *dA, *dB;
    cudaMalloc(&dA, rows * cols * sizeof(float));
    cudaMalloc(&dB, rows * cols * sizeof(float));
    cudaMemset(dA, 0, rows * cols * sizeof(float));
    dim3 block(TILE, TILE);
    dim3 grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
    transpose_naive2d<<<grid, block>>>(dA, dB, rows, cols);
    cudaDeviceSynchronize();
    printf("done\n");
    cudaFree(dA);
    cudaFree(dB);
    return 0;
}
