// Kernels declared through a macro that names them, as some course
// frameworks and older suites do to switch qualifiers in one place.
#include <cuda_runtime.h>

#define KERNEL(name) __global__ void name
#define DEVICE_FN(type, name) __device__ type name

DEVICE_FN(float, square)(float x) { return x * x; }

KERNEL(square_all)(float *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] = square(a[i]);
    }
}

KERNEL(add_one)(float *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] += 1.0f;
    }
}

int main() {
    const int n = 1 << 18;
    float *a;
    cudaMalloc(&a, n * sizeof(float));
    square_all<<<(n + 255) / 256, 256>>>(a, n);
    add_one<<<(n + 255) / 256, 256>>>(a, n);
    cudaDeviceSynchronize();
    cudaFree(a);
    return 0;
}
