// gauss_step: one step k of Gaussian elimination on an n x n row-major
// matrix, as a student writes it after the Rodinia version: first the
// multipliers of column k, then every row below k minus its multiple of
// row k, one thread per element in 16 x 16 blocks. Written for copper.
// The update's row index comes from threadIdx.x, so a warp's lanes touch
// elements n apart (GPUDrano's uncoalesced Fan2).

#include <cstdio>
#include <cuda_runtime.h>

#define TB 16

__global__ void multipliers(const float *a, float *m, int n, int k)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x + k + 1;
    if (r < n)
        m[r] = a[r * n + k] / a[k * n + k];
}

__global__ void eliminate(float *a, float *b, const float *m, int n, int k)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x + k + 1;   // row below the pivot
    int c = blockIdx.y * blockDim.y + threadIdx.y + k;       // column from the pivot on
    if (r >= n || c >= n)
        return;
    a[r * n + c] -= m[r] * a[k * n + c];
    if (c == k)
        b[r] -= m[r] * b[k];
}

int main()
{
    const int n = 512;
    float *a, *b, *m;
    cudaMalloc(&a, n * n * sizeof(float));
    cudaMalloc(&b, n * sizeof(float));
    cudaMalloc(&m, n * sizeof(float));
    cudaMemset(a, 0, n * n * sizeof(float));
    cudaMemset(b, 0, n * sizeof(float));
    for (int k = 0; k < n - 1; k++) {
        int left = n - 1 - k;
        multipliers<<<(left + 255) / 256, 256>>>(a, m, n, k);
        dim3 threads(TB, TB);
        dim3 blocks((left + TB - 1) / TB, (n - k + TB - 1) / TB);
        eliminate<<<blocks, threads>>>(a, b, m, n, k);
    }
    cudaDeviceSynchronize();
    printf("done\n");
    cudaFree(a);
    cudaFree(b);
    cudaFree(m);
    return 0;
}
