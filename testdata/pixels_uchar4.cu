// RGBA image kernels over uchar4 pixels (4 bytes, one 32-bit access):
// grayscale conversion and a horizontal box blur, on a 2-D launch with
// WIDTH/HEIGHT given on the command line (-DWIDTH=… -DHEIGHT=…).
// Written for copper.

#include <cuda_runtime.h>

#ifndef WIDTH
#define WIDTH 64
#endif
#ifndef HEIGHT
#define HEIGHT 32
#endif

__global__ void grayscale(const uchar4* __restrict__ rgba, uchar4* __restrict__ gray) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < WIDTH && y < HEIGHT) {
        uchar4 px = rgba[y * WIDTH + x];
        float l = 0.299f * px.x + 0.587f * px.y + 0.114f * px.z;
        unsigned char g = (unsigned char)fminf(l, 255.0f);
        gray[y * WIDTH + x] = make_uchar4(g, g, g, px.w);
    }
}

__global__ void blur_row(const uchar4* in, uchar4* out) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= 1 && x < WIDTH - 1 && y < HEIGHT) {
        const uchar4 l = in[y * WIDTH + x - 1];
        const uchar4 c = in[y * WIDTH + x];
        const uchar4 r = in[y * WIDTH + x + 1];
        uchar4 o;
        o.x = (l.x + 2 * c.x + r.x) / 4;
        o.y = (l.y + 2 * c.y + r.y) / 4;
        o.z = (l.z + 2 * c.z + r.z) / 4;
        o.w = c.w;
        out[y * WIDTH + x] = o;
    }
}
