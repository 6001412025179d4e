// precision_switch.cu: a dot-product partial sum per thread whose element
// type is chosen at build time (-DUSE_DOUBLE for double, float otherwise)
// and which uses fmaf unless built with -DNO_FMA. Each thread sums a
// strided slice of the vectors into its slot of `partial`. Written for
// copper.
#include <cstdio>

#ifdef USE_DOUBLE
typedef double real_t;
#define FMA(a, b, c) fma(a, b, c)
#elif defined(__CUDACC__) && !defined(NO_FMA)
typedef float real_t;
#define FMA(a, b, c) fmaf(a, b, c)
#else
typedef float real_t;
#define FMA(a, b, c) ((a) * (b) + (c))
#endif

__global__ void dot_partial(const real_t *x, const real_t *y, real_t *partial, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int threads = gridDim.x * blockDim.x;
    real_t acc = 0;
    for (int i = t; i < n; i += threads) {
        acc = FMA(x[i], y[i], acc);
    }
    partial[t] = acc;
}

int main() {
    const int n = 4096;
    real_t *x, *y, *partial;
    cudaMalloc(&x, n * sizeof(real_t));
    cudaMalloc(&y, n * sizeof(real_t));
    cudaMalloc(&partial, 256 * sizeof(real_t));
    dot_partial<<<4, 64>>>(x, y, partial, n);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
