// tmpl_transpose: a naive transpose written once as a template over the
// element type and the tile side, the way a course's "generic" matrix
// helpers are written, and launched for a float matrix in 32 x 32 blocks
// and a double matrix in 16 x 16 blocks. Written for copper. The reads are
// coalesced, the writes `rows` elements apart. Staging through a shared
// tile helps both instantiations; the tile, sized by TILE_DIM and typed T,
// is right for both, so copper rewrites the template (checked for both).

#include <cstdio>
#include <cuda_runtime.h>

template <typename T, int TILE_DIM>
__global__ void transpose(T *out, const T *in, int rows, int cols) {
    int col = blockIdx.x * TILE_DIM + threadIdx.x;
    int row = blockIdx.y * TILE_DIM + threadIdx.y;
    // one element per thread; threads past the edge do nothing
    if (row < rows && col < cols) {
        out[col * rows + row] = in[row * cols + col];
    }
}

int main() {
    const int rows = 70, cols = 50;
    float *fa, *fb;
    double *da, *db;
    cudaMalloc(&fa, rows * cols * sizeof(float));
    cudaMalloc(&fb, rows * cols * sizeof(float));
    cudaMalloc(&da, rows * cols * sizeof(double));
    cudaMalloc(&db, rows * cols * sizeof(double));
    dim3 big(32, 32);
    dim3 small(16, 16);
    transpose<float, 32><<<dim3((cols + 31) / 32, (rows + 31) / 32), big>>>(fb, fa, rows, cols);
    transpose<double, 16><<<dim3((cols + 15) / 16, (rows + 15) / 16), small>>>(db, da, rows, cols);
    cudaDeviceSynchronize();
    std::printf("done\n");
    return 0;
}
