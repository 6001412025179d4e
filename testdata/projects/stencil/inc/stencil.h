// stencil.h: sizes, types and helpers shared by the stencil project's
// kernels (a small project written for copper's tests: a header included
// from the .cu, found with -I inc or copper.toml's include_dirs).
#pragma once

#include <cuda_runtime.h>
#include "clamp.h"

#ifndef BLOCK_SIZE
#define BLOCK_SIZE 16
#endif
#define RADIUS 2
#define IDX(r, c, w) ((r) * (w) + (c))

typedef float real;

typedef struct {
    int width;
    int height;
} Grid2D;

__constant__ real weights[2 * RADIUS + 1];

__device__ real square(real x) {
    return x * x;
}
