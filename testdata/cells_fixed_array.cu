// cells_fixed_array: per-cell histograms kept in an array of structs with
// a fixed-size array member, as grid codes write them. Written for copper.
// `cell_sum` reads `cells[i].v[k]` in a loop over the member (a run-time
// member index, the same in every lane); `cell_bin` adds one sample to the
// bin it falls in with `atomicAdd(&cells[c].v[b], 1.0f)` (a member index
// that differs between lanes); `cell_copy` copies whole cells through a
// local (`Cell c = cells[i]; c.v[j]`).

#include <cuda_runtime.h>

#define NBINS 4

struct Cell {
    float v[NBINS];
    int n;
};

__global__ void cell_sum(const Cell *cells, float *out, int ncells) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < ncells) {
        float acc = 0.0f;
        for (int k = 0; k < NBINS; ++k) {
            acc += cells[i].v[k];
        }
        out[i] = acc / (float)(cells[i].n + 1);
    }
}

__global__ void cell_bin(Cell *cells, const int *cell_of, const float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int c = cell_of[i];
        int b = static_cast<int>(x[i] * NBINS);
        b = min(max(b, 0), NBINS - 1);
        atomicAdd(&cells[c].v[b], 1.0f);
        atomicAdd(&cells[c].n, 1);
    }
}

__global__ void cell_copy(const Cell *in, Cell *out, unsigned int ncells, int shift) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < ncells) {
        Cell c = in[i];
        Cell r;
        for (int j = 0; j < NBINS; j++) {
            r.v[j] = c.v[(j + shift) % NBINS];
        }
        r.n = c.n;
        out[i] = r;
    }
}

int main() {
    const int ncells = 300, n = 1000;
    Cell *d_cells, *d_out;
    float *d_sum, *d_x;
    int *d_cell_of;
    cudaMalloc(&d_cells, ncells * sizeof(Cell));
    cudaMalloc(&d_out, ncells * sizeof(Cell));
    cudaMalloc(&d_sum, ncells * sizeof(float));
    cudaMalloc(&d_x, n * sizeof(float));
    cudaMalloc(&d_cell_of, n * sizeof(int));
    cell_sum<<<(ncells + 127) / 128, 128>>>(d_cells, d_sum, ncells);
    cell_bin<<<(n + 255) / 256, 256>>>(d_cells, d_cell_of, d_x, n);
    cell_copy<<<(ncells + 127) / 128, 128>>>(d_cells, d_out, ncells, 1);
    cudaDeviceSynchronize();
    return 0;
}
