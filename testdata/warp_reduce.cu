// A warp-shuffle sum reduction as CUDA samples and courses write it: each
// thread sums a grid-stride slice, the warp reduces with __shfl_down_sync,
// lane 0 adds the warp's sum to the result.
#include <cuda_runtime.h>

#define FULL_MASK 0xffffffff

__inline__ __device__ float warp_reduce_sum(float val) {
    for (int offset = 16; offset > 0; offset /= 2) {
        val += __shfl_down_sync(FULL_MASK, val, offset);
    }
    return val;
}

__global__ void reduce_warp(const float *in, float *out, int n) {
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        sum += in[i];
    }
    sum = warp_reduce_sum(sum);
    if ((threadIdx.x & (warpSize - 1)) == 0) {
        atomicAdd(out, sum);
    }
}

// Counts the positive values per warp with a ballot, and marks warps in
// which any or all lanes saw a positive value.
__global__ void vote_counts(const int *v, int *count, int *any_pos, int *all_pos, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int x = i < n ? v[i] : 0;
    unsigned int ballot = __ballot_sync(FULL_MASK, x > 0);
    int any = __any_sync(FULL_MASK, x > 0);
    int all = __all_sync(FULL_MASK, x > 0);
    int warp = i / 32;
    if (threadIdx.x % 32 == 0 && i < n) {
        count[warp] = __popc(ballot);
        any_pos[warp] = any;
        all_pos[warp] = all;
    }
}

// Broadcast and butterfly exchange within segments of 16 lanes.
__global__ void segment_exchange(const int *in, int *first, int *swapped, int *prefix) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int x = in[i];
    first[i] = __shfl_sync(FULL_MASK, x, 0, 16);
    swapped[i] = __shfl_xor_sync(FULL_MASK, x, 1, 16);
    int p = x;
    for (int d = 1; d < 16; d *= 2) {
        int y = __shfl_up_sync(FULL_MASK, p, d, 16);
        if ((threadIdx.x & 15) >= d) {
            p += y;
        }
    }
    prefix[i] = p;
}
