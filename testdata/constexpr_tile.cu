// constexpr_tile: a tiled matrix transpose whose tile sizes are C++
// constants rather than macros: `constexpr int TILE_DIM` and a file-scope
// `const int BLOCK_ROWS`, used as shared array sizes, loop bounds and in
// index math. Written for copper (the layout follows the well-known
// "efficient matrix transpose" kernel, padded against bank conflicts).

#include <cuda_runtime.h>

constexpr int TILE_DIM = 32;
const int BLOCK_ROWS = 8;

__global__ void transpose_tiled(float *odata, const float *idata, int width, int height) {
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < width && y + j < height) {
            tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
        }
    }
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < height && y + j < width) {
            odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}

void transpose(float *d_out, const float *d_in, int width, int height) {
    dim3 grid((width + TILE_DIM - 1) / TILE_DIM, (height + TILE_DIM - 1) / TILE_DIM);
    dim3 block(TILE_DIM, BLOCK_ROWS);
    transpose_tiled<<<grid, block>>>(d_out, d_in, width, height);
}
