// tmpl_saxpy: a grid-stride `y = a * x + y` written once as a type template
// and launched for float and double, as Thrust-era helper kernels are.
// Written for copper. copper analyzes `axpy<float>` and `axpy<double>`.

#include <cuda_runtime.h>

template <typename T>
__global__ void axpy(int n, T a, const T *__restrict__ x, T *__restrict__ y) {
    const int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = a * x[i] + y[i];
    }
}

void run(int n, const float *xf, float *yf, const double *xd, double *yd) {
    const int threads = 256;
    const int blocks = 8;
    axpy<float><<<blocks, threads>>>(n, 2.0f, xf, yf);
    axpy<double><<<blocks, threads>>>(n, 0.5, xd, yd);
}
