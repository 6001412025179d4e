// tmpl_reduce: a block-wise sum whose block size is a template parameter,
// the way CUB-style and SDK reductions are written: `template <unsigned int
// BLOCK>` sizes the shared buffer and bounds the tree loop, and the host
// launches two instantiations. Written for copper. copper analyzes
// `block_sum<128>` and `block_sum<256>` as two kernels.

#include <cstdio>
#include <cuda_runtime.h>

template <unsigned int BLOCK>
__global__ void block_sum(const float *__restrict__ in, float *__restrict__ out, int n) {
    __shared__ float partial[BLOCK];
    const unsigned int tid = threadIdx.x;
    const unsigned int i = blockIdx.x * BLOCK + tid;
    partial[tid] = (i < static_cast<unsigned int>(n)) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            partial[tid] += partial[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = partial[0];
    }
}

void sum_both(const float *d_in, float *d_out, int n) {
    block_sum<128><<<(n + 127) / 128, 128>>>(d_in, d_out, n);
    block_sum<256><<<(n + 255) / 256, 256>>>(d_in, d_out, n);
}

int main() {
    const int n = 2048;
    float *d_in = nullptr;
    float *d_out = nullptr;
    cudaMalloc(&d_in, n * sizeof(float));
    cudaMalloc(&d_out, 16 * sizeof(float));
    cudaMemset(d_in, 0, n * sizeof(float));
    sum_both(d_in, d_out, n);
    cudaDeviceSynchronize();
    cudaFree(d_in);
    cudaFree(d_out);
    std::printf("done\n");
    return 0;
}
