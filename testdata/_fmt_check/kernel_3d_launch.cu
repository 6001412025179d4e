// kernel_3d_launch: scales an nx x ny x nz volume and adds a per-slice
// offset, launched on a 3-D grid of 3-D blocks. Written for copper.
// Exercises threadIdx/blockIdx/blockDim .y and .z and a 3-D flattened
// index.

#include <iostream>
#include <vector>
#include <cuda_runtime.h>

__global__ void kernel_3d_launch(float *vol, float *out, int nx, int ny, int nz, float scale) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < nx && y < ny && z < nz) {
        int idx = (z * ny + y) * nx + x;
        out[idx] = vol[idx] * scale + (float)z;
    }
}

int main() {
    const int nx = 16, ny = 16, nz = 8;
    const size_t count = static_cast<size_t>(nx) * ny * nz;
    std::vector<float> host(count, 1.0f);
    float *d_vol = nullptr;
    float *d_out = nullptr;
    cudaMalloc(&d_vol, count * sizeof(float));
    cudaMalloc(&d_out, count * sizeof(float));
    cudaMemcpy(d_vol, host.data(), count * sizeof(float), cudaMemcpyHostToDevice);
    kernel_3d_launch<<<dim3(2, 2, 2), dim3(8, 8, 4)>>>(d_vol, d_out, nx, ny, nz, 0.5f);
    cudaMemcpy(host.data(), d_out, count * sizeof(float), cudaMemcpyDeviceToHost);
    std::cout << "last voxel: " << host[count - 1] << std::endl;
    cudaFree(d_vol);
    cudaFree(d_out);
    return 0;
}
