// main.cu: the host program of the ops library's example. Its kernels are
// in include/ops/kernels.h, reached as <ops/kernels.h> through -I.
#include <cstdio>
#include <ops/kernels.h>

template <typename T>
void run_axpy(T *y, const T *x, T a, int n) {
    axpy<T><<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(y, x, a, n);
}

int main() {
    int n = 1 << 20;
    real *x, *y, *m, *o;
    cudaMalloc(&x, n * sizeof(real));
    cudaMalloc(&y, n * sizeof(real));
    cudaMalloc(&m, 1024 * 512 * sizeof(real));
    cudaMalloc(&o, 1024 * sizeof(real));
    scale<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(x, (real)2, n);
    run_axpy(y, (const real *)x, (real)3, n);
    rowsum<<<1024 / BLOCK, BLOCK>>>(m, o, 1024, 512);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
