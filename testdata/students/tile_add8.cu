// Matrix addition in 8 x 8 tiles: each block covers one TILE x TILE tile of
// the n x n matrices; threads outside the tile do nothing.
#include <cuda_runtime.h>

#define TILE 8

__global__ void addTiles(const float *a, const float *b, float *c, int n) {
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    if (tx < TILE && ty < TILE && row < n && col < n) {
        c[row * n + col] = a[row * n + col] + b[row * n + col];
    }
}
