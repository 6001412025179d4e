// capped_sums: per row, the running sum of its entries, stopped at `cap`
// by an early `return` from a device function inside its loop. Written for
// copper. The return leaves the inlined function at a different iteration
// in every lane; a `continue` skips negative entries.

__device__ int capped_sum(const int *v, int n, int cap) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        if (v[i] < 0) {
            continue;
        }
        s += v[i];
        if (s > cap) {
            return cap;
        }
    }
    return s;
}

__global__ void capped_sums(const int *a, int *out, int rows, int n, int cap) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        out[r] = capped_sum(a + r * n, n, cap);
    }
}
