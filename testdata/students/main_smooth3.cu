// 3-point smoothing of a signal, the end points are left as they are
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

__global__ void smooth3(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1)
        out[i] = (in[i - 1] + in[i] + in[i + 1]) / 3.0f;   // average of the neighbours
}

int main(void)
{
    int n = 1 << 20;
    size_t size = n * sizeof(float);
    float *h_in = (float *)malloc(size);
    float *h_out = (float *)malloc(size);
    for (int i = 0; i < n; i++)
        h_in[i] = (float)(i % 10);

    float *d_in, *d_out;
    cudaMalloc((void **)&d_in, size);
    cudaMalloc((void **)&d_out, size);
    cudaMemcpy(d_in, h_in, size, cudaMemcpyHostToDevice);

    smooth3<<<(n + 255) / 256, 256>>>(d_in, d_out, n);

    cudaMemcpy(h_out, d_out, size, cudaMemcpyDeviceToHost);
    printf("out[1] = %f\n", h_out[1]);
    cudaFree(d_in); cudaFree(d_out);
    free(h_in); free(h_out);
    return 0;
}
