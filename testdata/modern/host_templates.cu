// Kernel templates launched from host function templates, as benchmark
// suites write their drivers: one `run<T>` per element type.
#include <cstdio>
#include <cuda_runtime.h>

template <typename T>
__global__ void scale_kernel(T *data, T factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    data[i] = data[i] * factor;
  }
}

template <typename T, int BLOCK>
__global__ void shift_kernel(T *data, int n) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) {
    data[i] = data[i] + (T)1;
  }
}

// Explicit arguments at the call: run_scale<float>(…).
template <typename T>
void run_scale(T *d, T factor, int n) {
  const int threads = 256;
  scale_kernel<T><<<(n + threads - 1) / threads, threads>>>(d, factor, n);
  cudaDeviceSynchronize();
}

// Deduced at the call: run_shift(d_int, n).
template <typename T>
void run_shift(T *d, int n) {
  shift_kernel<T, 128><<<(n + 127) / 128, 128>>>(d, n);
}

int main() {
  const int n = 1 << 12;
  float *d_f;
  int *d_i;
  cudaMalloc(&d_f, n * sizeof(float));
  cudaMalloc(&d_i, n * sizeof(int));
  run_scale<float>(d_f, 2.0f, n);
  run_shift(d_i, n);
  run_shift<float>(d_f, n);
  cudaFree(d_f);
  cudaFree(d_i);
  printf("done\n");
  return 0;
}
