// Kernels behind the version and architecture tests real code makes:
// nvcc defines these for the device pass (copper as nvcc 12.8, sm_90).
#include <cuda_runtime.h>

#if CUDART_VERSION >= 2020
__global__ void mapped_copy(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = in[i];
  }
}
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
__global__ void warp_sum(const float *in, float *out) {
  float v = in[blockIdx.x * 32 + threadIdx.x];
  for (int o = 16; o > 0; o /= 2) {
    v += __shfl_down_sync(0xffffffff, v, o);
  }
  if (threadIdx.x == 0) {
    out[blockIdx.x] = v;
  }
}
#endif

#if defined(__CUDACC__) && defined(__NVCC__) && CUDA_VERSION >= 11000
__global__ void fill_ones(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    a[i] = 1.0f;
  }
}
#endif
