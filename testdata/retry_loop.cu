// retry_loop: a while loop whose counter moves on every path, with a
// divergent `continue` and a uniform `break` on a parameter. Written for
// copper. Each thread scales its element until a budget of rounds is spent
// or the value saturates.

#define LIMIT 1000

__global__ void retry_loop(int *x, int n, int rounds, int stop_after) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) {
        return;
    }
    int v = x[t];
    int k = 0;
    while (k < rounds) {
        k++;
        if (k > stop_after) {
            break;
        }
        if (v > LIMIT) {
            continue;
        }
        v = v * 2 + 1;
    }
    x[t] = v;
}
