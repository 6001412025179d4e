// reduce1: block-wise sum, interleaved addressing with a strided index (the
// second step of the SDK "reduction" sequence, reduce1 in Muller & Hoffmann,
// Table 1). Written for copper. The active threads are now contiguous (no
// divergence inside most warps), but `index = 2 * s * tid` makes shared
// memory accesses strided: 2-way, 4-way, ... bank conflicts.
// blockDim.x must be 256 (the size of sdata) and a power of two.

#define BLOCK_SIZE 256

__global__ void reduce1(int *g_idata, int *g_odata, int n) {
    __shared__ int sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? g_idata[i] : 0;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        unsigned int index = 2 * s * tid;
        if (index < blockDim.x) {
            sdata[index] += sdata[index + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        g_odata[blockIdx.x] = sdata[0];
    }
}
