// reduce5: first add during load, loop unrolled completely,
// last warp done inline without __syncthreads (volatile!),
// its 32 threads are always there so no ifs needed
#define BLOCK_SIZE 256

__global__ void reduce5(float *g_idata, float *g_odata, unsigned int n)
{
    __shared__ float sdata[BLOCK_SIZE];

    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (BLOCK_SIZE * 2) + threadIdx.x;

    float mySum = (i < n) ? g_idata[i] : 0.0f;
    if (i + BLOCK_SIZE < n)
        mySum += g_idata[i + BLOCK_SIZE];
    sdata[tid] = mySum;
    __syncthreads();

    if (BLOCK_SIZE >= 512) { if (tid < 256) { sdata[tid] += sdata[tid + 256]; } __syncthreads(); }
    if (BLOCK_SIZE >= 256) { if (tid < 128) { sdata[tid] += sdata[tid + 128]; } __syncthreads(); }
    if (BLOCK_SIZE >= 128) { if (tid < 64) { sdata[tid] += sdata[tid + 64]; } __syncthreads(); }

    if (tid < 32) {
        volatile float *smem = sdata;
        smem[tid] += smem[tid + 32];
        smem[tid] += smem[tid + 16];
        smem[tid] += smem[tid + 8];
        smem[tid] += smem[tid + 4];
        smem[tid] += smem[tid + 2];
        smem[tid] += smem[tid + 1];
    }

    // thread 0 writes this block's result
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
