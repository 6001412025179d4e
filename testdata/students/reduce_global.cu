// Block sums computed in place in global memory, as in a first
// reduction exercise: each block halves its slice of `in` until
// `p[0]` holds the block's sum (the slice keeps the partial sums).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define THREADS 256

__global__ void reduceGlobal(int *in, int *out) {
    unsigned int tid = threadIdx.x;
    int *p = in + blockIdx.x * blockDim.x;
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            p[tid] += p[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = p[0];
    }
}

int main() {
    int blocks = 1024;
    int n = blocks * THREADS;
    int *h_in = (int *)malloc(n * sizeof(int));
    int *h_out = (int *)malloc(blocks * sizeof(int));
    for (int i = 0; i < n; i++) {
        h_in[i] = i % 5;
    }
    int *d_in, *d_out;
    cudaMalloc(&d_in, n * sizeof(int));
    cudaMalloc(&d_out, blocks * sizeof(int));
    cudaMemcpy(d_in, h_in, n * sizeof(int), cudaMemcpyHostToDevice);
    reduceGlobal<<<blocks, THREADS>>>(d_in, d_out);
    cudaMemcpy(h_out, d_out, blocks * sizeof(int), cudaMemcpyDeviceToHost);
    printf("out[0] = %d\n", h_out[0]);
    cudaFree(d_in);
    cudaFree(d_out);
    free(h_in);
    free(h_out);
    return 0;
}
