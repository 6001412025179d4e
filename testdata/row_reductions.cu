// One thread per row of a row-major matrix: a product with a vector, a
// count per row and a maximum per row (one warp per row).

__global__ void matvec(const float *M, const float *x, float *y, int rows, int m) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float acc = 0.0f;
        for (int i = 0; i < m; i++)
            acc += M[row * m + i] * x[i];
        y[row] = acc;
    }
}

__global__ void row_counts(const int *hits, int *total, int rows, int m) {
    int row = threadIdx.x + blockIdx.x * blockDim.x;
    if (row >= rows) return;
    int sum = 0;
    for (int i = 0; i < m; ++i) {
        sum += hits[row * m + i];
    }
    total[row] = sum;
}

__global__ void row_max(const float *M, float *out, int rows, int m) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float best = M[row * m];
        for (int i = 1; i < m; i++)
            best = fmaxf(best, M[row * m + i]);
        out[row] = best;
    }
}
