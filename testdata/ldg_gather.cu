// ldg_gather: an embedding lookup as recommendation and NLP code writes
// it: each thread copies one element of the row `ids[r]` of a table, read
// through the read-only cache with `__ldg`. Written for copper. The table
// rows are gathered by data (the ids), the columns walk consecutively.

#include <cuda_runtime.h>

__global__ void embed_lookup(const float *__restrict__ table, const int *__restrict__ ids,
                             float *__restrict__ out, int rows, int dim)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows * dim) {
        return;
    }
    const int r = i / dim;
    const int c = i - r * dim;
    const int id = __ldg(ids + r);
    out[i] = __ldg(&table[id * dim + c]);
}

int main()
{
    const int vocab = 1000, rows = 96, dim = 64;
    float *table, *out;
    int *ids;
    cudaMalloc(&table, vocab * dim * sizeof(float));
    cudaMalloc(&ids, rows * sizeof(int));
    cudaMalloc(&out, rows * dim * sizeof(float));
    embed_lookup<<<(rows * dim + 255) / 256, 256>>>(table, ids, out, rows, dim);
    cudaDeviceSynchronize();
    return 0;
}
