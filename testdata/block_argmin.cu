// Block-wide arg-min: each block reduces its part of `values` to the
// smallest value and its index through a `__shared__` array of structs
// that mix a float and an int (a tree reduction over `Candidate`s), then
// one thread writes the block's winner. Written for copper.

#include <cuda_runtime.h>
#include <cfloat>

#ifndef BLOCK
#define BLOCK 128
#endif

typedef struct {
    float value;
    int index;
} Candidate;

__device__ __forceinline__ Candidate better(const Candidate &a, const Candidate &b) {
    return (b.value < a.value || (b.value == a.value && b.index < a.index)) ? b : a;
}

__global__ void block_argmin(const float *__restrict__ values, Candidate *__restrict__ winners,
                             int n) {
    __shared__ Candidate cand[BLOCK];
    unsigned int t = threadIdx.x;
    int i = blockIdx.x * BLOCK + t;
    Candidate mine;
    mine.value = i < n ? values[i] : FLT_MAX;
    mine.index = i < n ? i : -1;
    cand[t] = mine;
    __syncthreads();
    for (unsigned int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t < s) {
            cand[t] = better(cand[t], cand[t + s]);
        }
        __syncthreads();
    }
    if (t == 0) {
        winners[blockIdx.x] = cand[0];
    }
}
