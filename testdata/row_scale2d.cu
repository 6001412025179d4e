// row_scale2d: scale each row of a rows x cols matrix (row-major floats) by
// its own factor, one thread per element, in blocks of 32 x 8 threads.
// Written like a first 2-D kernel: x walks the rows (row = x index), so the
// 32 lanes of a warp read elements `cols` apart, 32 sectors per request.
// Exchanging x and y in the kernel and at the launch (block 8 x 32) makes
// the lanes read along a row.
//
// Build: nvcc -DROWS=300 -DCOLS=200 row_scale2d.cu

#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#ifndef ROWS
#define ROWS 100
#endif
#ifndef COLS
#define COLS 72
#endif

__global__ void scale_rows(const float *in, const float *factor, float *out, int rows, int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        float f = factor[row];
        out[row * cols + col] = fmaf(in[row * cols + col], f, 0.5f);
    }
}

int main()
{
    const int rows = ROWS, cols = COLS;
    std::vector<float> h_in(rows * cols, 1.0f), h_factor(rows, 2.0f);
    float *d_in, *d_factor, *d_out;
    cudaMalloc(&d_in, rows * cols * sizeof(float));
    cudaMalloc(&d_factor, rows * sizeof(float));
    cudaMalloc(&d_out, rows * cols * sizeof(float));
    cudaMemcpy(d_in, h_in.data(), rows * cols * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d_factor, h_factor.data(), rows * sizeof(float), cudaMemcpyHostToDevice);

    dim3 block(32, 8);
    dim3 grid((rows + block.x - 1) / block.x, (cols + block.y - 1) / block.y);
    scale_rows<<<grid, block>>>(d_in, d_factor, d_out, rows, cols);
    cudaDeviceSynchronize();
    printf("launched %u x %u blocks of %u x %u\n", grid.x, grid.y, block.x, block.y);

    cudaFree(d_in);
    cudaFree(d_factor);
    cudaFree(d_out);
    return 0;
}
