// scale_columns_sizet: multiplies every column of a row-major matrix by
// its own factor, with size_t sizes as code written for large matrices
// has them. The thread index is split column-first (c = idx / rows, the
// way one pictures "a thread per column entry"), so consecutive threads
// walk down a column: elements cols apart.

#include <cuda_runtime.h>
#include <cstddef>

__global__ void scale_columns(float *m, const float *factor, size_t rows, size_t cols)
{
    size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
    size_t c = idx / rows;
    size_t r = idx % rows;
    if (idx < rows * cols) {
        m[r * cols + c] *= factor[c];
    }
}

void scale(float *d_m, const float *d_factor, size_t rows, size_t cols)
{
    size_t blocks = (rows * cols + 255) / 256;
    scale_columns<<<blocks, 256>>>(d_m, d_factor, rows, cols);
}
