// scaled_transpose: out = alpha * in^T for an n x n single-precision
// matrix whose size is not a multiple of the 16 x 16 block (a homework's
// "scale and transpose" step). Written for copper. Neighbouring threads
// read neighbouring elements of in but write elements n apart in out; the
// threads past the edge return early, leaving the last row and column of
// blocks partly idle.

#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

constexpr int kBlock = 16;

__global__ void scaleTranspose(const float *in, float *out, float alpha, int n)
{
    const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
    if (x >= n || y >= n)
        return;   // past the edge of the matrix
    out[x * n + y] = alpha * in[y * n + x];
}

int main()
{
    const int n = 1000;
    std::vector<float> host(n * n);
    for (int i = 0; i < n * n; ++i)
        host[i] = static_cast<float>(i % 97);

    float *d_in = nullptr;
    float *d_out = nullptr;
    cudaMalloc(&d_in, n * n * sizeof(float));
    cudaMalloc(&d_out, n * n * sizeof(float));
    cudaMemcpy(d_in, host.data(), n * n * sizeof(float), cudaMemcpyHostToDevice);

    const dim3 block(kBlock, kBlock);
    const dim3 grid((n + kBlock - 1) / kBlock, (n + kBlock - 1) / kBlock);
    scaleTranspose<<<grid, block>>>(d_in, d_out, 0.5f, n);
    cudaMemcpy(host.data(), d_out, n * n * sizeof(float), cudaMemcpyDeviceToHost);
    printf("out[1] = %f\n", host[1]);

    cudaFree(d_in);
    cudaFree(d_out);
    return 0;
}
