// Pointer and namespace aliases as a lab assignment writes them: a
// `using` alias and a `typedef` of a pointer as parameter types, a
// pointer alias for a local, and aliases declared in a namespace, used
// qualified and after `using namespace`.
#include <cstdio>
#include <cuda_runtime.h>

using fptr = float *;
typedef const float *cfptr;

namespace lab {
typedef float real;
using count_t = int;
using rptr = real *;
}  // namespace lab

using namespace lab;

__global__ void vec_add(cfptr a, cfptr b, fptr c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

__global__ void shift(lab::rptr out, const lab::real *in, lab::count_t n) {
    lab::count_t i = blockIdx.x * blockDim.x + threadIdx.x;
    fptr dst = out + i;
    if (i + 1 < n) {
        *dst = in[i + 1];
    }
}

__global__ void halve(rptr data, count_t n) {
    count_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        data[i] = data[i] * (real)0.5f;
    }
}

// One thread per row, accumulating in place (`copper optimize` stages
// `sums` in shared memory).
__global__ void row_sums(cfptr m, fptr sums, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        for (int c = 0; c < cols; c++) {
            sums[r] += m[r * cols + c];
        }
    }
}

int main() {
    const int n = 1 << 20;
    float *a, *b, *c;
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&b, n * sizeof(float));
    cudaMalloc(&c, n * sizeof(float));
    int threads = 256;
    int blocks = (n + threads - 1) / threads;
    vec_add<<<blocks, threads>>>(a, b, c, n);
    shift<<<blocks, threads>>>(c, a, n);
    halve<<<blocks, threads>>>(c, n);
    row_sums<<<4, 256>>>(a, b, 1024, 1024);
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
        printf("error: %s\n", cudaGetErrorString(err));
    }
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return 0;
}
