// dmvm: dense matrix-vector multiplication result = matrix * vector for an
// h x w row-major matrix, one thread per row. After the DMVM benchmark of
// Lou & Muller (PMAM 2024), a ChatGPT-written "novice" kernel; the paper
// prints no listing, so this version is written for copper from its
// description: no divergence inside the loop, no shared memory, parameters
// w and h. Neighbouring threads read the matrix w elements apart.

__global__ void dmvm(float *matrix, float *vector, float *result, int w, int h) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < h) {
        float sum = 0.0f;
        for (int col = 0; col < w; col++) {
            sum += matrix[row * w + col] * vector[col];
        }
        result[row] = sum;
    }
}
