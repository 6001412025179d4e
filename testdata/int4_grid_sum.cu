// int4_grid_sum.cu  -- vectorized reduction, like the CUDA blog's
// "vectorized memory access" trick: read 4 ints at a time with int4
// loads in a grid-stride loop, then the leftovers (n % 4) one by one.
#include <cstdio>
#include <cuda_runtime.h>

__device__ int thread_sum(const int *in, int n)
{
	int sum = 0;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n / 4; i += blockDim.x * gridDim.x) {
		int4 v = reinterpret_cast<const int4 *>(in)[i];
		sum += v.x + v.y + v.z + v.w;
	}
	// tail: the last n % 4 elements, taken by the first threads
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	if (t < n % 4)
		sum += in[n - 1 - t];
	return sum;
}

__global__ void device_reduce_vec4(const int *in, int *out, int n)
{
	int sum = thread_sum(in, n);
	atomicAdd(out, sum);
}

int main(void)
{
	const int n = 1 << 12;
	int *in, *out;
	cudaMalloc(&in, n * sizeof(int));
	cudaMalloc(&out, sizeof(int));
	cudaMemset(in, 0, n * sizeof(int));
	cudaMemset(out, 0, sizeof(int));
	dim3 block(256);
	dim3 grid(8);
	device_reduce_vec4<<<grid, block>>>(in, out, n);
	int h = 0;
	cudaMemcpy(&h, out, sizeof(int), cudaMemcpyDeviceToHost);
	printf("sum = %d\n", h);
	cudaFree(in);
	cudaFree(out);
	return 0;
}
