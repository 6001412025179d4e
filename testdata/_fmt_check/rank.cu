// rank: the rank of every element of an array in numerical order (the
// number of elements smaller than it, ties broken by position, so the
// ranks are a permutation of 0..n-1). After the Rank benchmark of Lou &
// Muller (PMAM 2024) (taken there from GitHub). The paper prints no
// listing; this version is written for copper. Every thread scans the whole
// array, which could live in shared memory; the comparison diverges on the
// data.

__global__ void rank(int *data, int *ranks, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int v = data[i];
        int r = 0;
        for (int j = 0; j < n; j++) {
            int u = data[j];
            if (u < v || u == v && j < i) {
                r++;
            }
        }
        ranks[i] = r;
    }
}
