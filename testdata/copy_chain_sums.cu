// copy_chain_sums.cu -- lab 4: per-thread partial sums through a helper
// the helper copies its length before looping (old habit from the CPU version)
#include <cstdio>

#define BLOCK 128

// strided partial sum of a[0..len) for this thread
__device__ float partial(const float *a, int len)
{
	float acc = 0.0f;
	int m = len;	// local copy
	for (int c = threadIdx.x; c < m; c += blockDim.x)
		acc += a[c];
	return acc;
}

// same, but only over whole groups of 4
__device__ float partial_groups(const float *a, int len)
{
	float acc = 0.0f;
	int m = len;
	int groups = m / 4;
	for (int g = threadIdx.x; g < groups; g += blockDim.x)
		acc += a[4*g] + a[4*g+3];
	return acc;
}

// n is copied twice before it gets to the helper
__global__ void chain_sum(const float *a, float *out, int n)
{
	int count = n;
	int total = count;
	out[blockIdx.x * blockDim.x + threadIdx.x] = partial(a, total);
}

__global__ void chain_sum_groups(const float *a, float *out, int n)
{
	int count = n;
	int total = count;
	out[blockIdx.x * blockDim.x + threadIdx.x] = partial_groups(a, total);
}

int main()
{
	int n = 4096;
	float *a, *out;
	cudaMalloc(&a, n * sizeof(float));
	cudaMalloc(&out, 2 * BLOCK * sizeof(float));
	cudaMemset(a, 0, n * sizeof(float));
	dim3 block(BLOCK);
	dim3 grid(2);
	chain_sum<<<grid, block>>>(a, out, n);
	chain_sum_groups<<<grid, block>>>(a, out, n);
	cudaDeviceSynchronize();
	printf("done\n");
	cudaFree(a);
	cudaFree(out);
	return 0;
}
