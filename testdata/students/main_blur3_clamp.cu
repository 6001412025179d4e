// 3x3 box blur, borders handled by clamping (edge pixels repeated)
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

#define BW 16
#define BH 16

__global__ void blurClamp(const float *img, float *res, int w, int h)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x >= w || y >= h)
		return;

	// neighbour coordinates, clamped into the image
	int xl = max(x - 1, 0);
	int xr = min(x + 1, w - 1);
	int yu = max(y - 1, 0);
	int yd = min(y + 1, h - 1);

	float sum = img[yu * w + xl] + img[yu * w + x] + img[yu * w + xr];
	sum += img[y * w + xl] + img[y * w + x] + img[y * w + xr];
	sum += img[yd * w + xl] + img[yd * w + x] + img[yd * w + xr];
	res[y * w + x] = sum / 9.0f;
}

int main()
{
	int w = 100, h = 37;	// not a multiple of the block
	size_t bytes = w * h * sizeof(float);
	float *h_img = (float *)malloc(bytes);
	float *h_res = (float *)malloc(bytes);
	for (int i = 0; i < w * h; i++)
		h_img[i] = (float)(i % 17);

	float *d_img, *d_res;
	cudaMalloc(&d_img, bytes);
	cudaMalloc(&d_res, bytes);
	cudaMemcpy(d_img, h_img, bytes, cudaMemcpyHostToDevice);

	dim3 block(BW, BH);
	dim3 grid((w + BW - 1) / BW, (h + BH - 1) / BH);
	blurClamp<<<grid, block>>>(d_img, d_res, w, h);
	cudaMemcpy(h_res, d_res, bytes, cudaMemcpyDeviceToHost);

	printf("%f %f\n", h_res[0], h_res[w * h - 1]);
	cudaFree(d_img);
	cudaFree(d_res);
	free(h_img);
	free(h_res);
	return 0;
}
