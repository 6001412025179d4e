// reduce3: block-wise sum with the first addition done during the global
// load (the fourth step of the SDK "reduction" sequence, reduce3 in Muller &
// Hoffmann, Table 1). Written for copper. Each block reads 2 * blockDim.x
// elements, so half as many blocks are needed as for reduce2.
// blockDim.x must be 256 (the size of sdata) and a power of two.

#define BLOCK_SIZE 256

__global__ void reduce3(int *g_idata, int *g_odata, int n) {
    __shared__ int sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    int mySum = i < n ? g_idata[i] : 0;
    if (i + blockDim.x < n) {
        mySum += g_idata[i + blockDim.x];
    }
    sdata[tid] = mySum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] = mySum = mySum + sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        g_odata[blockIdx.x] = mySum;
    }
}
