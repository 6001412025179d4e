// elementwise: a buggy element-wise matrix addition C = A + B for an h x w
// row-major matrix. After the ElementWise benchmark of Lou & Muller (PMAM
// 2024), a ChatGPT-written "novice" kernel whose logic is wrong: it
// iterates over the rows of the matrices in every thread instead of using
// the thread index, so it gains nothing from parallelism. The paper prints
// no listing; this version is written for copper from that description.
// The thread's own row is computed and checked, but a redundant outer loop
// over all rows then does the whole matrix in every thread (all threads
// write the same values, so the result is still right, just h times slower).

__global__ void elementwise(float *A, float *B, float *C, int w, int h) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < h) {
        for (int i = 0; i < h; i++) {
            for (int j = 0; j < w; j++) {
                C[i * w + j] = A[i * w + j] + B[i * w + j];
            }
        }
    }
}
