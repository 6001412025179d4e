// main.cu - lab 5: sums of 1..N as int and as unsigned, on the GPU
// nvcc -o sums main.cu
#include <cstdio>
#include "reduce.cuh"

#define N 4096

int main() {
	int *d_in, *d_out;
	unsigned int *u_in, *u_out;
	cudaMalloc(&d_in, N * sizeof(int));
	cudaMalloc(&d_out, (N / THREADS) * sizeof(int));
	cudaMalloc(&u_in, N * sizeof(unsigned int));
	cudaMalloc(&u_out, (N / THREADS) * sizeof(unsigned int));
	blockSumT<int><<<N / THREADS, THREADS>>>(d_in, d_out, N);
	blockSumT<unsigned int><<<N / THREADS, THREADS>>>(u_in, u_out, N);
	cudaDeviceSynchronize();
	printf("done\n");
	cudaFree(d_in);
	cudaFree(d_out);
	cudaFree(u_in);
	cudaFree(u_out);
	return 0;
}
