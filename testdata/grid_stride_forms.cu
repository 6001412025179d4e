// grid_stride_forms: grid- and block-stride loops written the other ways
// students and libraries write them, in a file whose launch is computed at
// run time: up to `n` inclusive, the bound on the left, a stride of a
// constant times the block or the grid, and the sizes of cooperative
// groups. Without a launch each loop runs at most ⌈(n+1)/stride⌉ (or
// ⌈n/stride⌉) times per warp, under printed assumptions on `n` and the
// grid where the counter could pass its type's range. Written for copper.

#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

// Every element up to and including `last`.
__global__ void fill_through(float *out, int last, float value) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i <= last; i += blockDim.x * gridDim.x) {
        out[i] = value;
    }
}

// The bound written first.
__global__ void scale_reversed(float *a, int n, float s) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; n > i; i += blockDim.x * gridDim.x) {
        a[i] *= s;
    }
}

// Two elements a thread per step of a block: pairs of a row.
__global__ void pair_sums(const float *in, float *out, int n) {
    for (int i = 2 * threadIdx.x; i < n; i += 2 * blockDim.x) {
        float v = in[i];
        if (i + 1 < n) {
            v += in[i + 1];
        }
        out[i / 2] = v;
    }
}

// Four consecutive elements a thread per step of the grid (a float4 a
// thread, written out).
__global__ void copy_by_four(const float *in, float *out, int n) {
    const int stride = 4 * blockDim.x * gridDim.x;
    for (int i = 4 * (blockIdx.x * blockDim.x + threadIdx.x); i < n; i += stride) {
        for (int j = 0; j < 4; j++) {
            if (i + j < n) {
                out[i + j] = in[i + j];
            }
        }
    }
}

// A grid-stride loop over the grid group.
__global__ void grid_axpy(float a, const float *x, float *y, int n) {
    cg::grid_group grid = cg::this_grid();
    for (int i = grid.thread_rank(); i < n; i += grid.size()) {
        y[i] = a * x[i] + y[i];
    }
}

// A block-stride loop over a generic group handle holding the block.
__global__ void block_clear(float *rows, int width) {
    cg::thread_group block = cg::this_thread_block();
    float *row = rows + blockIdx.x * width;
    for (int c = block.thread_rank(); c < width; c += block.size()) {
        row[c] = 0.0f;
    }
}

int main(int argc, char **argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 5000;
    const int threads = argc > 2 ? std::atoi(argv[2]) : 128;
    const int blocks = (n + threads - 1) / threads / 4 + 1;
    float *x = nullptr;
    float *y = nullptr;
    cudaMalloc(&x, (n + 1) * sizeof(float));
    cudaMalloc(&y, (n + 1) * sizeof(float));
    fill_through<<<blocks, threads>>>(x, n, 1.0f);
    scale_reversed<<<blocks, threads>>>(x, n, 2.0f);
    pair_sums<<<1, threads>>>(x, y, n);
    copy_by_four<<<blocks, threads>>>(x, y, n);
    grid_axpy<<<blocks, threads>>>(2.0f, x, y, n);
    block_clear<<<blocks, threads>>>(y, n / blocks);
    cudaDeviceSynchronize();
    std::printf("done\n");
    cudaFree(x);
    cudaFree(y);
    return 0;
}
