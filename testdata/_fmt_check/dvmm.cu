// dvmm: dense vector-matrix multiplication result = vector * matrix for an
// h x w row-major matrix, one thread per column. After the DVMM benchmark of
// Lou & Muller (PMAM 2024): DMVM with the roles of vector and matrix
// swapped, loop over h. Written for copper from that description. Every
// thread reads every element of the vector once per iteration, which makes
// moving the vector to shared memory pay off (the paper's global-to-shared
// result for this kernel).

__global__ void dvmm(float *vector, float *matrix, float *result, int w, int h) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < w) {
        float sum = 0.0f;
        for (int row = 0; row < h; row++) {
            sum += vector[row] * matrix[row * w + col];
        }
        result[col] = sum;
    }
}
