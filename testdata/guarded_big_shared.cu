// Each block sums its 7680 floats (30 KiB) staged in shared memory; the
// file has no launch, so a rewrite runs under a test of the block copper
// assumes and the original code takes every other block. Both sides use
// the one staging array: declared in each it would take 60 KiB and the
// kernel would not build.
#define N 7680

__global__ void sum_big(const float *in, float *out)
{
	__shared__ float sdata[N];
	unsigned int tid = threadIdx.x;
	for (int k = tid; k < N; k += blockDim.x)
		sdata[k] = in[blockIdx.x * N + k];
	__syncthreads();
	for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (tid < s)
			sdata[tid] += sdata[tid + s];
		__syncthreads();
	}
	if (tid == 0)
		out[blockIdx.x] = sdata[0];
}
