// mandelbrot: escape-time iteration count per pixel, one thread per pixel
// (after the SDK mandelbrot benchmark of Muller & Hoffmann, Table 1).
// Written for copper. The inner loop runs until the point escapes or
// maxIter is reached, so its trip count depends on the data and the loop
// diverges inside warps; maxIter bounds it.

__global__ void mandelbrot(int *out, int w, int h, float x0, float y0, float scale, int maxIter) {
    int px = blockIdx.x * blockDim.x + threadIdx.x;
    int py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= w || py >= h) {
        return;
    }
    float cr = x0 + px * scale;
    float ci = y0 + py * scale;
    float zr = 0.0f;
    float zi = 0.0f;
    int iter = 0;
    while (zr * zr + zi * zi <= 4.0f && iter < maxIter) {
        float t = zr * zr - zi * zi + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
        iter++;
    }
    out[py * w + px] = iter;
}
