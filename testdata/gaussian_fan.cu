// gaussian_fan: the two kernels of one elimination step of Rodinia's
// Gaussian elimination (gaussian.cu, Fan1 and Fan2), rewritten for copper
// with the same indexing. Fan1 computes the multipliers of column t; Fan2
// updates the trailing matrix in 2-D blocks of BLOCK_SIZE_XY^2 threads.
// In Fan2, a[Size * t + (yidx + t)] does not depend on threadIdx.x: the
// lanes of one row of the block read one element, and consecutive rows
// consecutive elements.

#include <cuda_runtime.h>

#ifndef BLOCK_SIZE_XY
#define BLOCK_SIZE_XY 4
#endif

__global__ void Fan1(float *m_cuda, float *a_cuda, int Size, int t)
{
    if (threadIdx.x + blockIdx.x * blockDim.x >= Size - 1 - t)
        return;
    const int row = blockDim.x * blockIdx.x + threadIdx.x + t + 1;
    m_cuda[Size * row + t] = a_cuda[Size * row + t] / a_cuda[Size * t + t];
}

__global__ void Fan2(float *m_cuda, float *a_cuda, float *b_cuda, int Size, int j1, int t)
{
    if (threadIdx.x + blockIdx.x * blockDim.x >= Size - 1 - t)
        return;
    if (threadIdx.y + blockIdx.y * blockDim.y >= Size - t)
        return;
    const int xidx = blockIdx.x * blockDim.x + threadIdx.x;
    const int yidx = blockIdx.y * blockDim.y + threadIdx.y;
    a_cuda[Size * (xidx + 1 + t) + (yidx + t)] -=
        m_cuda[Size * (xidx + 1 + t) + t] * a_cuda[Size * t + (yidx + t)];
    if (yidx == 0)
        b_cuda[xidx + 1 + t] -= m_cuda[Size * (xidx + 1 + t) + (yidx + t)] * b_cuda[t];
}
