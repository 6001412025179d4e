// The programming guide's reduction over warp tiles: the same generic
// reduce_sum, passed a thread_block_tile<32> through a helper that takes
// the group as a const cg::thread_group & (two levels of group
// parameters); each tile works in its own 32 ints of shared memory.
#include <cooperative_groups.h>
#include <cstdio>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__device__ int reduce_sum(cg::thread_group g, int *temp, int val)
{
    int lane = g.thread_rank();
    for (int i = g.size() / 2; i > 0; i /= 2) {
        temp[lane] = val;
        g.sync();
        if (lane < i)
            val += temp[lane + i];
        g.sync();
    }
    return val;
}

// A tile's sum of in[first..first + size), thread by thread, then
// combined through the tile.
__device__ int tile_sum(const cg::thread_group &tile, int *temp,
                        const int *in, int first, int n)
{
    int i = first + tile.thread_rank();
    int v = i < n ? in[i] : 0;
    return reduce_sum(tile, temp, v);
}

__global__ void sum_kernel_tiles(int *sums, const int *in, int n)
{
    extern __shared__ int temp[];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    int warp = blockIdx.x * tile.meta_group_size() + tile.meta_group_rank();
    int *mine = temp + 32 * tile.meta_group_rank();
    int s = tile_sum(tile, mine, in, 32 * warp, n);
    if (tile.thread_rank() == 0)
        sums[warp] = s;
}

int main()
{
    int n = 4096;
    int threads = 128;
    int blocks = (n + threads - 1) / threads;
    int *in, *sums;
    cudaMalloc(&in, n * sizeof(int));
    cudaMalloc(&sums, blocks * (threads / 32) * sizeof(int));
    sum_kernel_tiles<<<blocks, threads, threads * sizeof(int)>>>(sums, in, n);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(sums);
    return 0;
}
