// reduce6 copied from the reduction slides, launched the way the samples
// do it: a switch over every block size from 512 down to 1, each case its
// own instantiation (blocks under a warp skip the tail's first steps).
#include <cstdio>
#include <cuda_runtime.h>

#define N (1 << 22)
#define MAX_THREADS 512

template <unsigned int blockSize>
__device__ void warpReduce(volatile float *sdata, unsigned int tid) {
	if (blockSize >= 64) sdata[tid] += sdata[tid + 32];
	if (blockSize >= 32) sdata[tid] += sdata[tid + 16];
	if (blockSize >= 16) sdata[tid] += sdata[tid + 8];
	if (blockSize >= 8) sdata[tid] += sdata[tid + 4];
	if (blockSize >= 4) sdata[tid] += sdata[tid + 2];
	if (blockSize >= 2) sdata[tid] += sdata[tid + 1];
}

template <unsigned int blockSize>
__global__ void reduce6(float *g_idata, float *g_odata, unsigned int n) {
	extern __shared__ float sdata[];
	unsigned int tid = threadIdx.x;
	unsigned int i = blockIdx.x * (blockSize * 2) + tid;
	unsigned int gridSize = blockSize * 2 * gridDim.x;
	sdata[tid] = 0;
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

// the samples give a block of 32 twice its shared memory: its last warp
// reads sdata[tid + 16] for tid up to 31
void reduce(int threads, int blocks, float *d_idata, float *d_odata, unsigned int n) {
	int smemSize = (threads <= 32) ? 2 * threads * sizeof(float) : threads * sizeof(float);
	switch (threads) {
	case 512:
		reduce6<512><<<blocks, 512, smemSize>>>(d_idata, d_odata, n); break;
	case 256:
		reduce6<256><<<blocks, 256, smemSize>>>(d_idata, d_odata, n); break;
	case 128:
		reduce6<128><<<blocks, 128, smemSize>>>(d_idata, d_odata, n); break;
	case 64:
		reduce6<64><<<blocks, 64, smemSize>>>(d_idata, d_odata, n); break;
	case 32:
		reduce6<32><<<blocks, 32, smemSize>>>(d_idata, d_odata, n); break;
	case 16:
		reduce6<16><<<blocks, 16, smemSize>>>(d_idata, d_odata, n); break;
	case 8:
		reduce6<8><<<blocks, 8, smemSize>>>(d_idata, d_odata, n); break;
	case 4:
		reduce6<4><<<blocks, 4, smemSize>>>(d_idata, d_odata, n); break;
	case 2:
		reduce6<2><<<blocks, 2, smemSize>>>(d_idata, d_odata, n); break;
	case 1:
		reduce6<1><<<blocks, 1, smemSize>>>(d_idata, d_odata, n); break;
	}
}

int main() {
	float *d_in, *d_out;
	cudaMalloc(&d_in, N * sizeof(float));
	cudaMalloc(&d_out, 64 * sizeof(float));
	reduce(MAX_THREADS, 64, d_in, d_out, N);
	cudaDeviceSynchronize();
	cudaFree(d_in);
	cudaFree(d_out);
	return 0;
}
