// local_copy_loops.cu -- grid-stride loops whose bound is a local copy of n
// (homework 3: "pairwise sums" over groups of 4 floats)
// y[i] = x[4i] + x[4i+1] for every full group of four
#include <cstdio>

#define THREADS 128

// copy n into m first, then loop to m/4
__global__ void pair_sums_copy(const float *x, float *y, int n)
{
	int m = n;	// number of floats
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m / 4; i += blockDim.x * gridDim.x)
		y[i] = x[4*i] + x[4*i+1];
}

// same with a const copy
__global__ void pair_sums_const(const float *x, float *y, int n)
{
	const int len = n;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < len / 4; i += blockDim.x * gridDim.x) {
		y[i] = x[4*i] + x[4*i+1];
	}
}

// number of groups computed up front
__global__ void pair_sums_groups(const float *x, float *y, int n)
{
	int q = n / 4;
	int stride = blockDim.x * gridDim.x;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < q; i += stride)
		y[i] = x[4*i] + x[4*i+1];
}

// groups by shifting, then a copy of the copy
__global__ void pair_sums_shift(const float *x, float *y, int n)
{
	int groups = n >> 2;
	int last = groups;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < last; i += blockDim.x * gridDim.x)
		y[i] = x[4*i] + x[4*i+1];
}

int main()
{
	int n = 1000;
	float *x, *y;
	cudaMalloc(&x, n * sizeof(float));
	cudaMalloc(&y, n / 4 * sizeof(float));
	cudaMemset(x, 0, n * sizeof(float));
	int blocks = (n / 4 + THREADS - 1) / THREADS;
	pair_sums_copy<<<blocks, THREADS>>>(x, y, n);
	pair_sums_const<<<blocks, THREADS>>>(x, y, n);
	pair_sums_groups<<<blocks, THREADS>>>(x, y, n);
	pair_sums_shift<<<blocks, THREADS>>>(x, y, n);
	cudaDeviceSynchronize();
	printf("done\n");
	cudaFree(x);
	cudaFree(y);
	return 0;
}
