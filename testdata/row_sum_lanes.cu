// Row sums of a matrix with one warp per row (lane = threadIdx.x & 31) and,
// for short rows, a group of 8 lanes per row (lane = threadIdx.x % 8).
#include <cstdint>
#include <cuda_runtime.h>

constexpr int kWarp = 32;

__global__ void row_sum_warp(const float* __restrict__ a, float* __restrict__ out, int rows,
                             int cols) {
    const unsigned warp = threadIdx.x / kWarp;
    const unsigned lane = threadIdx.x & (kWarp - 1);
    const int row = static_cast<int>(blockIdx.x * (blockDim.x / kWarp) + warp);
    if (row < rows) {
        float acc = 0.0f;
        for (int c = lane; c < cols; c += kWarp) acc += a[static_cast<size_t>(row) * cols + c];
        for (int offset = kWarp / 2; offset > 0; offset /= 2)
            acc += __shfl_xor_sync(0xffffffffu, acc, offset);
        if (lane == 0) out[row] = acc;
    }
}

template <int GROUP>
__global__ void row_sum_group(const float* __restrict__ a, float* __restrict__ out, int rows,
                              int cols) {
    const int tid = threadIdx.x;
    const int g = tid % GROUP;
    const int row = blockIdx.x * (blockDim.x / GROUP) + tid / GROUP;
    float acc = 0.0f;
    if (row < rows) {
        for (int c = g; c < cols; c += GROUP) acc += a[row * cols + c];
    }
    for (int offset = GROUP / 2; offset > 0; offset /= 2)
        acc += __shfl_down_sync(0xffffffffu, acc, offset, GROUP);
    if (row < rows && g == 0) out[row] = acc;
}

void launch(const float* a, float* out, int rows, int cols, cudaStream_t stream) {
    row_sum_warp<<<(rows + 3) / 4, 128, 0, stream>>>(a, out, rows, cols);
    row_sum_group<8><<<(rows + 15) / 16, 128, 0, stream>>>(a, out, rows, cols);
}
