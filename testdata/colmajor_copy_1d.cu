// colmajor_copy_1d: copies the top-left rows x cols block of a column-major
// matrix (leading dimension ld, the BLAS layout) into a packed column-major
// buffer, one thread per element on a 1-D launch. The thread index is
// split row-first (i = tid / cols), so consecutive threads take
// consecutive columns and both matrices are walked rows apart.

#include <cuda_runtime.h>

__global__ void copy_block_colmajor(const double *src, double *dst, int rows, int cols, int ld)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int i = tid / cols;   // row
    int j = tid % cols;   // column
    if (i < rows && j < cols)
        dst[j * rows + i] = src[j * ld + i];
}

void copy_block(const double *d_src, double *d_dst, int rows, int cols, int ld)
{
    const int threads = 128;
    copy_block_colmajor<<<(rows * cols + threads - 1) / threads, threads>>>(d_src, d_dst, rows, cols, ld);
}
