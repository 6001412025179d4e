// goto_kernel: a kernel that leaves a search loop with `goto` (unsupported
// by copper: goto and labels), next to the same search written with
// `break`, which copper must still read. Written for copper. Expected: one
// `unsupported` diagnostic for find_goto, and find_break parsed normally.

__global__ void find_goto(int *keys, int *pos, int key, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int found = -1;
    for (int j = 0; j < n; j++) {
        if (keys[t * n + j] == key) {
            found = j;
            goto done;
        }
    }
done:
    pos[t] = found;
}

__global__ void find_break(int *keys, int *pos, int key, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int found = -1;
    for (int j = 0; j < n; j++) {
        if (keys[t * n + j] == key) {
            found = j;
            break;
        }
    }
    pos[t] = found;
}
