// Complex arithmetic through small `float2` device functions that return
// structs (cuComplex style), and a `__device__` function returning a
// struct that mixes `float` and `int` fields (the value and index of a
// minimum). Written for copper.

#include <cuda_runtime.h>
#include <cfloat>

struct MinLoc {
    float value;
    int index;
};

__device__ __forceinline__ float2 cmul(float2 a, float2 b) {
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

__device__ __forceinline__ float2 cadd(float2 a, float2 b) {
    return make_float2(a.x + b.x, a.y + b.y);
}

__device__ inline float2 cscale(float2 a, float s) {
    float2 r;
    r.x = a.x * s;
    r.y = a.y * s;
    return r;
}

__device__ MinLoc min_loc(MinLoc a, MinLoc b) {
    if (b.value < a.value || (b.value == a.value && b.index < a.index)) {
        return b;
    }
    return a;
}

// y = alpha * a * b + y, element by element.
__global__ void cmul_axpy(const float2 *__restrict__ a, const float2 *__restrict__ b,
                          float2 *__restrict__ y, float2 alpha, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = cadd(cmul(alpha, cmul(a[i], b[i])), y[i]);
    }
}

// Powers of a twiddle factor by repeated multiplication; the real part of
// the last one is read straight from a returned struct.
__global__ void twiddle_powers(const float2 *w, float2 *out, float *re, int n, int steps) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float2 acc = make_float2(1.0f, 0.0f);
        for (int s = 0; s < steps; ++s) {
            acc = cmul(acc, w[i]);
        }
        out[i] = cscale(acc, 0.5f);
        re[i] = cmul(acc, w[i]).x;
    }
}

// The smallest value of each row of `width` floats and where it is.
__global__ void row_argmin(const float *m, MinLoc *result, int rows, int width) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        MinLoc best;
        best.value = FLT_MAX;
        best.index = -1;
        for (int c = 0; c < width; ++c) {
            MinLoc here;
            here.value = m[r * width + c];
            here.index = c;
            best = min_loc(best, here);
        }
        result[r] = best;
    }
}
