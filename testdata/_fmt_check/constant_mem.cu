// constant_mem: evaluates a degree-7 polynomial per element with Horner's
// rule, the coefficients held in `__constant__` memory (uploaded by the host
// with cudaMemcpyToSymbol), plus a `__constant__` scalar offset. Written for
// copper. Every thread of a warp reads the same coefficient at the same
// time: the access pattern constant memory broadcasts.

#include <cstdio>
#include <cuda_runtime.h>

#define DEGREE 7

__constant__ float c_coeffs[DEGREE + 1];
__constant__ float c_offset;

__global__ void constant_mem(float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float acc = c_coeffs[DEGREE];
        for (int k = 7 - 1; k >= 0; k--) {
            acc = acc * v + c_coeffs[k];
        }
        y[i] = acc + c_offset;
    }
}

int main() {
    const int n = 2048;
    float coeffs[DEGREE + 1] = {1.0f, -0.5f, 0.25f, -0.125f, 0.0625f, 0.0f, 0.0f, 0.01f};
    float offset = 0.5f;
    cudaMemcpyToSymbol(c_coeffs, coeffs, sizeof(coeffs));
    cudaMemcpyToSymbol(c_offset, &offset, sizeof(offset));
    float *x = nullptr;
    float *y = nullptr;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    cudaMemset(x, 0, n * sizeof(float));
    constant_mem<<<8, 256>>>(x, y, n);
    float y0 = 0.0f;
    cudaMemcpy(&y0, y, sizeof(float), cudaMemcpyDeviceToHost);
    std::printf("p(0) + offset = %f (expected 1.5)\n", y0);
    cudaFree(x);
    cudaFree(y);
    return 0;
}
