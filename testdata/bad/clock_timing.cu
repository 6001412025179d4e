// A kernel that times its own loop with the multiprocessor's cycle
// counter, as profiling exercises do; copper does not model the clock and
// says so, and still analyzes the untimed kernel.
#include <cuda_runtime.h>

__global__ void timed_sum(const float *a, float *out, long long *cycles, int n) {
    clock_t start = clock();
    long long t0 = clock64();
    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        s += a[i];
    }
    out[threadIdx.x] = s;
    if (threadIdx.x == 0) {
        cycles[0] = clock64() - t0;
        cycles[1] = (long long)(clock() - start);
    }
}

__global__ void sum(const float *a, float *out, int n) {
    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        s += a[i];
    }
    out[threadIdx.x] = s;
}

int main() {
    const int n = 1 << 16;
    float *a, *out;
    long long *cycles;
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&out, 256 * sizeof(float));
    cudaMalloc(&cycles, 2 * sizeof(long long));
    timed_sum<<<1, 256>>>(a, out, cycles, n);
    sum<<<1, 256>>>(a, out, n);
    cudaDeviceSynchronize();
    cudaFree(a);
    cudaFree(out);
    cudaFree(cycles);
    return 0;
}
