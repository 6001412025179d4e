// The largest element and the Euclidean norm of each row, one thread per
// row, both launched by the file's own main.

__global__ void row_peak(const float *X, float *peak, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows) {
        float best = X[i * cols];
        for (int j = 1; j < cols; j++)
            best = fmaxf(best, X[i * cols + j]);
        peak[i] = best;
    }
}

__global__ void row_norm(const float *X, float *norm, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows) {
        float sq = 0.0f;
        for (int j = 0; j < cols; j++) {
            float x = X[i * cols + j];
            sq += x * x;
        }
        norm[i] = sqrtf(sq);
    }
}

int main() {
    int rows = 2048, cols = 256;
    float *X, *peak, *norm;
    cudaMalloc(&X, rows * cols * sizeof(float));
    cudaMalloc(&peak, rows * sizeof(float));
    cudaMalloc(&norm, rows * sizeof(float));
    row_peak<<<dim3(rows / 256), dim3(256)>>>(X, peak, rows, cols);
    row_norm<<<rows / 256, 256>>>(X, norm, rows, cols);
    cudaDeviceSynchronize();
    return 0;
}
