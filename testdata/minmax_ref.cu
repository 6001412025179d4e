// minmax_ref: each thread scans a strided slice of a signal and keeps its
// running minimum and maximum through a device helper with reference
// outputs, `minmax(v, lo, hi)`, then writes both. Written for copper.
// Exercises `float &` parameters (writes reach the caller's variables)
// and `const float &`.

#include <cfloat>
#include <cuda_runtime.h>

__device__ __forceinline__ void minmax(const float &v, float &lo, float &hi) {
    if (v < lo) {
        lo = v;
    }
    if (v > hi) {
        hi = v;
    }
}

__global__ void slice_extrema(const float *signal, float *lows, float *highs, int n) {
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int threads = gridDim.x * blockDim.x;
    float lo = FLT_MAX;
    float hi = -FLT_MAX;
    for (int i = tid; i < n; i += threads) {
        minmax(signal[i], lo, hi);
    }
    lows[tid] = lo;
    highs[tid] = hi;
}
