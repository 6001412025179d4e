// blur.h: sizes and helpers shared by the blur kernels (blur.cu includes
// it; build: nvcc -c blur.cu). TILE may be set on the command line
// (-DTILE=32); RADIUS is fixed. Written for copper.
#pragma once

#ifndef TILE
#define TILE 16
#endif

#define RADIUS 2
#define DIAMETER (2 * RADIUS + 1)

// Clamps an index to [0, n - 1] (edge pixels repeat).
__device__ inline int clamp_index(int i, int n) {
    return min(max(i, 0), n - 1);
}

// Sets the RADIUS-wide left and right borders of every row of a w x h
// image to 0: one thread per row.
__global__ void zero_borders(float *img, int w, int h) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < h) {
        for (int k = 0; k < RADIUS; k++) {
            img[r * w + k] = 0.0f;
            img[r * w + (w - 1 - k)] = 0.0f;
        }
    }
}
