// reduce.cuh - block sums for any integer type, kept in a header so both
// programs of the lab share it
#pragma once

#define THREADS 256

// each block sums its part of in[] into out[blockIdx.x]
// (blockDim.x has to be THREADS, a power of two)
template <typename T>
__global__ void blockSumT(const T *in, T *out, int n) {
	__shared__ T sdata[THREADS];
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
