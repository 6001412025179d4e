// Qualifiers spelled through macros, as portable suites do.
#define LB(n) __launch_bounds__(n)
#define GLOBAL __global__
#define DEVICE_INLINE __device__ __forceinline__

DEVICE_INLINE float twice(float x) { return 2.0f * x; }

LB(256) __global__ void double_all(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    a[i] = twice(a[i]);
  }
}

GLOBAL void zero_all(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    a[i] = 0.0f;
  }
}
