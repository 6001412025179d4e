// Generic cooperative-group handles: cg::thread_group variables holding
// the block or a tile made with the run-time-size tiled_partition(g, n),
// with size(), thread_rank() and sync(); and a thread_block_tile<32>'s
// meta_group_rank()/meta_group_size().
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#define THREADS 256

// A block's sum in shared memory, the tree of the programming guide's
// reduction, through a generic group handle.
__global__ void block_sum(const int *in, int *out, int n)
{
    __shared__ int temp[THREADS];
    cg::thread_group block = cg::this_thread_block();
    int lane = block.thread_rank();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    temp[lane] = i < n ? in[i] : 0;
    block.sync();
    for (int s = block.size() / 2; s > 0; s /= 2) {
        if (lane < s)
            temp[lane] += temp[lane + s];
        block.sync();
    }
    if (lane == 0)
        out[blockIdx.x] = temp[0];
}

// Where each thread sits: in a 16-wide tile made at run time, and among
// the block's warps.
__global__ void tile_ranks(int *rank, int *warps)
{
    cg::thread_block b = cg::this_thread_block();
    cg::thread_group tile = cg::tiled_partition(b, 16);
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(b);
    int i = blockIdx.x * b.size() + b.thread_rank();
    rank[i] = tile.thread_rank() + 100 * tile.size();
    tile.sync();
    warps[i] = warp.meta_group_rank() * 1000 + warp.meta_group_size();
}

int main()
{
    int *in, *out, *rank, *warps;
    cudaMalloc(&in, 1000 * sizeof(int));
    cudaMalloc(&out, 4 * sizeof(int));
    block_sum<<<4, THREADS>>>(in, out, 1000);
    cudaMalloc(&rank, 2 * 96 * sizeof(int));
    cudaMalloc(&warps, 2 * 96 * sizeof(int));
    tile_ranks<<<2, 96>>>(rank, warps);
    cudaDeviceSynchronize();
    return 0;
}
