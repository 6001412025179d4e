// transpose_inplace: a student's attempt at transposing a square matrix
// in place by passing the same buffer as input and output. Written for
// copper. Each thread reads m[row][col] and writes m[col][row], so threads
// (row, col) and (col, row) race: the result depends on which runs first.
// Staging through shared memory would reorder those reads and writes, so
// copper must refuse it (the launch passes d_m as both arguments).

#include <cstdio>
#include <cuda_runtime.h>

#define N 64
#define TILE 16

__global__ void transposeInPlace(const float *src, float *dst)
{
    int col = blockIdx.x * TILE + threadIdx.x;
    int row = blockIdx.y * TILE + threadIdx.y;
    if (row < N && col < N)
        dst[col * N + row] = src[row * N + col];
}

int main()
{
    float *d_m;
    cudaMalloc(&d_m, N * N * sizeof(float));
    cudaMemset(d_m, 0, N * N * sizeof(float));
    dim3 block(TILE, TILE);
    dim3 grid(N / TILE, N / TILE);
    transposeInPlace<<<grid, block>>>(d_m, d_m);
    cudaDeviceSynchronize();
    printf("done\n");
    cudaFree(d_m);
    return 0;
}
