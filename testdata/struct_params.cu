// struct_params: launch parameters bundled in a struct and a float2 passed
// by value, as image-processing code passes them. Written for copper.

#include <cuda_runtime.h>

struct ImageDesc {
    int width;
    int height;
    int pitch;  // elements per row, >= width
};

// Scales and offsets every pixel of a pitched image: out = in * s.x + s.y.
__global__ void scale_image(ImageDesc img, float2 s, const float *in, float *out) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < img.width && y < img.height) {
        int at = y * img.pitch + x;
        out[at] = in[at] * s.x + s.y;
    }
}

// Sums each row's first `img.width` pixels: one thread per row.
__global__ void row_sums(ImageDesc img, const float *in, float *sums) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < img.height) {
        float acc = 0.0f;
        for (int x = 0; x < img.width; ++x) {
            acc += in[row * img.pitch + x];
        }
        sums[row] = acc;
    }
}
