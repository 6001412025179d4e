// reduce_default.cu: a block sum reduction whose block size defaults to
// 256 (#ifndef BLOCK_SIZE) and may be set with -DBLOCK_SIZE=…; the
// tree's first steps are unrolled with #if on the block size, as in the
// CUDA samples' reduction kernels. Written for copper.
#include <cstdio>
#include <cuda_runtime.h>

#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif

#if BLOCK_SIZE > 1024 || BLOCK_SIZE < 64 || (BLOCK_SIZE & (BLOCK_SIZE - 1)) != 0
#error "BLOCK_SIZE must be a power of two from 64 to 1024"
#endif

__global__ void block_sum(const int *in, int *out, int n) {
    __shared__ int s[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * BLOCK_SIZE + tid;
    s[tid] = (i < n) ? in[i] : 0;
    __syncthreads();
#if BLOCK_SIZE >= 512
    if (tid < 256) {
        s[tid] += s[tid + 256];
    }
    __syncthreads();
#endif
#if BLOCK_SIZE >= 256
    if (tid < 128) {
        s[tid] += s[tid + 128];
    }
    __syncthreads();
#endif
#if BLOCK_SIZE >= 128
    if (tid < 64) {
        s[tid] += s[tid + 64];
    }
    __syncthreads();
#endif
    for (unsigned int stride = 32; stride > 0; stride >>= 1) {
        if (tid < stride) {
            s[tid] += s[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = s[0];
    }
}

int main() {
    const int n = 1000;
    int *in, *out;
    cudaMalloc(&in, n * sizeof(int));
    cudaMalloc(&out, 4 * sizeof(int));
    block_sum<<<(n + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(in, out, n);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
