// Type aliases written the C++ way, as modern suites write them: a
// scalar alias and an unsigned index type, used in kernel parameters,
// locals and casts.
#include <cuda_runtime.h>

using real_t = float;
using index_t = unsigned int;

__global__ void scale(const real_t *__restrict__ in, real_t *out, real_t s, index_t n) {
    index_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = s * in[i];
    }
}

__global__ void axpy(real_t a, const real_t *x, real_t *y, index_t n) {
    for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = a * x[i] + static_cast<real_t>(y[i]);
    }
}

int main() {
    const index_t n = 1 << 16;
    real_t *in, *out;
    cudaMalloc(&in, n * sizeof(real_t));
    cudaMalloc(&out, n * sizeof(real_t));
    scale<<<n / 256, 256>>>(in, out, 2.0f, n);
    axpy<<<64, 256>>>(0.5f, in, out, n);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
    return 0;
}
