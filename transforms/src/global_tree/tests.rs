//! The rewrite before and after, and the trees it leaves alone with the
//! reason ([`crate::fixture`]).

use super::GlobalTreeToShared;
use crate::fixture::{check_not_applicable, rewrites};

const POINTER: &str = r#"__global__ void reduce_global(int *in, int *out) {
    unsigned tid = threadIdx.x;
    int *p = in + blockIdx.x * blockDim.x;
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) p[tid] += p[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = p[0];
}
"#;

#[test]
fn a_tree_through_a_block_pointer_runs_in_shared_memory() {
    let found = rewrites(&GlobalTreeToShared, POINTER, [256, 1, 1]);
    assert_eq!(found.len(), 1, "{found:#?}");
    let (desc, text) = &found[0];
    println!("{desc}\n{text}");
}
