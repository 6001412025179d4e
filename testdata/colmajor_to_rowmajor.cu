// colmajor_to_rowmajor: copies an nrows x ncols double matrix stored
// column by column (as cuBLAS leaves it) into row-major order, one thread
// per output element in 16 x 16 blocks. Written for copper. The writes are
// coalesced (col follows threadIdx.x), but the reads walk down a column of
// the source, nrows elements apart: here the loads are the uncoalesced
// side, so a staged transposition exchanges the thread indices when
// loading the tile instead of when storing it.

#include <cuda_runtime.h>

#define BS 16

__global__ void colToRow(const double *__restrict__ colMajor,
                         double *__restrict__ rowMajor,
                         int nrows, int ncols)
{
    int col = blockIdx.x * BS + threadIdx.x;   // output column
    int row = blockIdx.y * BS + threadIdx.y;   // output row
    if (row < nrows && col < ncols) {
        rowMajor[row * ncols + col] = colMajor[col * nrows + row];
    }
}

// Launched from the host code of a larger program; the parameter file
// gives the sizes copper tests it on.
void colToRowOnDevice(const double *dColMajor, double *dRowMajor, int nrows, int ncols,
                      cudaStream_t stream)
{
    dim3 block(BS, BS);
    dim3 grid((ncols + BS - 1) / BS, (nrows + BS - 1) / BS);
    colToRow<<<grid, block, 0, stream>>>(dColMajor, dRowMajor, nrows, ncols);
}
