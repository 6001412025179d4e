// addSub3: Muller & Hoffmann (POPL 2021), Fig. 1, body addS3 (and Fig. 5).
// Like addSub2, but each thread first copies its element of A into the
// shared array As and reads it from there inside the loop.
//
// Deviation from the figure: the paper declares `__shared__ int
// As[blockDim.x]` (not legal CUDA: the size must be a constant) and reads
// `As[i]` with the global index i, which leaves the block's segment for
// every block but the first. Here As has the fixed size of the block
// (BLOCK_SIZE = 256, the launch's blockDim.x) and is indexed by threadIdx.x.
// Each thread reads back only the element it wrote, so no barrier is needed.

#define BLOCK_SIZE 256

__global__ void addSub3(int *A, int *B, int w, int h) {
    __shared__ int As[BLOCK_SIZE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    As[threadIdx.x] = A[i];
    for (int j = 0; j < h; j += 2) {
        B[j * w + i] += As[threadIdx.x];
        B[(j + 1) * w + i] -= As[threadIdx.x];
    }
}
