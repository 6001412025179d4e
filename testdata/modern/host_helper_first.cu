// A host-only helper before the kernels (as in many SDK-style samples):
// the kernels and the launch after it must still be read.
#include <cstdio>

__host__ float rnorm(float x, float y) { return 1.0f / sqrtf(x * x + y * y); }

__global__ void scale_by(float *v, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    v[i] *= s;
  }
}

__global__ void offset_by(float *v, float d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    v[i] += d;
  }
}

int main() {
  const int n = 1 << 16;
  float *v;
  cudaMalloc(&v, n * sizeof(float));
  scale_by<<<(n + 255) / 256, 256>>>(v, rnorm(3.0f, 4.0f), n);
  offset_by<<<(n + 255) / 256, 256>>>(v, 1.0f, n);
  cudaDeviceSynchronize();
  cudaFree(v);
  return 0;
}
