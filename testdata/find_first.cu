// find_first: for each row of a rows x n matrix, the column of the first
// zero, or -1. Written for copper. One thread per row; the `break` leaves
// the loop at a different column in every lane (a divergent exit), and
// the bounds guard is an early `return`.

#include <cstdio>
#include <cuda_runtime.h>

__global__ void find_first(const int *a, int *pos, int rows, int n) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) {
        return;
    }
    int found = -1;
    for (int j = 0; j < n; j++) {
        if (a[r * n + j] == 0) {
            found = j;
            break;
        }
    }
    pos[r] = found;
}

int main() {
    const int rows = 200, n = 48;
    int *a, *pos;
    cudaMalloc(&a, rows * n * sizeof(int));
    cudaMalloc(&pos, rows * sizeof(int));
    cudaMemset(a, 1, rows * n * sizeof(int));
    find_first<<<2, 128>>>(a, pos, rows, n);
    cudaDeviceSynchronize();
    printf("done\n");
    cudaFree(a);
    cudaFree(pos);
    return 0;
}
