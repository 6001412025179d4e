// macro_types: four kernels in the style of PolyBench's GPU ports, where
// the element type is a macro (DATA_TYPE, float unless the build says
// -DDATA_TYPE=double) and the sizes are macros too. Written for copper.
// A rewrite must keep writing DATA_TYPE, so that a double build of the
// patched file still computes in double.

#ifndef DATA_TYPE
#define DATA_TYPE float
#endif
#define M 64
#define N 64
#define FLOAT_N 3214212.01f
#define EPS 0.005f

// The mean of each column of data (one thread per column).
__global__ void mean_kernel(DATA_TYPE *mean, DATA_TYPE *data) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < M) {
        mean[j] = 0.0;
        for (int i = 0; i < N; i++) {
            mean[j] += data[i * M + j];
        }
        mean[j] /= (DATA_TYPE)FLOAT_N;
    }
}

// The standard deviation of each column, given its mean.
__global__ void std_kernel(DATA_TYPE *mean, DATA_TYPE *std, DATA_TYPE *data) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < M) {
        std[j] = 0.0;
        for (int i = 0; i < N; i++) {
            std[j] += (data[i * M + j] - mean[j]) * (data[i * M + j] - mean[j]);
        }
        std[j] /= (FLOAT_N);
        std[j] = sqrt(std[j]);
        if (std[j] <= EPS) {
            std[j] = 1.0;
        }
    }
}

// y = A x, one thread per row of A (atax's first half).
__global__ void atax_rows(DATA_TYPE *A, DATA_TYPE *x, DATA_TYPE *tmp) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        for (int j = 0; j < M; j++) {
            tmp[i] += A[i * M + j] * x[j];
        }
    }
}

// The sum of each row of A scaled by the first entry of x, staged value by
// value (the same x[j] read by every thread of the block).
__global__ void scaled_rows(DATA_TYPE *A, DATA_TYPE *x, DATA_TYPE *out, int rows) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows) {
        DATA_TYPE acc = 0;
        for (int j = 0; j < M; j++) {
            acc += A[i * M + j] * x[j];
        }
        out[i] = acc;
    }
}
