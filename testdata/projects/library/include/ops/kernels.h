// kernels.h: the ops library's kernels, reached as <ops/kernels.h> through
// -I include; `axpy` is instantiated by src/main.cu's host template.
#pragma once
#include "config.h"

// scale every element by a
__global__ void scale(real *x, real a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

// y += a * x, grid-stride
template <typename T>
__global__ void axpy(T *y, const T *x, T a, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] += a * x[i];
}

// one thread per row: out[r] = sum of row r
__global__ void rowsum(const real *m, real *out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    real s = 0;
    for (int c = 0; c < cols; c++) s += m[r * cols + c];
    out[r] = s;
}
