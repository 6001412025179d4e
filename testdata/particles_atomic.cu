// particles_atomic: particle binning with atomics on struct fields, as in
// a particle-in-cell or SPH code. Written for copper. Each thread adds its
// particle to the cell it falls in: `atomicAdd(&cells[c].count, 1)` on an
// int field and `atomicAdd(&cells[c].mass, m)` on a float field of an
// array of structs, and its force to the cell's `float3` accumulator one
// component at a time (`atomicAdd(&acc[c].x, f.x)`). The second kernel
// keeps a block's nearest particle in a `__shared__` struct updated with
// `atomicMin(&best.idx, …)` after an `atomicExch` of its distance.

#include <cuda_runtime.h>

struct Cell {
    int count;
    float mass;
};

struct Nearest {
    float dist;
    int idx;
};

__global__ void bin_particles(Cell *cells, float3 *acc, const int *cell_of,
                              const float *mass, const float3 *force, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    int c = cell_of[i];
    float3 f = force[i];
    atomicAdd(&cells[c].count, 1);
    atomicAdd(&cells[c].mass, mass[i]);
    atomicAdd(&acc[c].x, f.x);
    atomicAdd(&acc[c].y, f.y);
    atomicAdd(&acc[c].z, f.z);
}

__global__ void nearest_in_block(const float *dist, int *best_idx, float *best_dist,
                                 float radius, int n) {
    __shared__ Nearest best;
    if (threadIdx.x == 0) {
        best.dist = radius;
        best.idx = n;
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && dist[i] < radius) {
        atomicMin(&best.idx, i);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        float old = atomicExch(&best.dist, 0.0f);
        best_idx[blockIdx.x] = best.idx;
        best_dist[blockIdx.x] = old;
    }
}

int main() {
    const int n = 1000, ncells = 64;
    Cell *d_cells;
    float3 *d_acc, *d_force;
    int *d_cell_of, *d_best;
    float *d_mass, *d_dist, *d_bdist;
    cudaMalloc(&d_cells, ncells * sizeof(Cell));
    cudaMalloc(&d_acc, ncells * sizeof(float3));
    cudaMalloc(&d_cell_of, n * sizeof(int));
    cudaMalloc(&d_mass, n * sizeof(float));
    cudaMalloc(&d_force, n * sizeof(float3));
    cudaMalloc(&d_dist, n * sizeof(float));
    cudaMalloc(&d_best, 4 * sizeof(int));
    cudaMalloc(&d_bdist, 4 * sizeof(float));
    bin_particles<<<(n + 255) / 256, 256>>>(d_cells, d_acc, d_cell_of, d_mass, d_force, n);
    nearest_in_block<<<(n + 255) / 256, 256>>>(d_dist, d_best, d_bdist, 0.5f, n);
    cudaDeviceSynchronize();
    return 0;
}
