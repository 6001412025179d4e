// Row-wise softmax, one thread per row (numerically stable).
#include <cuda_runtime.h>
#include <math.h>

__global__ void softmaxRows(const float *x, float *y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) {
        return;
    }
    float mx = x[r * cols];
    for (int c = 1; c < cols; c++) {
        mx = fmaxf(mx, x[r * cols + c]);
    }
    float sum = 0.0f;
    for (int c = 0; c < cols; c++) {
        sum += expf(x[r * cols + c] - mx);
    }
    for (int c = 0; c < cols; c++) {
        y[r * cols + c] = expf(x[r * cols + c] - mx) / sum;
    }
}
