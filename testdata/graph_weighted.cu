// One relaxation step of a weighted graph search over an array of Node
// structs that mix `int` and `float` fields (the Rodinia BFS layout plus a
// per-node weight), with edges as `struct Edge { int dst; float w; }`.
// Written for copper.

#include <cuda_runtime.h>
#include <cfloat>

#ifndef MAX_DEGREE
#define MAX_DEGREE 4
#endif

struct Node {
    int start;
    int degree;
    float weight;
};

struct Edge {
    int dst;
    float w;
};

__global__ void relax_edges(const Node *g_nodes, const Edge *g_edges, const float *g_dist,
                            float *g_next, int *g_changed, int no_of_nodes) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= no_of_nodes) {
        return;
    }
    const Node node = g_nodes[tid];
    float best = g_dist[tid];
    for (int k = 0; k < MAX_DEGREE; ++k) {
        if (k < node.degree) {
            Edge e = g_edges[node.start + k];
            float cand = g_dist[e.dst] + e.w * node.weight;
            if (cand < best) {
                best = cand;
            }
        }
    }
    g_next[tid] = best;
    if (best < g_dist[tid]) {
        g_changed[0] = 1;
    }
}

// Writes each node's degree back and scales its weight: stores to single
// fields of a mixed struct.
__global__ void normalize_nodes(Node *g_nodes, int no_of_nodes, float scale) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < no_of_nodes) {
        int d = g_nodes[tid].degree;
        g_nodes[tid].degree = min(d, MAX_DEGREE);
        g_nodes[tid].weight = g_nodes[tid].weight * scale + static_cast<float>(d);
    }
}

// The weighted sum over each node's neighbours on a ring lattice (node
// tid's k-th neighbour is (k + 1) * STRIDE nodes on), scaled per node: the
// scale is read in every iteration, which load hoisting removes.
#define STRIDE 17

__global__ void neighbour_weight(const Node *g_nodes, const float *g_scale, float *g_sum,
                                 int no_of_nodes) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < no_of_nodes) {
        float s = 0.0f;
        for (int k = 0; k < MAX_DEGREE; ++k) {
            int j = (tid + (k + 1) * STRIDE) % no_of_nodes;
            s += g_nodes[j].weight * g_scale[tid];
        }
        g_sum[tid] = s;
    }
}
