// Integer sums of the rows of a row-major table, one thread per row,
// launched with a `dim3` grid by the file's own main.

__global__ void row_sums(const int *table, long long *sums, int n, int width) {
    int row = threadIdx.x + blockIdx.x * blockDim.x;
    if (row >= n) return;
    long long total = 0;
    for (int k = 0; k < width; ++k) {
        total += table[row * width + k];
    }
    sums[row] = total;
}

int main() {
    const int n = 300;
    const int width = 96;
    int *table;
    long long *sums;
    cudaMalloc(&table, n * width * sizeof(int));
    cudaMalloc(&sums, n * sizeof(long long));
    dim3 block(64);
    dim3 grid((n + block.x - 1) / block.x);
    row_sums<<<grid, block>>>(table, sums, n, width);
    cudaDeviceSynchronize();
    return 0;
}
