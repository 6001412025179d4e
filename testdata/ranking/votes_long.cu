// Lab 3: count the votes of each district. Each row of `votes` is one
// district, one column per polling station (2000 stations per district
// in the national data set).
#include <stdio.h>
#include <stdlib.h>

#define STATIONS 2000

__global__ void countVotes(const int *votes, int *total, int districts, int stations)
{
	int d = blockIdx.x * blockDim.x + threadIdx.x;
	if (d < districts) {
		int sum = 0;
		// add up the stations of district d
		for (int s = 0; s < stations; s++)
			sum += votes[d * stations + s];
		total[d] = sum;
	}
}

int main(void)
{
	int districts = 3000;
	int *h_votes = (int *)malloc(districts * STATIONS * sizeof(int));
	int *h_total = (int *)malloc(districts * sizeof(int));
	for (int i = 0; i < districts * STATIONS; i++)
		h_votes[i] = rand() % 500;

	int *d_votes, *d_total;
	cudaMalloc((void **)&d_votes, districts * STATIONS * sizeof(int));
	cudaMalloc((void **)&d_total, districts * sizeof(int));
	cudaMemcpy(d_votes, h_votes, districts * STATIONS * sizeof(int), cudaMemcpyHostToDevice);

	dim3 block(128);
	dim3 grid((districts + 127) / 128);
	countVotes<<<grid, block>>>(d_votes, d_total, districts, STATIONS);

	cudaMemcpy(h_total, d_total, districts * sizeof(int), cudaMemcpyDeviceToHost);
	printf("district 0: %d votes (%d blocks)\n", h_total[0], grid.x);
	cudaFree(d_votes); cudaFree(d_total);
	free(h_votes); free(h_total);
	return 0;
}
