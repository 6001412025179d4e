// Builtins named through the global namespace (`::abs`), as
// C++ code written to avoid an unqualified overload does: each is the
// function CUDA provides.
#include <cstdlib>

__global__ void clamp_magnitude(const int *a, int *b, int limit) {
    int i = threadIdx.x;
    int m = ::abs(a[i]);
    b[i] = ::min(m, limit) + ::max(0, a[i] - limit) - ::abs(a[i] - 1);
}

// A function the file declares in the global namespace is still the one
// `::` names.
__device__ float halve(float x) { return x * 0.5f; }

__global__ void halve_all(float *v) { v[threadIdx.x] = ::halve(v[threadIdx.x]); }
