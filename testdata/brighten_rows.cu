// brighten_rows: gamma-correct and clamp a grayscale image stored row by
// row (height x width floats), one thread per pixel in 16 x 16 blocks.
// Written for copper after a common first 2-D kernel: the row comes from
// the x index, so the 32 lanes of a warp (16 rows, 2 columns) read pixels
// `width` apart. Swapping the roles of threadIdx.x and threadIdx.y makes
// them read along a row.

#include <cmath>
#include <cuda_runtime.h>

#define BLOCK 16

__global__ void brighten(const float *img, float *out, int width, int height, float gamma)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < height && col < width) {
        float v = powf(img[row * width + col], gamma);
        out[row * width + col] = fminf(v, 1.0f);
    }
}

void brighten_on_device(const float *d_img, float *d_out, int width, int height)
{
    dim3 block(BLOCK, BLOCK);
    dim3 grid((height + BLOCK - 1) / BLOCK, (width + BLOCK - 1) / BLOCK);
    brighten<<<grid, block>>>(d_img, d_out, width, height, 0.8f);
    cudaDeviceSynchronize();
}
