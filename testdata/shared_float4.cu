// Staging float4 data through shared memory: a block reverses its tile,
// and a 2-D tile of float2 is read transposed. 16- and 8-byte shared
// accesses touch 4 and 2 bank words per lane. Written for copper.

#include <cuda_runtime.h>

#define TILE 128

__global__ void reverse_tile(const float4* in, float4* out, int n) {
    __shared__ float4 tile[TILE];
    int i = blockIdx.x * TILE + threadIdx.x;
    if (i < n) {
        tile[threadIdx.x] = in[i];
    }
    __syncthreads();
    int j = blockIdx.x * TILE + (TILE - 1 - threadIdx.x);
    if (j < n) {
        out[i] = tile[TILE - 1 - threadIdx.x];
    }
}

__global__ void transpose2(const float2* in, float2* out, int width) {
    __shared__ float2 t[16][16];
    int x = blockIdx.x * 16 + threadIdx.x;
    int y = blockIdx.y * 16 + threadIdx.y;
    t[threadIdx.y][threadIdx.x] = in[y * width + x];
    __syncthreads();
    int tx = blockIdx.y * 16 + threadIdx.x;
    int ty = blockIdx.x * 16 + threadIdx.y;
    float2 v = t[threadIdx.x][threadIdx.y];
    v.y = -v.y;
    out[ty * width + tx] = v;
}
