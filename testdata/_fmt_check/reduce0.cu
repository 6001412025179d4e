// reduce0: block-wise sum, interleaved addressing with a modulo test (the
// first step of the CUDA SDK "reduction" sequence, reduce0 in Muller &
// Hoffmann, Table 1). Written for copper. `tid % (2 * s)` makes the active
// threads sparse, so almost every warp diverges at every step.
// blockDim.x must be 256 (the size of sdata) and a power of two.

#define BLOCK_SIZE 256

__global__ void reduce0(int *g_idata, int *g_odata, int n) {
    __shared__ int sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? g_idata[i] : 0;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        g_odata[blockIdx.x] = sdata[0];
    }
}
