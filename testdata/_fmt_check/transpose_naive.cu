// transpose_naive: out = transpose(in) for a height x width row-major
// input, one thread per element, straight from global to global. Written
// for copper. The reads are coalesced; the writes are height elements apart
// between neighbouring threads (uncoalesced).

__global__ void transpose_naive(float *out, float *in, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        out[x * height + y] = in[y * width + x];
    }
}
