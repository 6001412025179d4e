//! The rewrite before and after, and the atomics it leaves alone with the
//! reason ([`crate::fixture`]).

use super::WarpAtomic;
use crate::fixture::{check_not_applicable, rewrites, try_propose_with};

const COUNT: &str = r#"__global__ void count_positive(const int *in, int *total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        if (in[i] > 0) atomicAdd(total, 1);
    }
}
"#;

#[test]
fn every_threads_atomic_becomes_one_per_warp() {
    let found = rewrites(&WarpAtomic, COUNT, [256, 1, 1]);
    assert_eq!(found.len(), 1, "{found:#?}");
    let (desc, text) = &found[0];
    println!("{desc}\n{text}");
    assert!(
        desc.starts_with("every thread's `atomicAdd` on `total` at line 4 becomes one per warp"),
        "{desc}"
    );
    assert!(
        text.contains("if (blockDim.x * blockDim.y * blockDim.z % 32 == 0) {"),
        "{text}"
    );
    assert!(text.contains("int warp_total = 0;"), "{text}");
    assert!(
        text.contains("if (in[i] > 0) warp_total += (int)1;"),
        "{text}"
    );
    assert!(
        text.contains("__shfl_down_sync(0xffffffff, warp_total, 1);"),
        "{text}"
    );
    assert!(
        text.contains("% 32 == 0 && warp_total != 0) {\n            atomicAdd(total, warp_total);"),
        "{text}"
    );
    // The original stays for blocks of partial warps.
    assert!(text.contains("} else {\n        if (i < n) {"), "{text}");
}

#[test]
fn the_rewrite_is_checked_on_odd_blocks() {
    // The fixture checks every candidate against the original by
    // simulation; a 96-thread block and a 24×4 one are whole warps, a 1×20
    // one is not (the original statement runs).
    for block in [[96, 1, 1], [24, 4, 1], [1, 20, 1], [8, 8, 2]] {
        let p = try_propose_with(&WarpAtomic, COUNT, block, false).expect("checkable");
        assert_eq!(p.candidates.len(), 1, "{block:?}");
    }
}

#[test]
fn a_used_result_a_loop_or_one_lane_stays() {
    let used = COUNT.replace(
        "atomicAdd(total, 1);",
        "{ int old = atomicAdd(total, 1); if (old > n) return; }",
    );
    let p = try_propose_with(&WarpAtomic, &used, [256, 1, 1], false).expect("checkable");
    assert!(p.candidates.is_empty());
    check_not_applicable(
        &WarpAtomic,
        [256, 1, 1],
        &COUNT.replace("if (i < n) {", "if (threadIdx.x == 0) {"),
        "the `atomicAdd` at line 4 stays one per thread: its guard (`==`) may already keep all but one lane of a warp",
    );
    check_not_applicable(
        &WarpAtomic,
        [256, 1, 1],
        &COUNT.replace("if (i < n) {", "for (int k = i; k < n; k += blockDim.x * gridDim.x) {").replace("in[i]", "in[k]"),
        "the `atomicAdd` at line 4 stays one per thread: it is inside a loop or another statement that may run it other than once",
    );
    check_not_applicable(
        &WarpAtomic,
        [256, 1, 1],
        &COUNT.replace("int i = blockIdx.x", "if (n < 0) return;\n    int i = blockIdx.x"),
        "the `atomicAdd` at line 5 stays one per thread: a thread may return before it, so not every lane reaches the shuffles",
    );
}

#[test]
fn a_float_sum_needs_reassociation() {
    let src = r#"__global__ void sum(const float *in, float *total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(total, in[i]);
}
"#;
    check_not_applicable(
        &WarpAtomic,
        [128, 1, 1],
        src,
        "the `atomicAdd` at line 3 stays one per thread: its floating-point sum would be added in another order (allowed by --allow-reassociation)",
    );
    let p = try_propose_with(&WarpAtomic, src, [128, 1, 1], true).expect("checkable");
    assert_eq!(p.candidates.len(), 1);
    assert!(p.candidates[0].reassociates);
}
