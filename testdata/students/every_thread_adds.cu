// A first attempt at vector addition: every thread adds the whole vectors.
// All threads write the same values, so the result does not depend on the
// order they run in (a benign race), only the time is wasted.
#include <cuda_runtime.h>

__global__ void addAll(const int *a, const int *b, int *c, int n) {
    for (int i = 0; i < n; i++) {
        c[i] = a[i] + b[i];
    }
}
