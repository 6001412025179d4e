// 5-point smoothing with the ends clamped (edge values repeated)
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

#define THREADS 256

__global__ void smooth5(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;

    // indices clamped into [0, n-1]
    float a = in[max(i - 2, 0)];
    float b = in[max(i - 1, 0)];
    float c = in[i];
    float d = in[min(i + 1, n - 1)];
    float e = in[min(i + 2, n - 1)];
    out[i] = 0.1f * a + 0.2f * b + 0.4f * c + 0.2f * d + 0.1f * e;
}

int main()
{
    int n = 1 << 20;
    size_t size = n * sizeof(float);
    float *h_in = (float *)malloc(size);
    float *h_out = (float *)malloc(size);
    for (int i = 0; i < n; i++) h_in[i] = (float)(i & 255);

    float *d_in, *d_out;
    cudaMalloc((void **)&d_in, size);
    cudaMalloc((void **)&d_out, size);
    cudaMemcpy(d_in, h_in, size, cudaMemcpyHostToDevice);

    int blocks = (n + THREADS - 1) / THREADS;
    smooth5<<<blocks, THREADS>>>(d_in, d_out, n);
    cudaMemcpy(h_out, d_out, size, cudaMemcpyDeviceToHost);

    printf("%f %f\n", h_out[0], h_out[n - 1]);
    cudaFree(d_in); cudaFree(d_out);
    free(h_in); free(h_out);
    return 0;
}
