// Student matrix multiply (CS lab 3): C = A * B, A is M x K, B is K x N.
// One thread computes one element of C.
#include <stdio.h>
#include <cuda_runtime.h>

#define TILE 16

__global__ void matMulKernel(const float *A, const float *B, float *C, int M, int N, int K)
{
	// which element of C this thread computes
	int row = blockIdx.y * TILE + threadIdx.y;
	int col = blockIdx.x * TILE + threadIdx.x;

	if (row < M && col < N) {
		float sum = 0;
		for (int k = 0; k < K; k++)
			sum += A[row * K + k] * B[k * N + col];	// dot product of a row and a column
		C[row * N + col] = sum;
	}
}

int main()
{
	int M = 300, N = 200, K = 250;
	float *dA, *dB, *dC;
	cudaMalloc(&dA, M * K * sizeof(float));
	cudaMalloc(&dB, K * N * sizeof(float));
	cudaMalloc(&dC, M * N * sizeof(float));
	dim3 block(TILE, TILE);
	dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
	matMulKernel<<<grid, block>>>(dA, dB, dC, M, N, K);
	cudaDeviceSynchronize();
	printf("done\n");
	cudaFree(dA); cudaFree(dB); cudaFree(dC);
	return 0;
}
