// Lab 2: scale a vector. I copy to shared memory first because the lecture
// said shared memory is faster.
#include <cstdio>

#define N_THREADS 256

__global__ void scaleShared(const float *in, float *out, float alpha, int n)
{
	__shared__ float cache[N_THREADS];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	cache[threadIdx.x] = (i < n) ? in[i] : 0.0f;	// load into shared
	__syncthreads();
	if (i < n)
		out[i] = alpha * cache[threadIdx.x];
}

int main()
{
	int n = 1000;
	float *in, *out;
	cudaMalloc(&in, n * sizeof(float));
	cudaMalloc(&out, n * sizeof(float));
	scaleShared<<<(n + N_THREADS - 1) / N_THREADS, N_THREADS>>>(in, out, 2.0f, n);
	cudaDeviceSynchronize();
	return 0;
}
