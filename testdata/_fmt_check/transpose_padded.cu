// transpose_padded: transpose_tiled with the shared tile padded to
// 32 x 33, so that a column of the tile spreads over all 32 banks and the
// transposed read is conflict-free. Written for copper. width and height
// must be multiples of 32.

#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transpose_padded(float *out, float *in, int width, int height) {
    __shared__ float tile[TILE_DIM][32 + 1];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    }
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}
