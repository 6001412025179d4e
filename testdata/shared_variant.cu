// shared_variant.cu: 1D convolution with a 7-tap filter in constant
// memory, in two variants chosen at build time: USE_SHARED (the default
// here) stages each block's inputs and halo in shared memory; building with
// -DUSE_SHARED=0 gives the plain global-memory kernel of the same name.
// Written for copper.
#include <cstdio>

#define HALF 3
#define TAPS (2 * HALF + 1)
#define THREADS 128

#ifndef USE_SHARED
#define USE_SHARED 1
#endif

__constant__ float filter[TAPS];

#if USE_SHARED
__global__ void conv7(const float *in, float *out, int n) {
    __shared__ float tile[THREADS + 2 * HALF];
    int i = blockIdx.x * THREADS + threadIdx.x;
    tile[threadIdx.x + HALF] = (i < n) ? in[i] : 0.0f;
    if (threadIdx.x < HALF) {
        int left = i - HALF;
        int right = i + THREADS;
        tile[threadIdx.x] = (left >= 0) ? in[left] : 0.0f;
        tile[threadIdx.x + THREADS + HALF] = (right < n) ? in[right] : 0.0f;
    }
    __syncthreads();
    if (i < n) {
        float acc = 0.0f;
        for (int k = 0; k < TAPS; k++) {
            acc += filter[k] * tile[threadIdx.x + k];
        }
        out[i] = acc;
    }
}
#elif defined(USE_TEXTURE)
#error "the texture variant was removed"
#else
__global__ void conv7(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc = 0.0f;
        for (int k = 0; k < TAPS; k++) {
            int j = i + k - HALF;
            if (j >= 0 && j < n) {
                acc += filter[k] * in[j];
            }
        }
        out[i] = acc;
    }
}
#endif

int main() {
    const int n = 1000;
    float *in, *out;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, n * sizeof(float));
    conv7<<<(n + THREADS - 1) / THREADS, THREADS>>>(in, out, n);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
