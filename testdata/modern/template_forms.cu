// Template kernels written the ways real code writes them.
template <typename T,  // element type
          int BLOCK = 256 /* threads per block */>
__global__ void fill_value(T *a, T v, int n) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) {
    a[i] = v;
  }
}

template <typename T>
__global__ void negate(T *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    a[i] = -a[i];
  }
}

// Floats are negated through their sign bit.
template <>
__global__ void negate<float>(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    a[i] = __int_as_float(__float_as_int(a[i]) ^ 0x80000000);
  }
}

int main() {
  const int n = 4096;
  float *f;
  int *k;
  cudaMalloc(&f, n * sizeof(float));
  cudaMalloc(&k, n * sizeof(int));
  fill_value<float><<<n / 256, 256>>>(f, 1.0f, n);
  negate<float><<<n / 256, 256>>>(f, n);
  negate<int><<<n / 256, 256>>>(k, n);
  cudaFree(f);
  cudaFree(k);
  return 0;
}
