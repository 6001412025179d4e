// extern_shared: reverses each block's segment of an array through
// dynamically sized shared memory (`extern __shared__ float buf[];`, sized
// by the third launch argument, declared inside the kernel). Written for
// copper (extern_shared_global.cu declares it at file scope instead). The write and the
// reversed read are both conflict-free (consecutive threads, consecutive
// words, in opposite order).

#include <cstdio>
#include <cuda_runtime.h>

__global__ void extern_shared(float *in, float *out, int n) {
    extern __shared__ float buf[];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    buf[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    int r = blockDim.x - 1 - t;
    int o = blockIdx.x * blockDim.x + r;
    if (o < n) {
        out[o] = buf[t];
    }
}

int main() {
    const int n = 1024;
    const int threads = 256;
    float *in = nullptr;
    float *out = nullptr;
    cudaMallocManaged(&in, n * sizeof(float));
    cudaMallocManaged(&out, n * sizeof(float));
    for (int i = 0; i < n; i++) {
        in[i] = static_cast<float>(i);
    }
    extern_shared<<<4, 256, 256 * sizeof(float)>>>(in, out, n);
    cudaDeviceSynchronize();
    std::printf("out[0] = %f (expected %d)\n", out[0], threads - 1);
    cudaFree(in);
    cudaFree(out);
    return 0;
}
