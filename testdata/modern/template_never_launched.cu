// A template kernel this file never instantiates (its caller is elsewhere).
template <typename T>
__global__ void square_all(T *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    a[i] = a[i] * a[i];
  }
}
