// transpose_defines: B = A^T for an NROWS x NCOLS float matrix, one thread
// per element in BLOCK x BLOCK blocks, with the sizes set on the command
// line (nvcc -DNROWS=4000 -DNCOLS=3000; the defaults are for a quick
// test) as in a first CUDA assignment.
// Written for copper. The reads of A are coalesced (col follows
// threadIdx.x), but the writes of B are NROWS elements apart: one sector
// per lane. Swapping the thread indices only moves the problem to the
// reads; the fix is to stage each block's tile through shared memory.

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#ifndef NROWS
#define NROWS 70
#endif
#ifndef NCOLS
#define NCOLS 50
#endif
#define BLOCK 32

#define CUDA_CHECK(call)                                                  \
    do {                                                                  \
        cudaError_t err_ = (call);                                        \
        if (err_ != cudaSuccess) {                                        \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,            \
                    cudaGetErrorString(err_));                            \
            exit(1);                                                      \
        }                                                                 \
    } while (0)

// B[col][row] = A[row][col]
__global__ void transposeNaive(float *B, const float *A)
{
    int col = blockIdx.x * BLOCK + threadIdx.x;
    int row = blockIdx.y * BLOCK + threadIdx.y;

    if (row < NROWS && col < NCOLS) {
        B[col * NROWS + row] = A[row * NCOLS + col];
    }
}

int main(void)
{
    const size_t bytes = (size_t)NROWS * NCOLS * sizeof(float);
    float *h_A = (float *)malloc(bytes);
    float *h_B = (float *)malloc(bytes);
    for (int i = 0; i < NROWS * NCOLS; i++)
        h_A[i] = (float)(i % 1000) * 0.5f;

    float *d_A, *d_B;
    CUDA_CHECK(cudaMalloc(&d_A, bytes));
    CUDA_CHECK(cudaMalloc(&d_B, bytes));
    CUDA_CHECK(cudaMemcpy(d_A, h_A, bytes, cudaMemcpyHostToDevice));

    dim3 threads(BLOCK, BLOCK);
    dim3 blocks((NCOLS + BLOCK - 1) / BLOCK, (NROWS + BLOCK - 1) / BLOCK);
    transposeNaive<<<blocks, threads>>>(d_B, d_A);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(h_B, d_B, bytes, cudaMemcpyDeviceToHost));

    int errors = 0;
    for (int r = 0; r < NROWS; r++)
        for (int c = 0; c < NCOLS; c++)
            if (h_B[c * NROWS + r] != h_A[r * NCOLS + c])
                errors++;
    printf("%s (%d errors)\n", errors ? "FAILED" : "PASSED", errors);

    cudaFree(d_A);
    cudaFree(d_B);
    free(h_A);
    free(h_B);
    return errors != 0;
}
