// colmajor_split: 1-D kernels over an n x n matrix stored column-major (the
// cuBLAS layout: element (r, c) at a[c * n + r]). The thread index is split
// into a row and a column the way many first kernels do it (row = idx / n,
// col = idx % n), so consecutive threads take consecutive columns and touch
// elements n apart. Exchanging the split (row = idx % n, col = idx / n)
// would make them touch consecutive elements.
// - scale_rows_colmajor: every element scaled by its row's factor; the
//   exchanged split covers the same elements (copper's split exchange).
// - weighted_pairs: writes out[idx], which depends on which thread took
//   which element, so the exchanged split would compute something else
//   (copper leaves it, and says so).

#include <cuda_runtime.h>

#define THREADS 256

__global__ void scale_rows_colmajor(float *a, const float *scale, int n)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int row = idx / n;
    int col = idx % n;
    if (idx < n * n) {
        a[col * n + row] *= scale[row];
    }
}

__global__ void weighted_pairs(const float2 *in, float *out, int n)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int r = idx / n;
    int c = idx % n;
    if (idx < n * n) {
        float2 p = in[c * n + r];
        out[idx] = static_cast<float>(r) * (p.x + p.y);
    }
}

void scale_on_device(float *d_a, const float *d_scale, int n)
{
    int blocks = (n * n + THREADS - 1) / THREADS;
    scale_rows_colmajor<<<blocks, THREADS>>>(d_a, d_scale, n);
}
