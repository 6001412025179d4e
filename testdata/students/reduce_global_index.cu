// Block maxima computed in place in global memory, indexing the input
// directly: each block halves its part of `data` until its first
// element holds the block's maximum.
__global__ void blockMax(float *data, float *maxima, int n) {
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (tid < stride) {
            data[i] = fmaxf(data[i], data[i + stride]);
        }
        __syncthreads();
    }
    if (tid == 0) {
        maxima[blockIdx.x] = data[i];
    }
}
