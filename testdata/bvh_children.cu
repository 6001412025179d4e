// bvh_children: descending a complete binary tree stored as an array of
// nodes with an `int children[2]` member, as BVH and k-d tree codes store
// them. Written for copper. Each thread walks from the root to a leaf,
// taking the child its key's bit selects (`node = nodes[node].children[b]`,
// a member index that differs between lanes), then counts its key in the
// leaf with `atomicAdd(&nodes[node].count[k & 1], 1)`.

#include <cuda_runtime.h>

struct Node {
    int children[2];
    int start;
    int count[2];
};

__global__ void descend(Node *nodes, const unsigned int *keys, int *leaf_start,
                        int depth, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    unsigned int k = keys[i];
    int node = 0;
    for (int level = 0; level < depth; ++level) {
        int b = (k >> level) & 1u;
        int next = nodes[node].children[b];
        if (next < 0) {
            break;
        }
        node = next;
    }
    leaf_start[i] = nodes[node].start;
    atomicAdd(&nodes[node].count[k & 1u], 1);
}

int main() {
    const int n = 1000, depth = 4, nnodes = (1 << (depth + 1)) - 1;
    Node *d_nodes;
    unsigned int *d_keys;
    int *d_start;
    cudaMalloc(&d_nodes, nnodes * sizeof(Node));
    cudaMalloc(&d_keys, n * sizeof(unsigned int));
    cudaMalloc(&d_start, n * sizeof(int));
    descend<<<(n + 255) / 256, 256>>>(d_nodes, d_keys, d_start, depth, n);
    cudaDeviceSynchronize();
    return 0;
}
