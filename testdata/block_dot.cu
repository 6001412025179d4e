// block_dot: the partial dot products of two float vectors, one per block,
// with the shared-memory tree reduction of the CUDA samples' first
// reduction kernels. The host adds the partials. Summing per warp first
// with shuffles changes the order of the float additions, so copper offers
// it only with --allow-reassociation (the result may differ in the last
// bits); the tail of the tree keeps the order and is offered always.
//
// Build: nvcc -DTHREADS=256 block_dot.cu

#include <cuda_runtime.h>

#ifndef THREADS
#define THREADS 256
#endif

__global__ void dot_partials(const float *x, const float *y, float *partial, int n)
{
    __shared__ float cache[THREADS];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int j = i; j < n; j += blockDim.x * gridDim.x) {
        sum += x[j] * y[j];
    }
    cache[tid] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            cache[tid] += cache[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = cache[0];
    }
}

float dot_on_device(const float *d_x, const float *d_y, float *d_partial, float *h_partial, int n)
{
    const int blocks = 8;
    dot_partials<<<blocks, THREADS>>>(d_x, d_y, d_partial, n);
    cudaMemcpy(h_partial, d_partial, blocks * sizeof(float), cudaMemcpyDeviceToHost);
    float total = 0.0f;
    for (int b = 0; b < blocks; b++) {
        total += h_partial[b];
    }
    return total;
}
