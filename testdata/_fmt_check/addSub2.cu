// addSub2: Muller & Hoffmann (POPL 2021), Fig. 1, body addS2 (also the
// unoptimized kernel of Lou & Muller (PMAM 2024), Fig. 2, there named
// addSubArray2). One thread per column i; the loop walks the rows two at a
// time, so a warp touches 32 consecutive elements of B (coalesced). A[i] is
// read from global memory on every iteration: the global-to-shared rewrite
// of COpPER moves it to shared memory. Assumes h is even.

__global__ void addSub2(int *A, int *B, int w, int h) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < h; j += 2) {
        B[j * w + i] += A[i];
        B[(j + 1) * w + i] -= A[i];
    }
}
