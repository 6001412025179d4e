// 5x5 mean filter on a grayscale image + host code.
// pixels outside the image are skipped (divide by how many we used)
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

__global__ void mean5(const float *img, float *out, int w, int h)
{
	const int R = 2;
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x >= w || y >= h) return;

	float s = 0;
	int cnt = 0;
	for (int dy = -R; dy <= R; dy++)
		for (int dx = -R; dx <= R; dx++) {
			int yy = y + dy, xx = x + dx;
			if (yy >= 0 && yy < h && xx >= 0 && xx < w) {
				s += img[yy * w + xx];
				cnt++;
			}
		}
	out[y * w + x] = s / cnt;
}

int main()
{
	int w = 1000, h = 700;
	size_t bytes = w * h * sizeof(float);
	float *h_img = (float *)malloc(bytes);
	float *h_out = (float *)malloc(bytes);
	for (int i = 0; i < w * h; i++)
		h_img[i] = (float)(i % 255);

	float *d_img, *d_out;
	cudaMalloc(&d_img, bytes);
	cudaMalloc(&d_out, bytes);
	cudaMemcpy(d_img, h_img, bytes, cudaMemcpyHostToDevice);

	dim3 block(16, 16);
	dim3 grid((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
	mean5<<<grid, block>>>(d_img, d_out, w, h);
	cudaDeviceSynchronize();

	cudaMemcpy(h_out, d_out, bytes, cudaMemcpyDeviceToHost);
	printf("out[0]=%f out[last]=%f\n", h_out[0], h_out[w * h - 1]);
	cudaFree(d_img);
	cudaFree(d_out);
	free(h_img);
	free(h_out);
	return 0;
}
