// block sum: tree in shared memory down to one warp, then the warp
// finishes on its own (no __syncthreads needed inside a warp)
#include <cstdio>

#define THREADS 256
#define WARP 32

__global__ void block_sum(const int *in, int *out, int n)
{
	__shared__ int sdata[THREADS];
	unsigned int tid = threadIdx.x;
	unsigned int i = blockIdx.x * blockDim.x + tid;

	sdata[tid] = (i < n) ? in[i] : 0;
	__syncthreads();

	// halve until only a warp is left
	for (unsigned int s = blockDim.x / 2; s > WARP; s >>= 1) {
		if (tid < s)
			sdata[tid] += sdata[tid + s];
		__syncthreads();
	}

	if (tid < WARP) {
		volatile int *v = sdata;
		v[tid] += v[tid + 32];
		v[tid] += v[tid + 16];
		v[tid] += v[tid + 8];
		v[tid] += v[tid + 4];
		v[tid] += v[tid + 2];
		v[tid] += v[tid + 1];
	}

	if (tid == 0)
		out[blockIdx.x] = sdata[0];
}
