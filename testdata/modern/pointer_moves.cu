// Pointer arithmetic as suites write it: a parameter moved to its
// block's rows, a local pointer into a parameter, and local pointers into
// shared memory.
#include <cstdio>
#include <cuda_runtime.h>

// Each block copies one row of `width` elements: the pointers are moved
// to the row first.
__global__ void copy_rows(const float *src, float *dst, int width) {
  src += blockIdx.x * width;
  dst = dst + blockIdx.x * width;
  for (int c = threadIdx.x; c < width; c += blockDim.x) {
    dst[c] = src[c];
  }
}

// Column sums of a row-major matrix, one pointer per row.
__global__ void column_sums(const float *m, float *sums, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c < cols) {
    float s = 0.0f;
    for (int r = 0; r < rows; r++) {
      const float *row = m + r * cols;
      s += row[c];
    }
    sums[c] = s;
  }
}

// Two halves of one shared buffer, addressed through local pointers.
__global__ void pair_swap(const float *in, float *out, int n) {
  __shared__ float buf[512];
  float *lo = buf;
  float *hi = buf + 256;
  int t = threadIdx.x;
  int i = blockIdx.x * 256 + t;
  lo[t] = (i < n) ? in[i] : 0.0f;
  hi[t] = (i < n) ? 2.0f * in[i] : 0.0f;
  __syncthreads();
  if (i < n) {
    out[i] = lo[255 - t] + hi[t];
  }
}

int main() {
  const int rows = 64, cols = 500, n = rows * cols;
  float *d_a, *d_b, *d_sums;
  cudaMalloc(&d_a, n * sizeof(float));
  cudaMalloc(&d_b, n * sizeof(float));
  cudaMalloc(&d_sums, cols * sizeof(float));
  copy_rows<<<rows, 128>>>(d_a, d_b, cols);
  column_sums<<<(cols + 127) / 128, 128>>>(d_a, d_sums, rows, cols);
  pair_swap<<<(n + 255) / 256, 256>>>(d_a, d_b, n);
  cudaDeviceSynchronize();
  printf("done\n");
  cudaFree(d_a);
  cudaFree(d_b);
  cudaFree(d_sums);
  return 0;
}
