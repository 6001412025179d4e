// syn_brdis: the synthetic branch-distribution benchmark (SYN-BRDIS) of
// Muller & Hoffmann, used in Lou & Muller (PMAM 2024), Tables 1 and 3.
// The paper gives no listing; this version is written for copper from its
// description: a conditional on threadIdx.x that diverges inside every warp,
// whose two branches both run the same expensive loop nest (outer loop over
// N, inner loop over M) and differ only in a cheap final statement. Branch
// distribution hoists the common loop nest out of the conditional.

__global__ void syn_brdis(float *A, float *B, int N, int M) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    if (threadIdx.x % 2 == 0) {
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < M; j++) {
                acc += A[i * M + j] * 0.5f;
            }
        }
        B[tid] = acc + 1.0f;
    } else {
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < M; j++) {
                acc += A[i * M + j] * 0.5f;
            }
        }
        B[tid] = acc - 1.0f;
    }
}
