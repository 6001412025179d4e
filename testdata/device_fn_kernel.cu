// device_fn_kernel: a kernel that calls helper functions: a
// `__device__ __forceinline__` one, a plain __device__ one that calls it, a
// __device__ one with a loop over pointer arguments, and a __host__
// __device__ one. Written for copper (device functions are inlined when
// copper lowers the kernel).
// Computes out[i] = lerp(lo, hi, smoothstep(lo, hi, x[i])) + the dot
// product of x[i .. i + k - 1] with the weights w (indices clamped at the
// end of the array).

__device__ __forceinline__ float clamp01(float v) {
    return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
}

__host__ __device__ float lerp(float a, float b, float t) {
    return a + t * (b - a);
}

__device__ float smoothstep(float lo, float hi, float v) {
    float t = clamp01((v - lo) / (hi - lo));
    return t * t * (3.0f - 2.0f * t);
}

__device__ float window_dot(const float *x, const float *w, int i, int n, int k) {
    float acc = 0.0f;
    for (int j = 0; j < k; j++) {
        int idx = i + j;
        if (idx >= n) {
            idx = n - 1;
        }
        acc += x[idx] * w[j];
    }
    return acc;
}

__global__ void device_fn_kernel(float *x, float *w, float *out, int n, int k, float lo, float hi) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = lerp(lo, hi, smoothstep(lo, hi, x[i])) + window_dot(x, w, i, n, k);
    }
}
