// simple: Horga et al., "Symbolic identification of shared memory based
// bank conflicts for GPUs", Listing 1. Row 6 writes shared memory at the
// thread index (conflict-free); row 8 reads it at an index taken from the
// input `vector`, so the number of shared-memory transactions depends on
// the data: between 1 and 32 per warp. The paper launches one block of
// SIZE threads with every value of `vector` in [0, SIZE - 1].
// Typed in from the listing with one fix: the listing writes to `out`, but
// the parameter is named `output`. The thread index keeps the listing's
// `gridDim.x * blockIdx.x` (harmless with the single block it is run with).

#define SIZE 1024

__global__ void simple(int *vector, int *filter, int *output) {
    __shared__ int shared_filter[SIZE];
    int tid = gridDim.x * blockIdx.x + threadIdx.x;
    shared_filter[tid] = filter[tid];
    __syncthreads();
    output[tid] = shared_filter[vector[tid]];
}
