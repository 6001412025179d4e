// Activation functions as deep-learning code writes them: a grid-stride
// loop over n elements with the CUDA math library.
#include <cuda_runtime.h>
#include <math.h>

#define SQRT_2_OVER_PI 0.7978845608f

__device__ float gelu(float x) {
    float cube = 0.044715f * x * x * x;
    return 0.5f * x * (1.0f + tanhf(SQRT_2_OVER_PI * (x + cube)));
}

__device__ float gelu_exact(float x) {
    return 0.5f * x * (1.0f + erff(x * 0.70710678f));
}

__global__ void activations(const float *in, float *out_gelu, float *out_exact,
                            float *out_softplus, float *out_swish, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float x = in[i];
        out_gelu[i] = gelu(x);
        out_exact[i] = gelu_exact(x);
        out_softplus[i] = x > 20.0f ? x : log1pf(__expf(x));
        out_swish[i] = x / (1.0f + expf(-x));
    }
}

__global__ void normalize_angles(const float *y, const float *x, float *angle,
                                 float *radius, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float a = atan2f(y[i], x[i]);
        angle[i] = fmodf(a + 2.0f * 3.14159265f, 2.0f * 3.14159265f);
        radius[i] = sqrtf(fmaf(x[i], x[i], y[i] * y[i]));
        radius[i] = fminf(fmaxf(radius[i], 0.0f), 1000.0f) + exp2f(-10.0f) + log10f(100.0f);
    }
}

int main() {
    int n = 1 << 20;
    float *in, *a, *b, *c, *d;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&b, n * sizeof(float));
    cudaMalloc(&c, n * sizeof(float));
    cudaMalloc(&d, n * sizeof(float));
    activations<<<256, 256>>>(in, a, b, c, d, n);
    normalize_angles<<<n / 256, 256>>>(in, a, b, c, n);
    cudaDeviceSynchronize();
    return 0;
}
