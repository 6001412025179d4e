// fan2_fixed: the fixed Fan2 snippet of Alur et al., "GPUDrano" (Fig. 2b).
// Each thread now owns a column y = tid + t and the loop walks the rows x,
// so a warp reads A[N * x + y] and A[N * t + y] at consecutive addresses
// (abstract value 1: coalesced) and M[N * x + t] at one address (value 0).
// The paper measured a 25% speed-up over fan2 for N = 1024.

__global__ void fan2_fixed(float *M, float *A, float *B, int N, int t) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid + t >= N)
        return;
    int y = tid + t;
    for (int x = t + 1; x < N; x++) {
        int xt = N * x + t;
        int xy = N * x + y;
        int ty = N * t + y;
        A[xy] -= M[xt] * A[ty];
        if (y == t)
            B[x] -= M[xt] * B[t];
    }
}
