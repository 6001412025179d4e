// constant_params: a kernel's settings in a struct in constant memory,
// filled by the host with cudaMemcpyToSymbol, as simulation codes keep
// their physical constants. Written for copper. The struct mixes a float,
// an int and a float2, so the benchmark program fills it byte by byte at
// each field's offset. The parameter file fills `c_params` like an array
// of one struct, field by field.

#include <cuda_runtime.h>

struct Params {
    float scale;
    int offset;
    float2 clamp;
};

__constant__ Params c_params;

__global__ void apply_params(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = c_params.scale * x[i] + (float)c_params.offset;
        y[i] = fminf(fmaxf(v, c_params.clamp.x), c_params.clamp.y);
    }
}

int main() {
    const int n = 1000;
    Params h = {2.0f, 1, make_float2(-1.0f, 3.0f)};
    cudaMemcpyToSymbol(c_params, &h, sizeof(Params));
    float *d_x, *d_y;
    cudaMalloc(&d_x, n * sizeof(float));
    cudaMalloc(&d_y, n * sizeof(float));
    apply_params<<<(n + 255) / 256, 256>>>(d_x, d_y, n);
    cudaDeviceSynchronize();
    return 0;
}
