// One BFS level over a graph stored as an array of Node structs (the
// Rodinia BFS layout: each node's first edge and edge count), written as a
// C++ struct used without `typedef`. The edge loop is capped at
// MAX_DEGREE, the bounded-degree (ELL-like) form of Rodinia's loop, so the
// trip count is known. Written for copper.

#include <cuda_runtime.h>

#define MAX_DEGREE 4294967295u

struct Node {
    int starting;
    int no_of_edges;
};

__global__ void bfs_level(const Node* g_graph_nodes, const int* g_graph_edges, bool* g_graph_mask,
                          bool* g_updating_graph_mask, const bool* g_graph_visited, int* g_cost,
                          int no_of_nodes) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < no_of_nodes && g_graph_mask[tid]) {
        g_graph_mask[tid] = false;
        const Node node = g_graph_nodes[tid];
        for (int k = 0; k < MAX_DEGREE; k++) {
            if (k < node.no_of_edges) {
                int id = g_graph_edges[node.starting + k];
                if (!g_graph_visited[id]) {
                    g_cost[id] = g_cost[tid] + 1;
                    g_updating_graph_mask[id] = true;
                }
            }
        }
    }
}

__global__ void degree_histogram(const Node* nodes, int* counts, int no_of_nodes) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < no_of_nodes) {
        atomicAdd(&counts[nodes[tid].no_of_edges], 1);
    }
}
