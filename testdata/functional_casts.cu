// functional_casts: a histogram of values in [lo, hi) whose bin index is
// computed with C++ functional casts (`int(…)`, `float(…)`, `unsigned(…)`)
// and `static_cast`, as C++-minded course code writes it; bins are counted
// with atomicAdd. Written for copper.

#include <cuda_runtime.h>

#define NUM_BINS 64

__global__ void histogram_cast(const float *values, unsigned int *bins, int n, float lo, float hi) {
    const int tid = int(blockIdx.x * blockDim.x + threadIdx.x);
    const int stride = static_cast<int>(gridDim.x * blockDim.x);
    const float scale = float(NUM_BINS) / (hi - lo);
    for (int i = tid; i < n; i += stride) {
        int bin = int((values[i] - lo) * scale);
        bin = bin < 0 ? 0 : bin;
        bin = bin >= NUM_BINS ? NUM_BINS - 1 : bin;
        atomicAdd(&bins[unsigned(bin)], 1u);
    }
}
