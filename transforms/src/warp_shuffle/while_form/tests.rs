//! The `while` forms of a tree reduction get the rewrites of the `for`
//! form; loops that only look alike are left alone.

use crate::fixture::{rewrites, try_propose};
use crate::warp_shuffle::WarpShuffle;

/// The dot product of "CUDA by Example" (`i /= 2`, `i != 0`), with
/// `step` and `cond` in its place.
fn dot(cond: &str, body: &str) -> String {
    format!(
        r#"#define THREADS 256
__global__ void dot(const float *a, const float *b, float *c, int n) {{
    __shared__ float cache[THREADS];
    int tid = threadIdx.x + blockIdx.x * blockDim.x;
    int cacheIndex = threadIdx.x;
    float temp = 0;
    while (tid < n) {{
        temp += a[tid] * b[tid];
        tid += blockDim.x * gridDim.x;
    }}
    cache[cacheIndex] = temp;
    __syncthreads();
    int i = blockDim.x / 2;
    while ({cond}) {{
{body}
    }}
    if (cacheIndex == 0) c[blockIdx.x] = cache[0];
}}
"#
    )
}

const STEP: &str = "        if (cacheIndex < i) cache[cacheIndex] += cache[cacheIndex + i];\n        __syncthreads();\n        i /= 2;";

#[test]
fn the_while_tree_of_the_dot_product_gets_the_shuffle_tail() {
    let found = rewrites(&WarpShuffle, &dot("i != 0", STEP), [256, 1, 1]);
    assert_eq!(found.len(), 1, "{found:#?}");
    let (desc, text) = &found[0];
    println!("{desc}\n{text}");
    assert!(
        desc.starts_with("the `while` loop at line 14 is the tree reduction `for (i = …; …; …)`"),
        "{desc}"
    );
    assert!(
        text.contains("for (int i = blockDim.x / 2; i > 32; i /= 2)"),
        "{text}"
    );
    assert!(
        text.contains("__shfl_down_sync(0xffffffff, warp_sum, 1)"),
        "{text}"
    );
    assert!(!text.contains("while (i"), "{text}");
}

#[test]
fn other_conditions_and_steps_of_the_while_tree_are_the_same_loop() {
    for (cond, step) in [
        ("i > 0", "i >>= 1"),
        ("i >= 1", "i = i / 2"),
        ("0 < i", "i /= 2"),
    ] {
        let body = STEP.replace("i /= 2", step);
        let found = rewrites(&WarpShuffle, &dot(cond, &body), [128, 1, 1]);
        let expected = usize::from(cond != "0 < i");
        assert_eq!(found.len(), expected, "{cond}; {step}: {found:#?}");
    }
}

#[test]
fn the_barrier_may_come_first() {
    let body = "        __syncthreads();\n        if (cacheIndex < i) cache[cacheIndex] += cache[cacheIndex + i];\n        i /= 2;";
    let found = rewrites(&WarpShuffle, &dot("i != 0", body), [64, 1, 1]);
    assert_eq!(found.len(), 1, "{found:#?}");
    let (desc, text) = &found[0];
    println!("{desc}\n{text}");
    assert!(
        desc.contains("its leading barrier placed before the loop"),
        "{desc}"
    );
    assert!(
        text.contains("    __syncthreads();\n    if (cacheIndex < 32)"),
        "{text}"
    );
    assert!(
        !text.contains("__syncthreads();\n    __syncthreads();"),
        "{text}"
    );
}

#[test]
fn a_counter_used_after_the_loop_or_a_step_first_stays() {
    let used_after = dot("i != 0", STEP).replace(
        "if (cacheIndex == 0) c[blockIdx.x] = cache[0];",
        "if (cacheIndex == 0) c[blockIdx.x] = cache[0] + i;",
    );
    let p = try_propose(&WarpShuffle, &used_after, [256, 1, 1]).expect("checkable");
    assert!(p.candidates.is_empty());
    // Halving before the update reduces other pairs: not the tree.
    let step_first = "        i /= 2;\n        if (cacheIndex < i) cache[cacheIndex] += cache[cacheIndex + i];\n        __syncthreads();";
    let p = try_propose(&WarpShuffle, &dot("i != 0", step_first), [256, 1, 1]);
    assert!(p.is_ok_and(|p| p.candidates.is_empty()));
}
