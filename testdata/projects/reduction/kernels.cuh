// kernels.cuh - lab 4, block sums
// (kept in a header so main.cu stays short)
#ifndef KERNELS_CUH
#define KERNELS_CUH

#define BLOCK_SIZE 256

// each block sums its part of in[] into out[blockIdx.x]
// blockDim.x has to be BLOCK_SIZE (a power of two)
__global__ void blockSum(int *in, int *out, int n) {
	__shared__ int sdata[BLOCK_SIZE];
	unsigned int tid = threadIdx.x;
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
	sdata[tid] = (i < n) ? in[i] : 0;
	__syncthreads();
	for (unsigned int s = 1; s < blockDim.x; s *= 2) {
		if (tid % (2 * s) == 0) {
			sdata[tid] += sdata[tid + s];
		}
		__syncthreads();
	}
	if (tid == 0) out[blockIdx.x] = sdata[0];
}

#endif
