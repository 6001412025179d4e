// 1-D convolution with a 7-tap filter, edges repeat the border value
// (clamp to edge, like GL_CLAMP_TO_EDGE)

#include <cstdio>

#define R 3
#define N 1000

__global__ void conv_clamp(const float *x, const float *w, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;

	float s = 0.0f;
	for (int k = -R; k <= R; k++) {
		int j = i + k;
		if (j < 0) j = 0;            // left edge
		if (j >= n) j = n - 1;       // right edge
		s += w[k + R] * x[j];
	}
	y[i] = s;
}

int main()
{
	float *x, *w, *y;
	cudaMalloc(&x, N * sizeof(float));
	cudaMalloc(&w, (2 * R + 1) * sizeof(float));
	cudaMalloc(&y, N * sizeof(float));
	dim3 block(256);
	dim3 grid((N + block.x - 1) / block.x);
	conv_clamp<<<grid, block>>>(x, w, y, N);
	cudaDeviceSynchronize();
	printf("done\n");
	return 0;
}
