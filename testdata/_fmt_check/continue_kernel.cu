// continue_kernel: per row of an n x m matrix, sums the positive entries
// and counts them, skipping the others with `continue`. Written for copper.
// One thread per row; the `continue` diverges on the data.

__global__ void continue_kernel(float *mat, float *sums, int *counts, int n, int m) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n) {
        return;
    }
    float sum = 0.0f;
    int count = 0;
    for (int j = 0; j < m; j++) {
        float v = mat[row * m + j];
        if (v <= 0.0f) {
            continue;
        }
        sum += v;
        count++;
    }
    sums[row] = sum;
    counts[row] = count;
}
