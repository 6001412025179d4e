// discrete Laplacian of a 512 x 512 image, 5-point
// (size fixed for the assignment)
__global__ void laplace512(const float *img, float *lap)
{
    const int N = 512;
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= 1 && x < N - 1 && y >= 1 && y < N - 1) {
        lap[y * N + x] = img[y * N + (x - 1)] + img[y * N + (x + 1)]
                       + img[(y - 1) * N + x] + img[(y + 1) * N + x]
                       - 4.0f * img[y * N + x];
    }
}
