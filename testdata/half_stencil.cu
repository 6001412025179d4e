// Half-precision kernels the rewrites apply to: a 1-D convolution of a
// __half signal with a float mask, accumulated in float (neighbouring
// threads read overlapping windows: global to shared stages the signal in
// a __shared__ __half tile), and a naive transpose of a __half matrix
// (writes `rows` apart: staged through a padded __shared__ __half tile).
#include <cuda_fp16.h>

#define MASK_WIDTH 7
#define TILE 16

__global__ void conv1d_half(const __half *input, const float *mask, __half *output, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int start = i - MASK_WIDTH / 2;
    float sum = 0.0f;
    for (int j = 0; j < MASK_WIDTH; j++) {
        int k = start + j;
        if (k >= 0 && k < n) {
            sum += __half2float(input[k]) * mask[j];
        }
    }
    if (i < n) {
        output[i] = __float2half(sum);
    }
}

__global__ void transpose_half(const __half *__restrict__ A, __half *__restrict__ B, int rows,
                               int cols) {
    int col = blockIdx.x * TILE + threadIdx.x;
    int row = blockIdx.y * TILE + threadIdx.y;
    if (row < rows && col < cols)
        B[col * rows + row] = A[row * cols + col];
}
