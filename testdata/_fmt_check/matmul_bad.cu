// matmul_bad: a deliberately slow C = A * B in the spirit of the matMulBad
// benchmark of Muller & Hoffmann (POPL 2021): the row index comes from
// threadIdx.x, so neighbouring threads of a warp read A and write C n
// elements apart (uncoalesced), and B is read uniformly. Written for copper.

__global__ void matmul_bad(float *A, float *B, float *C, int n) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < n && col < n) {
        float sum = 0.0f;
        for (int k = 0; k < n; k++) {
            sum += A[row * n + k] * B[k * n + col];
        }
        C[row * n + col] = sum;
    }
}
