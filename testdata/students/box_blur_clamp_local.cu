// box blur 5x5 on a grayscale image
// edge pixels: clamp the neighbour coords to the image (replicate border)

#include <cstdio>
#include <cuda_runtime.h>

#define R 2

__global__ void blurClamp(const float *in, float *out, int w, int h)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x >= w || y >= h) return;

	float s = 0.0f;
	for (int dy = -R; dy <= R; dy++) {
		for (int dx = -R; dx <= R; dx++) {
			int xx = x + dx;
			xx = xx < 0 ? 0 : (xx > w - 1 ? w - 1 : xx);	// clamp col
			int yy = y + dy;
			if (yy < 0) yy = 0;		// clamp row
			if (yy >= h) yy = h - 1;
			s += in[yy * w + xx];
		}
	}
	out[y * w + x] = s / ((2 * R + 1) * (2 * R + 1));
}

int main()
{
	int w = 200, h = 75;
	float *d_in, *d_out;
	cudaMalloc(&d_in, w * h * sizeof(float));
	cudaMalloc(&d_out, w * h * sizeof(float));
	cudaMemset(d_in, 0, w * h * sizeof(float));

	dim3 block(16, 16);
	dim3 grid((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
	blurClamp<<<grid, block>>>(d_in, d_out, w, h);
	cudaDeviceSynchronize();

	cudaFree(d_in);
	cudaFree(d_out);
	return 0;
}
