// reduce2: block-wise sum with sequential addressing (the third step of the
// SDK "reduction" sequence, reduce2 in Muller & Hoffmann, Table 1). Written
// for copper. The stride halves each step, so the active threads and the
// shared accesses are contiguous: no bank conflicts, and divergence only in
// the last warp's steps. The `s >>= 1` loop is the index pattern that
// RaCUDA needed refactored (reduce2a) to bound.
// blockDim.x must be 256 (the size of sdata) and a power of two.

#define BLOCK_SIZE 256

__global__ void reduce2(int *g_idata, int *g_odata, int n) {
    __shared__ int sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? g_idata[i] : 0;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        g_odata[blockIdx.x] = sdata[0];
    }
}
