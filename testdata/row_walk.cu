// row_walk: per-row statistics of a rows x cols matrix, one thread per
// row, each walking its row left to right. Written for copper after a
// common first attempt at a row reduction: at every step the lanes of a
// warp read elements `cols` apart (one per row), so each load touches a
// sector per lane. Truly uncoalesced; the fix is a block per row or a
// transposed layout.

#include <cuda_runtime.h>

#ifndef COLS
#define COLS 64
#endif

__global__ void row_stats(const float *__restrict__ m, float *__restrict__ mean,
                          float *__restrict__ peak, int rows)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    float sum = 0.0f;
    float top = m[row * COLS];
    for (int j = 0; j < COLS; ++j) {
        const float v = m[row * COLS + j];
        sum += v;
        top = fmaxf(top, v);
    }
    mean[row] = sum / COLS;
    peak[row] = top;
}
