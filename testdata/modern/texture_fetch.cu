// Texture objects bound to linear memory, read with tex1Dfetch<T>: copper
// models each as a read-only global array of T (the parameter file names
// its elements after the parameter).
#include <cuda_runtime.h>

__device__ float smoothed(cudaTextureObject_t t, int i, int n)
{
    float left = i > 0 ? tex1Dfetch<float>(t, i - 1) : 0.0f;
    float right = i + 1 < n ? tex1Dfetch<float>(t, i + 1) : 0.0f;
    return 0.25f * left + 0.5f * tex1Dfetch<float>(t, i) + 0.25f * right;
}

__global__ void scale_fetch(cudaTextureObject_t in, float *out, float k, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = k * tex1Dfetch<float>(in, i);
}

__global__ void smooth_fetch(cudaTextureObject_t in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = smoothed(in, i, n);
}

__global__ void count_fetch(cudaTextureObject_t keys, int *hist, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&hist[tex1Dfetch<int>(keys, i) & 15], 1);
}
