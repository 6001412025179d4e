// Cooperative groups as SDK samples and benchmark suites write them:
// block barriers and ranks, warp tiles with shuffles and cg::reduce, and
// the grid's size and rank.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cstdio>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

// Sum of each block's elements: a shared buffer, a block barrier, then a
// shuffle reduction in the first warp tile.
__global__ void block_sum(const float *in, float *out, int n) {
  __shared__ float buf[256];
  cg::thread_block block = cg::this_thread_block();
  unsigned int tid = block.thread_rank();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[tid] = (i < n) ? in[i] : 0.0f;
  block.sync();
  for (unsigned int s = block.size() / 2; s >= 32; s >>= 1) {
    if (tid < s) {
      buf[tid] += buf[tid + s];
    }
    block.sync();
  }
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  if (tid < 32) {
    float v = buf[tid];
    for (int offset = warp.size() / 2; offset > 0; offset /= 2) {
      v += warp.shfl_down(v, offset);
    }
    if (warp.thread_rank() == 0) {
      out[blockIdx.x] = v;
    }
  }
}

// Per-tile maxima with cg::reduce over tiles of 16 threads.
__global__ void tile_max(const int *in, int *out, int n) {
  cg::thread_block block = cg::this_thread_block();
  auto tile = cg::tiled_partition<16>(block);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = (i < n) ? in[i] : -2147483647;
  int m = cg::reduce(tile, v, cg::greater<int>());
  if (tile.thread_rank() == 0 && i < n) {
    out[i / 16] = m;
  }
}

// Butterfly sum within warps through shfl_xor; every lane gets the total.
__device__ float warp_total(cg::thread_block_tile<32> warp, float v) {
  for (int mask = 16; mask > 0; mask /= 2) {
    v += warp.shfl_xor(v, mask);
  }
  return v;
}

__global__ void warp_sums(const float *in, float *out, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = (i < n) ? in[i] : 0.0f;
  float total = warp_total(warp, v);
  float again = cg::reduce(warp, v, cg::plus<float>());
  if (i < n) {
    out[i] = total + again;
  }
}

// A grid-stride loop written with the grid group.
__global__ void grid_scale(float *a, float s, int n) {
  cg::grid_group grid = cg::this_grid();
  for (int i = grid.thread_rank(); i < n; i += grid.size()) {
    a[i] = a[i] * s;
  }
}

int main() {
  const int n = 1 << 14;
  const int threads = 256;
  const int blocks = (n + threads - 1) / threads;
  float *d_in, *d_out;
  int *d_keys, *d_max;
  cudaMalloc(&d_in, n * sizeof(float));
  cudaMalloc(&d_out, n * sizeof(float));
  cudaMalloc(&d_keys, n * sizeof(int));
  cudaMalloc(&d_max, (n / 16) * sizeof(int));
  block_sum<<<blocks, threads>>>(d_in, d_out, n);
  tile_max<<<blocks, threads>>>(d_keys, d_max, n);
  warp_sums<<<blocks, threads>>>(d_in, d_out, n);
  grid_scale<<<64, threads>>>(d_in, 2.0f, n);
  cudaDeviceSynchronize();
  printf("done\n");
  cudaFree(d_in);
  cudaFree(d_out);
  cudaFree(d_keys);
  cudaFree(d_max);
  return 0;
}
