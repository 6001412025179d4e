// tree_sum: per-block sums of an int array (histogram counts) and of a
// float array (squared errors), each the shared-memory tree reduction
// from a course's first reduction exercise. Written for copper. The last
// five halving steps run in the first warp only, yet every step pays a
// barrier and two shared loads per lane: the warp-shuffle target.

#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#ifndef THREADS
#define THREADS 256
#endif

__global__ void sum_counts(const int *counts, int *block_totals, int n)
{
    __shared__ int sdata[THREADS];
    int tid = threadIdx.x;
    int i = blockIdx.x * THREADS + tid;
    sdata[tid] = (i < n) ? counts[i] : 0;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s /= 2) {
        if (tid < s) {
            sdata[tid] = sdata[tid] + sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0)
        block_totals[blockIdx.x] = sdata[0];
}

__global__ void sum_squared_error(const float *pred, const float *truth,
                                  float *partial, int n)
{
    __shared__ float cache[THREADS];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    float d = 0.0f;
    if (i < n) {
        d = pred[i] - truth[i];
    }
    cache[tid] = d * d;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            cache[tid] += cache[tid + s];
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = cache[0];
    }
}

int main()
{
    const int n = 1 << 20;
    const int blocks = (n + THREADS - 1) / THREADS;
    std::vector<int> h_counts(n, 1);
    int *d_counts, *d_totals;
    float *d_pred, *d_truth, *d_partial;
    cudaMalloc(&d_counts, n * sizeof(int));
    cudaMalloc(&d_totals, blocks * sizeof(int));
    cudaMalloc(&d_pred, n * sizeof(float));
    cudaMalloc(&d_truth, n * sizeof(float));
    cudaMalloc(&d_partial, blocks * sizeof(float));
    cudaMemcpy(d_counts, h_counts.data(), n * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(d_pred, 0, n * sizeof(float));
    cudaMemset(d_truth, 0, n * sizeof(float));
    sum_counts<<<blocks, THREADS>>>(d_counts, d_totals, n);
    sum_squared_error<<<blocks, THREADS>>>(d_pred, d_truth, d_partial, n);
    std::vector<int> h_totals(blocks);
    cudaMemcpy(h_totals.data(), d_totals, blocks * sizeof(int), cudaMemcpyDeviceToHost);
    printf("first block total %d\n", h_totals[0]);
    cudaFree(d_counts);
    cudaFree(d_totals);
    cudaFree(d_pred);
    cudaFree(d_truth);
    cudaFree(d_partial);
    return 0;
}
