// A matrix-vector product, one thread per row, launched by the file's
// own main: copper may change the launch with the kernel (one warp per
// row, 32 times the blocks).

#include <cstdio>

__global__ void matvec_rows(const float *A, const float *v, float *out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float dot = 0.0f;
        for (int c = 0; c < cols; c++)
            dot += A[r * cols + c] * v[c];
        out[r] = dot;
    }
}

int main() {
    int rows = 1000, cols = 512;
    float *A, *v, *out;
    cudaMalloc(&A, rows * cols * sizeof(float));
    cudaMalloc(&v, cols * sizeof(float));
    cudaMalloc(&out, rows * sizeof(float));
    int threads = 128;
    int blocks = (rows + threads - 1) / threads;
    matvec_rows<<<blocks, threads>>>(A, v, out, rows, cols);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
