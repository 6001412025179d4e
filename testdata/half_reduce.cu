// Block sums of __half data in a __shared__ __half tile (two halves share a
// 4-byte bank word), the tree in half arithmetic with __hadd; the block's
// sum is stored, and also added to a global total with atomicAdd on
// __half. A second kernel reduces pairs in a __shared__ __half2 tile.
#include <cuda_fp16.h>

#define BLOCK 256

__global__ void half_reduce(const __half *__restrict__ in, __half *__restrict__ block_sums,
                            __half *total, int n) {
    __shared__ __half tile[BLOCK];
    const int tid = threadIdx.x;
    const int i = blockIdx.x * BLOCK + tid;
    tile[tid] = i < n ? in[i] : __float2half(0.0f);
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) tile[tid] = __hadd(tile[tid], tile[tid + s]);
        __syncthreads();
    }
    if (tid == 0) {
        block_sums[blockIdx.x] = tile[0];
        atomicAdd(total, tile[0]);
    }
}

__global__ void half2_reduce(const __half2 *__restrict__ in, float *__restrict__ block_sums,
                             int pairs) {
    __shared__ __half2 tile[BLOCK];
    const int tid = threadIdx.x;
    const int i = blockIdx.x * BLOCK + tid;
    tile[tid] = i < pairs ? in[i] : __float2half2_rn(0.0f);
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) tile[tid] = __hadd2(tile[tid], tile[tid + s]);
        __syncthreads();
    }
    if (tid == 0) block_sums[blockIdx.x] = __low2float(tile[0]) + __high2float(tile[0]);
}
