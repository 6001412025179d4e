// transpose_tiled: out = transpose(in) through a 32 x 32 shared tile, with
// 32 x 8 thread blocks each moving TILE_DIM / BLOCK_ROWS = 4 rows of the
// tile (the scheme of NVIDIA's "efficient matrix transpose" sample).
// Written for copper. Global reads and writes are coalesced, but the column
// read tile[threadIdx.x][...] hits one bank 32 times: 32-way conflicts
// (transpose_padded fixes this). width and height must be multiples of 32.

#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transpose_tiled(float *out, float *in, int width, int height) {
    __shared__ float tile[TILE_DIM][TILE_DIM];
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
