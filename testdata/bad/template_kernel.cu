// template_kernel: a templated __global__ kernel (unsupported by copper:
// templates are not allowed in kernels) next to an ordinary kernel that
// copper must still read. Written for copper. Expected: one `unsupported`
// diagnostic for scale_t, and scale_float parsed normally.

#include <cstdio>
#include <cuda_runtime.h>

template <typename T>
__global__ void scale_t(T *data, T factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        data[i] = data[i] * factor;
    }
}

__global__ void scale_float(float *data, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        data[i] = data[i] * factor;
    }
}

int main() {
    const int n = 1024;
    float *d = nullptr;
    cudaMalloc(&d, n * sizeof(float));
    cudaMemset(d, 0, n * sizeof(float));
    scale_t<float><<<4, 256>>>(d, 2.0f, n);
    scale_float<<<4, 256>>>(d, 0.5f, n);
    cudaDeviceSynchronize();
    cudaFree(d);
    std::printf("done\n");
    return 0;
}
