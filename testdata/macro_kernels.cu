// macro_kernels: kernels defined by file-scope macro invocations, the way
// ML libraries write families of element-wise kernels. Three families:
// UNARY pastes the kernel's name (`name##_kernel`); BINARY invokes
// ELEMENTWISE, another macro, and its body uses IDX, a third one; ROW_SUM
// puts `__launch_bounds__` inside the expansion. copper lists and bounds
// each kernel at its invocation's line and never rewrites one (there is no
// text of its own to edit).

#define UNARY(name, expr)                                                    \
  __global__ void name##_kernel(const float *x, float *y, int n) {           \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                           \
    if (i < n) y[i] = (expr);                                                \
  }

#define IDX(i) (i)
#define ELEMENTWISE(kname, expr)                                             \
  __global__ void kname(const float *a, const float *b, float *c, int n) {   \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                           \
    if (i < n) c[IDX(i)] = expr;                                             \
  }
#define BINARY(name, op) ELEMENTWISE(name##_kernel, a[IDX(i)] op b[IDX(i)])

#define ROW_SUM(name, T)                                                     \
  __global__ void __launch_bounds__(128) name(const T *m, T *out, int w) {   \
    T acc = 0;                                                               \
    for (int j = threadIdx.x; j < w; j += blockDim.x)                        \
      acc += m[blockIdx.x * w + j];                                          \
    atomicAdd(&out[blockIdx.x], acc);                                        \
  }

UNARY(neg, -x[i])
UNARY(twice, 2.0f * x[i])
BINARY(add, +)
BINARY(mul, *)
ROW_SUM(row_sum_f, float)

void run_neg(const float *x, float *y, int n) {
  neg_kernel<<<(n + 255) / 256, 256>>>(x, y, n);
}
