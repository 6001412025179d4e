// template_kernel: a variadic __global__ template (outside copper's subset:
// copper reads `typename T` and integer template parameters, not packs)
// next to an ordinary kernel that copper must still read. Written for
// copper. Expected: one `unsupported` diagnostic naming the template
// parameter of count_args, and scale_float parsed normally.

#include <cstdio>
#include <cuda_runtime.h>

template <typename... Ts>
__global__ void count_args(int *out, Ts... xs) {
    if (threadIdx.x == 0) {
        out[blockIdx.x] = static_cast<int>(sizeof...(xs));
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
    int *c = nullptr;
    cudaMalloc(&d, n * sizeof(float));
    cudaMalloc(&c, 4 * sizeof(int));
    cudaMemset(d, 0, n * sizeof(float));
    count_args<<<4, 32>>>(c, 1, 2.0f, 'x');
    scale_float<<<4, 256>>>(d, 0.5f, n);
    cudaDeviceSynchronize();
    cudaFree(d);
    cudaFree(c);
    std::printf("done\n");
    return 0;
}
