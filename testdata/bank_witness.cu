// bank_witness: three shared-memory lookups whose bank conflicts depend on
// the input data in ways the constructive witness search (fill the input
// with words of one bank: 0, 32, 64, ...) cannot reach. Written for copper
// as regression kernels for the MILP witness (`lint --witness`).
//
// - histogram_shift: a 256-bin histogram of the second byte of each word,
//   `(data[i] >> 8) & 255`, one sub-histogram per warp (as the SDK's
//   histogram256 keeps them). Inputs (32k) << 8 make 8 lanes of a warp
//   add into 8 different bins of one bank; 9 is impossible (a warp's 256
//   bins are 8 words per bank), though the whole array has 64 per bank.
// - scatter_mod: a gather at `(in[i] * 4) % SIZE`. Inputs 8k give 32
//   distinct words of one bank.
// - bucket_lookup: a lookup guarded by a value test: only keys of bucket
//   `tag` (`key >> 10 == tag`) read the table, at `key & 1023`.

#include <cstdio>
#include <cuda_runtime.h>

#define BINS 256
#define WARPS 8
#ifndef SIZE
#define SIZE 1024
#endif

__global__ void histogram_shift(const int *data, unsigned int *hist, int n) {
    __shared__ unsigned int bins[WARPS * BINS];
    for (int b = threadIdx.x; b < WARPS * BINS; b += blockDim.x) {
        bins[b] = 0u;
    }
    __syncthreads();
    unsigned int *mine = bins + (threadIdx.x / 32) * BINS;
    const int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const unsigned int bin = (data[i] >> 8) & 255;
        atomicAdd(&mine[bin], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        unsigned int sum = 0u;
        for (int w = 0; w < WARPS; w++) {
            sum += bins[w * BINS + b];
        }
        atomicAdd(&hist[b], sum);
    }
}

__global__ void scatter_mod(const int *in, const float *src, float *out, int n) {
    __shared__ float buf[SIZE];
    for (int t = threadIdx.x; t < SIZE; t += blockDim.x) {
        buf[t] = src[t];
    }
    __syncthreads();
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const int k = (in[i] * 4) % SIZE;
        out[i] = buf[k];
    }
}

__global__ void bucket_lookup(const int *keys, const float *table, float *out, int n, int tag) {
    __shared__ float s_table[SIZE];
    for (int t = threadIdx.x; t < SIZE; t += blockDim.x) {
        s_table[t] = table[static_cast<size_t>(tag) * SIZE + t];
    }
    __syncthreads();
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const int key = keys[i];
        float v = 0.0f;
        if ((key >> 10) == tag) {
            v = s_table[key & (SIZE - 1)];
        }
        out[i] = v;
    }
}

int main() {
    const int n = 4096;
    int *data = nullptr;
    unsigned int *hist = nullptr;
    float *table = nullptr, *out = nullptr;
    cudaMallocManaged(&data, n * sizeof(int));
    cudaMallocManaged(&hist, BINS * sizeof(unsigned int));
    cudaMallocManaged(&table, 4 * SIZE * sizeof(float));
    cudaMallocManaged(&out, n * sizeof(float));
    for (int i = 0; i < n; i++) {
        data[i] = i * 37;
    }
    for (int i = 0; i < 4 * SIZE; i++) {
        table[i] = static_cast<float>(i);
    }
    cudaMemset(hist, 0, BINS * sizeof(unsigned int));
    histogram_shift<<<4, 256>>>(data, hist, n);
    scatter_mod<<<16, 256>>>(data, table, out, n);
    bucket_lookup<<<16, 256>>>(data, table, out, n, 3);
    cudaDeviceSynchronize();
    std::printf("bin 0: %u, out[1]: %f\n", hist[0], out[1]);
    cudaFree(data);
    cudaFree(hist);
    cudaFree(table);
    cudaFree(out);
    return 0;
}
