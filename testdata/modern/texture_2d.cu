// Texture objects read with tex2D and tex3D (unnormalized coordinates,
// point filtering, clamp addressing), as the SDK's image filters and volume
// samples create them: copper bounds each read as a global load of a
// read-only W×H (×D) array of T whose extents the parameter file gives
// (`tex.width`, `tex.height`, `tex.depth`).
#include <cuda_runtime.h>

// Sample at texel centres, like simpleTexture's transform kernel.
__global__ void copy_texels(cudaTextureObject_t src, float *dst, int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height)
        dst[y * width + x] = tex2D<float>(src, x + 0.5f, y + 0.5f);
}

__device__ float box3(cudaTextureObject_t img, float x, float y)
{
    float sum = 0.0f;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            sum += tex2D<float>(img, x + dx, y + dy);
    return sum / 9.0f;
}

// A 3x3 box filter: the texture's clamp addressing answers the reads past
// the image's edges.
__global__ void box_filter(cudaTextureObject_t img, float *out, int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height)
        out[y * width + x] = box3(img, x + 0.5f, y + 0.5f);
}

// Integer coordinates (converted to float by tex2D) into an int texture.
__global__ void label_rows(cudaTextureObject_t labels, int *count, int width)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x < width && tex2D<int>(labels, x, y) != 0)
        atomicAdd(&count[y], 1);
}

// A slice through a volume, like the SDK's volume samples.
__global__ void volume_slice(cudaTextureObject_t vol, float *out, int nx, int ny, float z)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < nx && y < ny)
        out[y * nx + x] = tex3D<float>(vol, x + 0.5f, y + 0.5f, z);
}

// Host code: a pitched 2-D texture object over a cudaArray.
void run_copy(const float *h, float *d_out, int width, int height)
{
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t arr;
    cudaMallocArray(&arr, &desc, width, height);
    cudaMemcpy2DToArray(arr, 0, 0, h, width * sizeof(float), width * sizeof(float), height,
                        cudaMemcpyHostToDevice);
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td = {};
    td.addressMode[0] = cudaAddressModeClamp;
    td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 0;
    cudaTextureObject_t tex = 0;
    cudaCreateTextureObject(&tex, &res, &td, NULL);
    dim3 block(16, 16);
    dim3 grid((width + 15) / 16, (height + 15) / 16);
    copy_texels<<<grid, block>>>(tex, d_out, width, height);
    cudaDestroyTextureObject(tex);
    cudaFreeArray(arr);
}
