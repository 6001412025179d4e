// Lab 3: sum of an array, each block reduces its own part in place
// (the while version from the lecture slides). The partial sums stay
// in d_data, block b's total ends up in d_data[b * BLOCK_SIZE].
#include <stdio.h>
#include <stdlib.h>

#define BLOCK_SIZE 512

__global__ void sumWhile(float *d_data, float *d_sums)
{
	unsigned int tid = threadIdx.x;
	unsigned int i = blockIdx.x * blockDim.x + tid;

	int stride = blockDim.x / 2;	// half the block first
	while (stride > 0) {
		if (tid < stride)
			d_data[i] += d_data[i + stride];
		__syncthreads();	// wait for the whole level
		stride /= 2;
	}

	/* thread 0 writes the block result */
	if (tid == 0)
		d_sums[blockIdx.x] = d_data[i];
}

int main(void)
{
	int numBlocks = 64;
	int n = numBlocks * BLOCK_SIZE;
	float *h_data = (float *)malloc(n * sizeof(float));
	float *h_sums = (float *)malloc(numBlocks * sizeof(float));
	for (int k = 0; k < n; k++)
		h_data[k] = 1.0f;

	float *d_data, *d_sums;
	cudaMalloc((void **)&d_data, n * sizeof(float));
	cudaMalloc((void **)&d_sums, numBlocks * sizeof(float));
	cudaMemcpy(d_data, h_data, n * sizeof(float), cudaMemcpyHostToDevice);

	dim3 grid(numBlocks);
	dim3 block(BLOCK_SIZE);
	sumWhile<<<grid, block>>>(d_data, d_sums);

	cudaMemcpy(h_sums, d_sums, numBlocks * sizeof(float), cudaMemcpyDeviceToHost);
	float total = 0;
	for (int b = 0; b < numBlocks; b++)
		total += h_sums[b];
	printf("total = %f (expected %d)\n", total, n);

	cudaFree(d_data); cudaFree(d_sums);
	free(h_data); free(h_sums);
	return 0;
}
