// Matrix transpose through a 32 x 32 shared tile, moved by 32 x 8 threads
// (each thread copies TILE / ROWS = 4 elements), as in the course notes.
// width and height are multiples of TILE.
#include <cuda_runtime.h>

#define TILE 32
#define ROWS 8

__global__ void transposeTile(float *odata, const float *idata, int width, int height) {
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}
