// device_fn_kernel: a kernel that calls __device__ helper functions: a
// plain __device__ function with a loop, a `__device__ __forceinline__`
// one, and a __host__ __device__ one. Written for copper (device functions
// are inlined when copper lowers the kernel).
// Computes out[i] = smoothstep(lo, hi, x[i]) + dot of x[i]'s neighbourhood
// with the weights w (a small k-tap window, clamped at the ends).

__device__ __forceinline__ float clamp01(float v) {
    return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
}

__host__ __device__ float smoothstep(float lo, float hi, float v) {
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
        out[i] = smoothstep(lo, hi, x[i]) + window_dot(x, w, i, n, k);
    }
}
