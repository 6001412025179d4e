// fan2: the Fan2 row-update kernel of Rodinia's Gaussian elimination, as
// simplified in Alur et al., "GPUDrano" (Fig. 2a, original snippet). For
// step t, thread tid updates row x = tid + t + 1 of the N x N matrix A and
// element x of B using the multipliers in column t of M. Each thread owns a
// row, so a warp reads A[N * x + y] and M[N * x + t] N elements apart: both
// accesses are uncoalesced (abstract value T in the paper).
// The paper's `tid` is the global thread index; the snippet's variables
// become local ints.

__global__ void fan2(float *M, float *A, float *B, int N, int t) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid + t + 1 >= N)
        return;
    int x = tid + t + 1;
    for (int y = t; y < N; y++) {
        int xt = N * x + t;
        int xy = N * x + y;
        int ty = N * t + y;
        A[xy] -= M[xt] * A[ty];
        if (y == t)
            B[x] -= M[xt] * B[t];
    }
}
