// heat equation, explicit step on a 2-D plate (9-point stencil)
// the plate width is copied into W so the index lines stay short
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

#define BX 16
#define BY 16

__global__ void heat_step(const float *T, float *Tnew, int width, int height, float alpha)
{
	const int W = width;	// row length
	int col = blockIdx.x * blockDim.x + threadIdx.x;
	int row = blockIdx.y * blockDim.y + threadIdx.y;

	// skip the border, it is held at a fixed temperature
	if (col > 0 && col < W - 1 && row > 0 && row < height - 1) {
		float c = T[row * W + col];
		float edges = T[(row - 1) * W + col] + T[(row + 1) * W + col]
		            + T[row * W + col - 1] + T[row * W + col + 1];
		float corners = T[(row - 1) * W + col - 1] + T[(row - 1) * W + col + 1]
		              + T[(row + 1) * W + col - 1] + T[(row + 1) * W + col + 1];
		Tnew[row * W + col] = c + alpha * (4.0f * edges + corners - 20.0f * c) / 6.0f;
	}
}

int main()
{
	int width = 1024, height = 768;
	size_t bytes = (size_t)width * height * sizeof(float);
	float *h = (float *)malloc(bytes);
	for (int i = 0; i < width * height; i++)
		h[i] = (i % width == 0) ? 100.0f : 0.0f;

	float *d_T, *d_Tnew;
	cudaMalloc(&d_T, bytes);
	cudaMalloc(&d_Tnew, bytes);
	cudaMemcpy(d_T, h, bytes, cudaMemcpyHostToDevice);
	cudaMemcpy(d_Tnew, h, bytes, cudaMemcpyHostToDevice);

	dim3 block(BX, BY);
	dim3 grid((width + BX - 1) / BX, (height + BY - 1) / BY);
	for (int it = 0; it < 100; it++) {
		heat_step<<<grid, block>>>(d_T, d_Tnew, width, height, 0.1f);
		float *tmp = d_T; d_T = d_Tnew; d_Tnew = tmp;
	}

	cudaMemcpy(h, d_T, bytes, cudaMemcpyDeviceToHost);
	printf("T[1][1] = %f\n", h[width + 1]);
	cudaFree(d_T); cudaFree(d_Tnew);
	free(h);
	return 0;
}
