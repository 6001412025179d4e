// define_sizes: column sums of a rows x N matrix, with the sizes given by
// object-like macros (BLOCK, N) and the index by a function-like macro
// IDX(r, c). Written for copper. Each block stages its partial column sums
// in a shared array of BLOCK elements; thread 0 averages them, and every
// thread writes its column sum minus the block's mean (a block-uniform
// value read back from shared memory).

#define BLOCK 256
#define N 1024
#define IDX(r,c) ((r)*N+(c))

__global__ void define_sizes(float *in, float *colsum, int rows) {
    __shared__ float partial[BLOCK];
    int c = blockIdx.x * BLOCK + threadIdx.x;
    float sum = 0.0f;
    for (int r = 0; r < rows; r++) {
        sum += in[IDX(r, c)];
    }
    partial[threadIdx.x] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int t = 0; t < BLOCK; t++) {
            total += partial[t];
        }
        partial[0] = total / BLOCK;
    }
    __syncthreads();
    float mean = partial[0];
    colsum[c] = sum - mean;
}
