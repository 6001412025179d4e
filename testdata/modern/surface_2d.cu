// Surface objects read and written with surf2Dread/surf2Dwrite and the
// 1-D forms, as the SDK's simpleSurfaceWrite and image-processing samples
// use them: the x coordinate is in bytes. copper bounds each access as a
// global read or write of a W×H array of T whose extents the parameter
// file gives (`surf.width`, `surf.height`, in elements); a coordinate out
// of range is an error (cudaBoundaryModeTrap, the default).
#include <cuda_runtime.h>

// Brighten an image in place, reading into a variable.
__global__ void brighten(cudaSurfaceObject_t img, float gain, int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        float v;
        surf2Dread(&v, img, x * sizeof(float), y);
        surf2Dwrite(v * gain, img, x * sizeof(float), y);
    }
}

__device__ float average4(cudaSurfaceObject_t s, int x, int y)
{
    float a = surf2Dread<float>(s, x * 4, y);
    float b = surf2Dread<float>(s, (x + 1) * 4, y);
    float c = surf2Dread<float>(s, x * 4, y + 1);
    float d = surf2Dread<float>(s, (x + 1) * 4, y + 1, cudaBoundaryModeTrap);
    return 0.25f * (a + b + c + d);
}

// Halve an image: each output texel averages a 2x2 block of the input.
__global__ void downsample(cudaSurfaceObject_t src, cudaSurfaceObject_t dst, int outW, int outH)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < outW && y < outH)
        surf2Dwrite(average4(src, 2 * x, 2 * y), dst, x * sizeof(float), y);
}

// A 1-D surface of ints: a prefix of counts copied with the 1-D forms.
__global__ void copy_counts(cudaSurfaceObject_t from, cudaSurfaceObject_t to, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int c = surf1Dread<int>(from, i * sizeof(int));
        surf1Dwrite(c + 1, to, i * sizeof(int));
    }
}

// Host code: a surface object over a cudaArray made for surface load/store.
void run_brighten(float *h, int width, int height)
{
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t arr;
    cudaMallocArray(&arr, &desc, width, height, cudaArraySurfaceLoadStore);
    cudaMemcpy2DToArray(arr, 0, 0, h, width * sizeof(float), width * sizeof(float), height,
                        cudaMemcpyHostToDevice);
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaSurfaceObject_t surf = 0;
    cudaCreateSurfaceObject(&surf, &res);
    dim3 block(16, 16);
    dim3 grid((width + 15) / 16, (height + 15) / 16);
    brighten<<<grid, block>>>(surf, 1.25f, width, height);
    cudaDestroySurfaceObject(surf);
    cudaFreeArray(arr);
}
