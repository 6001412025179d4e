// stencil2d_clamped: one Jacobi step of a 5-point blur over a width x
// height image, one thread per pixel in 2-D blocks. Written for copper in
// the style of image-processing code: neighbours at the border are clamped
// with `c == 0 ? c : c - 1`, so each neighbour index is a select of two
// affine indices. A warp reads one row of 32 pixels and its neighbours:
// every access is contiguous (one sector more when it starts mid-sector),
// none is strided.

#include <cuda_runtime.h>

#ifndef BLOCK_X
#define BLOCK_X 32
#endif
#ifndef BLOCK_Y
#define BLOCK_Y 8
#endif

__global__ void __launch_bounds__(BLOCK_X * BLOCK_Y)
blur5(const float *__restrict__ in, float *__restrict__ out, int width, int height)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (c >= width || r >= height)
        return;
    const int west = c == 0 ? c : c - 1;
    const int east = c == width - 1 ? c : c + 1;
    const int north = r == 0 ? r : r - 1;
    const int south = r == height - 1 ? r : r + 1;
    const float centre = in[r * width + c];
    const float sum = in[r * width + west] + in[r * width + east]
                    + in[north * width + c] + in[south * width + c];
    out[r * width + c] = 0.5f * centre + 0.125f * sum;
}
