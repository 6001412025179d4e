// reduce6 from the reduction slides: each thread adds two elements per
// grid-stride step, then the block folds its shared array.
#include <cstdio>
#include <cuda_runtime.h>

#define N (1 << 20)

template <unsigned int blockSize>
__device__ void warpReduce(volatile int *sdata, unsigned int tid) {
	if (blockSize >= 64) sdata[tid] += sdata[tid + 32];
	if (blockSize >= 32) sdata[tid] += sdata[tid + 16];
	if (blockSize >= 16) sdata[tid] += sdata[tid + 8];
	if (blockSize >= 8) sdata[tid] += sdata[tid + 4];
	if (blockSize >= 4) sdata[tid] += sdata[tid + 2];
	if (blockSize >= 2) sdata[tid] += sdata[tid + 1];
}

template <unsigned int blockSize>
__global__ void reduce6(int *g_idata, int *g_odata, unsigned int n) {
	extern __shared__ int sdata[];
	unsigned int tid = threadIdx.x;
	unsigned int i = blockIdx.x * (blockSize * 2) + tid;
	unsigned int gridSize = blockSize * 2 * gridDim.x;
	sdata[tid] = 0;
	// every thread adds pairs until it runs off the end
	while (i < n) {
		sdata[tid] += g_idata[i] + g_idata[i + blockSize];
		i += gridSize;
	}
	__syncthreads();
	if (blockSize >= 512) { if (tid < 256) { sdata[tid] += sdata[tid + 256]; } __syncthreads(); }
	if (blockSize >= 256) { if (tid < 128) { sdata[tid] += sdata[tid + 128]; } __syncthreads(); }
	if (blockSize >= 128) { if (tid < 64) { sdata[tid] += sdata[tid + 64]; } __syncthreads(); }
	if (tid < 32) warpReduce<blockSize>(sdata, tid);
	if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

void launch(int threads, int blocks, int *d_in, int *d_out, unsigned int n) {
	int smem = threads * sizeof(int);
	switch (threads) {
	case 512:
		reduce6<512><<<blocks, 512, smem>>>(d_in, d_out, n); break;
	case 256:
		reduce6<256><<<blocks, 256, smem>>>(d_in, d_out, n); break;
	case 128:
		reduce6<128><<<blocks, 128, smem>>>(d_in, d_out, n); break;
	}
}

int main() {
	int *d_in, *d_out;
	cudaMalloc(&d_in, N * sizeof(int));
	cudaMalloc(&d_out, 64 * sizeof(int));
	launch(256, 64, d_in, d_out, N);
	cudaDeviceSynchronize();
	cudaFree(d_in);
	cudaFree(d_out);
	return 0;
}
