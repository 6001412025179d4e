// Compile-time constants the C++ way: constexpr variables at file scope
// and in a kernel, a constexpr host-device function, static_assert,
// plain and scoped enums (one as a template parameter), a device function
// with default arguments, and an `extern "C"` kernel (for loading by name
// with the driver API).
#include <cstdio>
#include <cuda_runtime.h>

constexpr int TILE = 32;
constexpr float SCALE = 0.5f;
static_assert(TILE % 32 == 0, "TILE must be a multiple of the warp size");

enum Mode { MODE_ADD = 0, MODE_MUL = 1 };
enum class Channel : int { Red = 0, Green = 1, Blue = 2 };

constexpr __host__ __device__ int rows_per_block() { return TILE / 4; }

__device__ float blend(float x, float target, float t = 0.25f, int steps = 1) {
    for (int s = 0; s < steps; s++) {
        x = x + t * (target - x);
    }
    return x;
}

__global__ void tile_scale(float *a, int n) {
    constexpr int PER_THREAD = 4;
    static_assert(PER_THREAD * 8 == TILE, "one tile per block");
    int base = blockIdx.x * TILE * PER_THREAD + threadIdx.x;
    for (int k = 0; k < PER_THREAD; k++) {
        int i = base + k * TILE;
        if (i < n) {
            a[i] = a[i] * SCALE + rows_per_block();
        }
    }
}

__global__ void apply(float *a, float v, int n, int mode) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        if (mode == MODE_ADD) {
            a[i] = blend(a[i] + v, v);
        } else {
            a[i] = blend(a[i] * v, v, 0.5f, 2);
        }
    }
}

__global__ void green_channel(const float *rgb, float *out, int pixels) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < pixels) {
        out[p] = rgb[3 * p + (int)Channel::Green];
    }
}

// The operation is chosen at compile time: one instantiation per mode.
template <Mode M>
__global__ void apply_mode(float *a, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] = M == MODE_ADD ? a[i] + v : a[i] * v;
    }
}

extern "C" __global__ void clear(float *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] = 0.0f;
    }
}

int main() {
    const int n = 1 << 16;
    float *a, *rgb, *g;
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&rgb, 3 * n * sizeof(float));
    cudaMalloc(&g, n * sizeof(float));
    tile_scale<<<n / (TILE * 4), TILE>>>(a, n);
    apply<<<n / 256, 256>>>(a, 2.0f, n, MODE_MUL);
    green_channel<<<n / 256, 256>>>(rgb, g, n);
    apply_mode<MODE_ADD><<<n / 256, 256>>>(a, 1.0f, n);
    apply_mode<MODE_MUL><<<n / 256, 256>>>(a, 3.0f, n);
    clear<<<n / 256, 256>>>(a, n);
    cudaDeviceSynchronize();
    printf("done\n");
    cudaFree(a);
    cudaFree(rgb);
    cudaFree(g);
    return 0;
}
