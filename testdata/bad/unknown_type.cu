// A complex-number kernel whose element type comes from the build: the
// project's Makefile passes -Dreal_2_t=float2 to nvcc. Without that
// define copper says which type it does not know, and still reads the
// other kernel.
#include <cuda_runtime.h>

__global__ void conj_all(real_2_t *z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        z[i].y = -z[i].y;
    }
}

__global__ void scale(float *a, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] = s * a[i];
    }
}

int main() {
    const int n = 1024;
    real_2_t *z;
    float *a;
    cudaMalloc(&z, n * sizeof(real_2_t));
    cudaMalloc(&a, n * sizeof(float));
    conj_all<<<n / 256, 256>>>(z, n);
    scale<<<n / 256, 256>>>(a, 2.0f, n);
    cudaFree(z);
    cudaFree(a);
    return 0;
}
