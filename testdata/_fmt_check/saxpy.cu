// saxpy: y = a * x + y with `__restrict__` pointers and
// `__launch_bounds__(256)`, using a grid-stride loop. Written for copper.

#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

__global__ void __launch_bounds__(256) saxpy(
    int n,
    float a,
    const float *__restrict__ x,
    float *__restrict__ y
) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = a * x[i] + y[i];
    }
}

int main() {
    const int n = 8192;
    std::vector<float> hx(n, 1.0f), hy(n, 2.0f);
    float *x = nullptr;
    float *y = nullptr;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(y, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    saxpy<<<16, 256>>>(n, 3.0f, x, y);
    cudaMemcpy(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost);
    std::printf("y[0] = %f (expected 5)\n", hy[0]);
    cudaFree(x);
    cudaFree(y);
    return 0;
}
