// extern_shared_global: rotates each block's segment of an int array left
// by `shift` places through dynamically sized shared memory declared at
// file scope (`extern __shared__ int sbuf[];`, sized by the third launch
// argument). Written for copper; extern_shared.cu declares its buffer
// inside the kernel instead.

#include <cstdio>
#include <cuda_runtime.h>

extern __shared__ int sbuf[];

__global__ void extern_shared_global(int *in, int *out, int n, int shift) {
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    sbuf[t] = i < n ? in[i] : 0;
    __syncthreads();
    int src = (t + shift) % blockDim.x;
    if (i < n) {
        out[i] = sbuf[src];
    }
}

int main() {
    const int n = 512;
    const int threads = 128;
    int *in = nullptr;
    int *out = nullptr;
    cudaMallocManaged(&in, n * sizeof(int));
    cudaMallocManaged(&out, n * sizeof(int));
    for (int i = 0; i < n; i++) {
        in[i] = i;
    }
    extern_shared_global<<<n / threads, threads, threads * sizeof(int)>>>(in, out, n, 5);
    cudaDeviceSynchronize();
    std::printf("out[0] = %d (expected 5)\n", out[0]);
    cudaFree(in);
    cudaFree(out);
    return 0;
}
