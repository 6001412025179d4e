// reduce_warp_sync: the reductions students copy from the classic
// "optimizing parallel reduction" slides, whose last warp finishes without
// barriers by hand ("warp-synchronous"): correct only while the lanes of a
// warp run in lockstep, which CUDA no longer promises since Volta. Written
// for copper in the two ways such code appears: a `warpReduce` device
// function over a `volatile` pointer, and the same steps inline.

#include <cstdio>
#include <cuda_runtime.h>

#define BLOCK 256

__device__ void warpReduce(volatile int *sdata, unsigned int tid)
{
    sdata[tid] += sdata[tid + 32];
    sdata[tid] += sdata[tid + 16];
    sdata[tid] += sdata[tid + 8];
    sdata[tid] += sdata[tid + 4];
    sdata[tid] += sdata[tid + 2];
    sdata[tid] += sdata[tid + 1];
}

// Two elements per thread on the way in (reduce4 in the slides).
__global__ void reduce4(const int *g_idata, int *g_odata, unsigned int n)
{
    __shared__ int sdata[BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    int v = 0;
    if (i < n)
        v = g_idata[i];
    if (i + blockDim.x < n)
        v += g_idata[i + blockDim.x];
    sdata[tid] = v;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) warpReduce(sdata, tid);
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// A float sum of squares with the last warp's steps inline.
__global__ void sum_squares(const float *x, float *partial, int n)
{
    __shared__ float cache[BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    float v = i < n ? x[i] : 0.0f;
    cache[tid] = v * v;
    __syncthreads();
    for (int s = BLOCK / 2; s > 32; s /= 2) {
        if (tid < s) {
            cache[tid] += cache[tid + s];
        }
        __syncthreads();
    }
    if (tid < 32) {
        volatile float *smem = cache;
        smem[tid] += smem[tid + 32];
        smem[tid] += smem[tid + 16];
        smem[tid] += smem[tid + 8];
        smem[tid] += smem[tid + 4];
        smem[tid] += smem[tid + 2];
        smem[tid] += smem[tid + 1];
    }
    if (tid == 0)
        partial[blockIdx.x] = cache[0];
}

int main()
{
    const unsigned int n = 1 << 20;
    int *in, *out;
    float *x, *partial;
    cudaMalloc(&in, n * sizeof(int));
    cudaMalloc(&out, n / (2 * BLOCK) * sizeof(int));
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&partial, n / BLOCK * sizeof(float));
    reduce4<<<n / (2 * BLOCK), BLOCK>>>(in, out, n);
    sum_squares<<<n / BLOCK, BLOCK>>>(x, partial, n);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
