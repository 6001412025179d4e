// matmul_naive: C = A * B for square n x n row-major matrices, one thread
// per element of C, every operand read straight from global memory.
// Written for copper. threadIdx.x selects the column, so the reads of B and
// the write of C are coalesced; the reads of A are uniform across a warp.

__global__ void matmul_naive(float *A, float *B, float *C, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < n) {
        float sum = 0.0f;
        for (int k = 0; k < n; k++) {
            sum += A[row * n + k] * B[k * n + col];
        }
        C[row * n + col] = sum;
    }
}
