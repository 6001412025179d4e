// tmpl_deduced: templates launched without template arguments, as C++
// code usually launches them: nvcc deduces `T` from the arguments' types
// (`double *d_x` gives `scale_add<double>`, `int *d_c` gives
// `clamp_count<int, 64>` with the default BS). Written for copper.

#include <cstdio>
#include <cuda_runtime.h>

template <typename T>
__global__ void scale_add(const T *__restrict__ x, T *y, T alpha, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = alpha * x[i] + y[i];
    }
}

template <typename T, int BS = 64>
__global__ void clamp_count(const T *v, T *out, T lo, T hi, int n) {
    __shared__ T tile[BS];
    int i = blockIdx.x * BS + threadIdx.x;
    tile[threadIdx.x] = i < n ? v[i] : lo;
    __syncthreads();
    T x = tile[(threadIdx.x + 1) % BS];
    if (i < n) {
        out[i] = x < lo ? lo : (x > hi ? hi : x);
    }
}

int main() {
    const int n = 1000;
    double *d_x, *d_y;
    int *d_c, *d_o;
    cudaMalloc(&d_x, n * sizeof(double));
    cudaMalloc(&d_y, n * sizeof(double));
    cudaMalloc(&d_c, n * sizeof(int));
    cudaMalloc(&d_o, n * sizeof(int));
    scale_add<<<(n + 127) / 128, 128>>>(d_x, d_y, 0.5, n);
    clamp_count<<<(n + 63) / 64, 64>>>(d_c, d_o, 0, 100, n);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
