// matvec_n.cu: a course exercise, y = A x for an N x N matrix, one thread
// per row. N and BLOCKSIZE are not defined here: the course builds it with
//   nvcc -DN=1024 -DBLOCKSIZE=128 matvec_n.cu
// Written for copper.
#include <stdio.h>
#include <stdlib.h>

__global__ void matvec(const float *A, const float *x, float *y) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < N) {
        float sum = 0.0f;
        for (int col = 0; col < N; col++) {
            sum += A[row * N + col] * x[col];
        }
        y[row] = sum;
    }
}

int main(void) {
    float *A, *x, *y;
    cudaMalloc((void **)&A, N * N * sizeof(float));
    cudaMalloc((void **)&x, N * sizeof(float));
    cudaMalloc((void **)&y, N * sizeof(float));
    matvec<<<(N + BLOCKSIZE - 1) / BLOCKSIZE, BLOCKSIZE>>>(A, x, y);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
