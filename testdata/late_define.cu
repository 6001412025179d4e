// late_define: macros defined between kernels, as in a file that grew one
// kernel at a time. Written for copper. The first kernel declares its own
// `const int TILE = 8` before any `#define TILE` exists; the `#define TILE
// 16` after it applies only to the kernels below it; `SCALE` is redefined
// between two kernels (`#undef` then `#define`); the last kernel comes after
// `#undef TILE` and names its own parameter `TILE`. nvcc compiles each
// kernel with the macros in force at its line; so must copper.

#include <cuda_runtime.h>

__global__ void scale_tile(float *out, const float *in, int n) {
    const int TILE = 8;
    __shared__ float buf[TILE];
    int i = blockIdx.x * TILE + threadIdx.x;
    if (threadIdx.x < TILE && i < n) {
        buf[threadIdx.x] = in[i];
        out[i] = 2.0f * buf[threadIdx.x];
    }
}

#define TILE 16
#define SCALE 3.0f

__global__ void scale_late(float *out, const float *in, int n) {
    int i = blockIdx.x * TILE + threadIdx.x;
    if (threadIdx.x < TILE && i < n) {
        out[i] = SCALE * in[i];
    }
}

#undef SCALE
#define SCALE 5.0f

__global__ void scale_later(float *out, const float *in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = SCALE * in[i];
    }
}

#undef TILE

__global__ void fill_upto(float *out, int TILE) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < TILE) {
        out[i] = (float)i;
    }
}

int main() {
    const int n = 1000;
    float *d_in, *d_out;
    cudaMalloc(&d_in, n * sizeof(float));
    cudaMalloc(&d_out, n * sizeof(float));
    scale_tile<<<(n + 7) / 8, 8>>>(d_out, d_in, n);
    scale_late<<<(n + 15) / 16, 16>>>(d_out, d_in, n);
    scale_later<<<(n + 255) / 256, 256>>>(d_out, d_in, n);
    fill_upto<<<(n + 255) / 256, 256>>>(d_out, n);
    cudaFree(d_in);
    cudaFree(d_out);
    return 0;
}
