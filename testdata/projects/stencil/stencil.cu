// stencil.cu: two kernels that take their sizes, types and helpers from
// inc/stencil.h (build: nvcc -I inc stencil.cu). Written for copper.
// blur_rows: a 5-point weighted average along each row of a w x h image,
// indices clamped at the row's ends (weights in constant memory).
// square_tiles: each BLOCK_SIZE x BLOCK_SIZE block squares its tile of an
// n x n matrix through shared memory, transposed within the tile.
// scale_rows: scales each row of a rows x cols matrix by its factor and adds
// RADIUS (the factor's load repeats in every iteration: load hoisting).
#include <cstdio>
#include "stencil.h"

__global__ void blur_rows(const real *in, real *out, int w, int h) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y;
    if (c < w && r < h) {
        real acc = 0.0f;
        for (int k = -RADIUS; k <= RADIUS; k++) {
            int cc = clampi(c + k, 0, w - 1);
            acc += weights[k + RADIUS] * in[IDX(r, cc, w)];
        }
        out[IDX(r, c, w)] = acc;
    }
}

__global__ void square_tiles(real *a, int n) {
    __shared__ real tile[BLOCK_SIZE][BLOCK_SIZE];
    int x = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    int y = blockIdx.y * BLOCK_SIZE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = square(a[IDX(y, x, n)]);
    __syncthreads();
    a[IDX(y, x, n)] = tile[threadIdx.x][threadIdx.y];
}

__global__ void scale_rows(float *m, const float *factor, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        for (int c = 0; c < cols; c++) {
            m[IDX(r, c, cols)] = m[IDX(r, c, cols)] * factor[r] + RADIUS;
        }
    }
}

int main() {
    Grid2D g = {64, 8};
    real *in, *out;
    cudaMalloc(&in, g.width * g.height * sizeof(real));
    cudaMalloc(&out, g.width * g.height * sizeof(real));
    blur_rows<<<dim3(2, 8), 32>>>(in, out, g.width, g.height);
    square_tiles<<<dim3(4, 4), dim3(BLOCK_SIZE, BLOCK_SIZE)>>>(in, 64);
    scale_rows<<<2, 32>>>(in, out, 64, 8);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
