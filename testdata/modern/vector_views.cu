// Vector views of scalar arrays, as bandwidth-bound kernels write them:
// one 16-byte (or 8-, or 4-byte) access per lane through a cast pointer.
#include <cuda_runtime.h>

// Four floats per thread through `reinterpret_cast`, read and written.
__global__ void scale4(const float *in, float *out, float s, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) {
    float4 v = reinterpret_cast<const float4 *>(in)[i];
    v.x *= s;
    v.y *= s;
    v.z *= s;
    v.w *= s;
    reinterpret_cast<float4 *>(out)[i] = v;
  }
}

// A C-style cast and a dereference of a moved view pointer.
__global__ void add4(const float *a, const float *b, float *c, int n) {
  int i = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
  if (i + 3 < n) {
    float4 x = *(const float4 *)(a + i);
    float4 y = *(const float4 *)(b + i);
    *(float4 *)(c + i) = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
}

// Pairs of ints through a C cast, one member at a time.
__global__ void swap_pairs(int *a, int npairs) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < npairs) {
    int2 p = ((int2 *)a)[i];
    ((int2 *)a)[i].x = p.y;
    ((int2 *)a)[i].y = p.x;
  }
}

// Bytes four at a time: a local view pointer for the input, a cast for
// the output.
__global__ void invert_rgba(const unsigned char *in, unsigned char *out, int pixels) {
  const uchar4 *px = reinterpret_cast<const uchar4 *>(in);
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < pixels) {
    uchar4 p = px[idx];
    uchar4 o = make_uchar4(255 - p.x, 255 - p.y, 255 - p.z, p.w);
    reinterpret_cast<uchar4 *>(out)[idx] = o;
  }
}

// A grid-stride loop over a view of doubles.
__global__ void sum_pairs(const double *in, double *out, int n2) {
  const double2 *v = reinterpret_cast<const double2 *>(in);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += blockDim.x * gridDim.x) {
    double2 d = v[i];
    out[i] = d.x + d.y;
  }
}

int main() {
  const int n = 1 << 16;
  float *d_in, *d_out, *d_c;
  int *d_pairs;
  unsigned char *d_rgba, *d_inv;
  double *d_d, *d_sums;
  cudaMalloc(&d_in, n * sizeof(float));
  cudaMalloc(&d_out, n * sizeof(float));
  cudaMalloc(&d_c, n * sizeof(float));
  cudaMalloc(&d_pairs, n * sizeof(int));
  cudaMalloc(&d_rgba, 4 * n);
  cudaMalloc(&d_inv, 4 * n);
  cudaMalloc(&d_d, n * sizeof(double));
  cudaMalloc(&d_sums, n / 2 * sizeof(double));
  scale4<<<n / 4 / 256, 256>>>(d_in, d_out, 2.0f, n / 4);
  add4<<<n / 4 / 256, 256>>>(d_in, d_out, d_c, n);
  swap_pairs<<<n / 2 / 256, 256>>>(d_pairs, n / 2);
  invert_rgba<<<n / 256, 256>>>(d_rgba, d_inv, n);
  sum_pairs<<<32, 256>>>(d_d, d_sums, n / 2);
  cudaDeviceSynchronize();
  return 0;
}
