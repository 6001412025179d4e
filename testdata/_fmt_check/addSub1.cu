// addSub1: Muller & Hoffmann (POPL 2021), Fig. 1, body addS1.
// The conditional of addSub0 is removed by unrolling: each thread j handles
// the row pair (2j, 2j+1), adding A to the even row and subtracting it from
// the odd one. No divergence, but neighbouring threads still touch B 2*w
// elements apart, so the accesses to B stay uncoalesced.

__global__ void addSub1(int *A, int *B, int w, int h) {
    for (int i = 0; i < w; i++) {
        int j = blockIdx.x * blockDim.x + threadIdx.x;
        B[2 * j * w + i] += A[i];
        B[(2 * j + 1) * w + i] -= A[i];
    }
}
