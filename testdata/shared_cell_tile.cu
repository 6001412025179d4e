// shared_cell_tile: a `__shared__` tile of structs with array members,
// as stencil and smoothing codes stage neighbours. Written for copper.
// Each block copies its 32 cells (`float v[3]` and an `int` tag: 16
// bytes) into `__shared__ Cell3 tile[32]`, then each thread averages
// component `c` of its own cell and its two neighbours (`tile[t].v[c]`, a
// run-time member index; `tile[t].v[2]`, a constant one).

#include <cuda_runtime.h>

#define TILE 32

struct Cell3 {
    float v[3];
    int tag;
};

__global__ void smooth(const Cell3 *cells, float *out, int comp, int n) {
    __shared__ Cell3 tile[TILE];
    int t = threadIdx.x;
    int i = blockIdx.x * TILE + t;
    if (i < n) {
        tile[t] = cells[i];
    }
    __syncthreads();
    if (i < n) {
        int l = t > 0 ? t - 1 : t;
        int r = (t < TILE - 1 && i + 1 < n) ? t + 1 : t;
        float s = tile[l].v[comp] + tile[t].v[comp] + tile[r].v[comp];
        out[i] = s / 3.0f + 0.001f * tile[t].v[2] * (float)tile[t].tag;
    }
}

int main() {
    const int n = 500;
    Cell3 *d_cells;
    float *d_out;
    cudaMalloc(&d_cells, n * sizeof(Cell3));
    cudaMalloc(&d_out, n * sizeof(float));
    smooth<<<(n + TILE - 1) / TILE, TILE>>>(d_cells, d_out, 1, n);
    cudaDeviceSynchronize();
    return 0;
}
