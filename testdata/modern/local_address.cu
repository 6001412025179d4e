// local_address: device functions that return more than one value through
// pointers to the caller's locals (`&lo`, `&hi`), an accumulator updated
// through a pointer, and a helper that walks a pointer it was given.
// Written for copper.

#include <cuda_runtime.h>

__device__ void accumulate(float *total, float x) { *total += x; }

__device__ void widen(int x, int *lo, int *hi) {
    if (x < *lo) *lo = x;
    if (x > *hi) *hi = x;
}

__device__ float sum_run(const float *p, int len) {
    float s = 0.0f;
    for (int i = 0; i < len; i++) {
        s += *p;
        p++;
    }
    return s;
}

// Per thread: the sum of a window of `in` and the range of its keys.
__global__ void window_stats(const float *in, const int *keys, float *sums, int *ranges, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    float total = 0.0f;
    int lo = keys[t], hi = keys[t];
    for (int k = 1; k < 4 && t + k < n; k++) {
        accumulate(&total, in[t + k]);
        widen(keys[t + k], &lo, &hi);
    }
    if (t + 4 <= n) total += sum_run(in + t, 4);
    sums[t] = total;
    ranges[2 * t] = lo;
    ranges[2 * t + 1] = hi;
}

int main() {
    const int n = 1200;
    float *in, *sums;
    int *keys, *ranges;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&keys, n * sizeof(int));
    cudaMalloc(&sums, n * sizeof(float));
    cudaMalloc(&ranges, 2 * n * sizeof(int));
    window_stats<<<(n + 255) / 256, 256>>>(in, keys, sums, ranges, n);
    cudaDeviceSynchronize();
    return 0;
}
