// gauss_column_1d: one elimination step of Gaussian elimination on an
// n x n row-major matrix, launched 1-D the way a first CUDA port of the
// textbook loops often is: one thread per element below the pivot row,
// the thread index split with the row changing fastest (r = idx % below),
// as in the CPU loop nest's inner loop. Consecutive threads then update
// elements n apart (GPUDrano's Fan2 problem, in a 1-D launch).

#include <cuda_runtime.h>

#define BLOCK_SIZE 256

__global__ void eliminate_column(float *a, const float *m, int n, int t)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int below = n - 1 - t;   // rows under the pivot
    int c = idx / below;     // column
    int r = idx % below;     // row under the pivot
    if (c < n && r < below) {
        int row = r + t + 1;
        a[row * n + c] -= m[row * n + t] * a[t * n + c];
    }
}

void eliminate(float *d_a, const float *d_m, int n, int t)
{
    int total = (n - 1 - t) * n;
    eliminate_column<<<(total + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(d_a, d_m, n, t);
}
