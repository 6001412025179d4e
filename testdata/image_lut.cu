// image_lut: tone mapping of an 8-bit grey image through a 256-entry
// lookup table, then a vignette from a second, per-column table. Written
// for copper after the usual `dst[i] = lut[src[i]]` of image-processing
// code. The first table is indexed by pixel values (data): on a smooth
// image neighbouring pixels hit the same few entries, on a noisy one they
// scatter. The second is indexed by the column, so a warp reads it
// contiguously.

#include <cuda_runtime.h>

#define LUT_SIZE 256

__global__ void tone_map(const unsigned char *__restrict__ src, float *__restrict__ dst,
                         const float *__restrict__ lut, const float *__restrict__ vignette,
                         int width, int pixels)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < pixels) {
        const unsigned int level = src[i];
        const int column = i % width;
        dst[i] = lut[level & (LUT_SIZE - 1)] * vignette[column];
    }
}
