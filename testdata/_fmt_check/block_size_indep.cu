// cudaProcess: Alur, Devietti & Singhania, "Block-Size Independence for GPU
// Programs", Fig. 1 (from the SDK sample simpleCUDA2GL). Each thread paints
// pixel (x, y) with a colour that depends only on x and y, so the result
// does not depend on the block size. Adapted from the figure so that copper
// can read it: the paper's tid[0]/bdim[0]/bid[0] notation becomes
// threadIdx.x/blockDim.x/blockIdx.x, the uchar4 from make_uchar4 becomes
// two unsigned char locals (its x and z components; y and w are 0), and
// rgbToInt (not printed in the paper) is written here as a __device__
// helper that clamps each channel to [0, 255] and packs b, g, r.

__device__ float clamp255(float v) {
    return v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v;
}

__device__ unsigned int rgbToInt(float r, float g, float b) {
    unsigned int ir = (unsigned int)clamp255(r);
    unsigned int ig = (unsigned int)clamp255(g);
    unsigned int ib = (unsigned int)clamp255(b);
    return ib << 16 | ig << 8 | ir;
}

__global__ void cudaProcess(unsigned int *g_odata, int imgw) {
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int bw = blockDim.x;
    int bh = blockDim.y;
    int x = blockIdx.x * bw + tx;
    int y = blockIdx.y * bh + ty;
    unsigned char c4x = x & 0x20 ? 100 : 0;
    unsigned char c4z = y & 0x20 ? 100 : 0;
    g_odata[y * imgw + x] = rgbToInt(c4z, 0, c4x);
}
