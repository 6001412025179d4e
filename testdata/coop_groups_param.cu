// The CUDA Programming Guide's cooperative-groups reduction: a generic
// cg::thread_group handed to a device function, which reads its rank and
// size and synchronizes through it; the block passed as the group.
#include <cooperative_groups.h>
#include <cstdio>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

// The group's sum of val through temp (one int per thread of the group).
__device__ int reduce_sum(cg::thread_group g, int *temp, int val)
{
    int lane = g.thread_rank();

    // Each iteration halves the number of active threads; each thread
    // adds its partial sum[i] to sum[lane+i].
    for (int i = g.size() / 2; i > 0; i /= 2) {
        temp[lane] = val;
        g.sync(); // wait for all threads to store
        if (lane < i)
            val += temp[lane + i];
        g.sync(); // wait for all threads to load
    }
    return val; // note: only thread 0 will return the full sum
}

// Each thread's sum over a grid-stride loop.
__device__ int thread_sum(int *input, int n)
{
    int sum = 0;

    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += blockDim.x * gridDim.x) {
        sum += input[i];
    }
    return sum;
}

__global__ void sum_kernel_block(int *sum, int *input, int n)
{
    int my_sum = thread_sum(input, n);

    extern __shared__ int temp[];
    auto g = cg::this_thread_block();
    int block_sum = reduce_sum(g, temp, my_sum);

    if (g.thread_rank() == 0)
        atomicAdd(sum, block_sum);
}

int main()
{
    int n = 1 << 13;
    int blockSize = 256;
    int nBlocks = (n + blockSize - 1) / blockSize;
    int sharedBytes = blockSize * sizeof(int);

    int *sum, *data;
    cudaMallocManaged(&sum, sizeof(int));
    cudaMallocManaged(&data, n * sizeof(int));
    for (int i = 0; i < n; i++)
        data[i] = 1;
    *sum = 0;

    sum_kernel_block<<<nBlocks, blockSize, sharedBytes>>>(sum, data, n);
    cudaDeviceSynchronize();
    printf("sum: %d\n", *sum);

    cudaFree(sum);
    cudaFree(data);
    return 0;
}
