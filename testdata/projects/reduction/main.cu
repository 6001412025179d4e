// main.cu - lab 4: sum of 1..N on the GPU
// nvcc -o sum main.cu
#include <cstdio>
#include "kernels.cuh"

#define N 4096

int main() {
	int *d_in, *d_out;
	int h_in[N], h_out[N / BLOCK_SIZE];
	for (int i = 0; i < N; i++) h_in[i] = i + 1;
	cudaMalloc(&d_in, N * sizeof(int));
	cudaMalloc(&d_out, (N / BLOCK_SIZE) * sizeof(int));
	cudaMemcpy(d_in, h_in, N * sizeof(int), cudaMemcpyHostToDevice);

	dim3 block(BLOCK_SIZE);
	dim3 grid(N / BLOCK_SIZE);
	blockSum<<<grid, block>>>(d_in, d_out, N);

	cudaMemcpy(h_out, d_out, sizeof(h_out), cudaMemcpyDeviceToHost);
	long total = 0;
	for (int b = 0; b < N / BLOCK_SIZE; b++) total += h_out[b];
	printf("sum = %ld\n", total);
	cudaFree(d_in);
	cudaFree(d_out);
	return 0;
}
