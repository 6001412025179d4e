// kernel_2d_launch: a 5-point Jacobi stencil on a w x h grid, launched on a
// 2-D grid of 2-D blocks. Written for copper. Interior points average
// themselves with their four neighbours; boundary points are copied. The
// boundary test diverges in the warps that hold the edge rows and columns.

#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

__global__ void kernel_2d_launch(float *in, float *out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) {
        return;
    }
    int c = y * w + x;
    if (x > 0 && x < w - 1 && y > 0 && y < h - 1) {
        out[c] = 0.2f * (in[c] + in[c - 1] + in[c + 1] + in[c - w] + in[c + w]);
    } else {
        out[c] = in[c];
    }
}

int main() {
    const int w = 64;
    const int h = 64;
    std::vector<float> grid(w * h, 0.0f);
    grid[(h / 2) * w + w / 2] = 100.0f;
    float *d_in = nullptr;
    float *d_out = nullptr;
    cudaMalloc(&d_in, w * h * sizeof(float));
    cudaMalloc(&d_out, w * h * sizeof(float));
    cudaMemcpy(d_in, grid.data(), w * h * sizeof(float), cudaMemcpyHostToDevice);
    for (int step = 0; step < 10; step++) {
        kernel_2d_launch<<<dim3(4, 4), dim3(16, 16)>>>(d_in, d_out, w, h);
        float *tmp = d_in;
        d_in = d_out;
        d_out = tmp;
    }
    cudaMemcpy(grid.data(), d_in, w * h * sizeof(float), cudaMemcpyDeviceToHost);
    std::printf("centre after 10 steps: %f\n", grid[(h / 2) * w + w / 2]);
    cudaFree(d_in);
    cudaFree(d_out);
    return 0;
}
