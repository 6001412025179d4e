// radix_keys: the float-to-key transform of a radix sort (flip the sign
// bit of positive floats and every bit of negative ones, so unsigned order
// is float order), written with `__float_as_uint`/`__uint_as_float` as
// real radix-sort code does (copper refuses the `union { float f;
// unsigned u; }` form with a message naming these intrinsics); then a
// template device function returning a struct, called without template
// arguments (`T` deduced from the pointer passed), as in a pairwise
// reduction. Written for copper.

#include <cuda_runtime.h>

__device__ unsigned int float_to_key(float f) {
    unsigned int u = __float_as_uint(f);
    unsigned int mask = (u & 0x80000000u) ? 0xffffffffu : 0x80000000u;
    return u ^ mask;
}

__device__ float key_to_float(unsigned int k) {
    unsigned int mask = (k & 0x80000000u) ? 0x80000000u : 0xffffffffu;
    return __uint_as_float(k ^ mask);
}

__global__ void make_keys(const float *x, unsigned int *keys, float *back, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int k = float_to_key(x[i]);
        keys[i] = k >> 24;
        back[i] = key_to_float(k);
    }
}

template <typename T>
__device__ float2 pair_at(const T *a, int i) {
    return make_float2(static_cast<float>(a[2 * i]), static_cast<float>(a[2 * i + 1]));
}

template <typename T>
__device__ T larger(T a, T b) {
    return a > b ? a : b;
}

__global__ void pair_sums(const int *counts, const float *w, float2 *out, float *top, int npairs) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < npairs) {
        float2 c = pair_at(counts, i);
        float2 v = pair_at(w, i);
        out[i] = make_float2(c.x + v.x, c.y + v.y);
        top[i] = larger(v.x, v.y);
    }
}

int main() {
    const int n = 1000;
    float *d_x, *d_back, *d_w, *d_top;
    unsigned int *d_keys;
    int *d_counts;
    float2 *d_out;
    cudaMalloc(&d_x, n * sizeof(float));
    cudaMalloc(&d_keys, n * sizeof(unsigned int));
    cudaMalloc(&d_back, n * sizeof(float));
    cudaMalloc(&d_counts, n * sizeof(int));
    cudaMalloc(&d_w, n * sizeof(float));
    cudaMalloc(&d_out, (n / 2) * sizeof(float2));
    cudaMalloc(&d_top, (n / 2) * sizeof(float));
    make_keys<<<(n + 255) / 256, 256>>>(d_x, d_keys, d_back, n);
    pair_sums<<<(n / 2 + 127) / 128, 128>>>(d_counts, d_w, d_out, d_top, n / 2);
    cudaDeviceSynchronize();
    return 0;
}
