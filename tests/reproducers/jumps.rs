//! `break` and `continue` that skip a loop counter's update: a lane that
//! continues goes on with the loop without moving its counter, and a warp
//! whose every lane breaks leaves the loop with the counter where it was.

use super::{assert_sound, Case, Found};

/// `src`'s kernel `k(float *a, int n)` on one warp, `a` of 64 elements.
fn one_warp(src: &str, n: i64) -> Vec<Found> {
    Case {
        src,
        grid: [1, 1, 1],
        block: [32, 1, 1],
        args: &[("n", n)],
        arrays: &[("a", 64)],
    }
    .run(false)
}

#[test]
fn continue_before_the_update_in_a_while_loop() {
    // Before: steps bound 45 against 2,432 simulated at n = 1.
    let src = "__global__ void k(float *a, int n) { int i = 0, j = 0;\n\
               while (i < n) { a[threadIdx.x] += 1.0f; if (j < 100) { j++; continue; } i++; } }";
    for n in [0, 1, 5] {
        assert_sound(&one_warp(src, n), false);
    }
}

#[test]
fn continue_before_the_update_in_a_for_loop_without_a_step() {
    let src = "__global__ void k(float *a, int n) { int i = 0, j = 0;\n\
               for (;;) { if (i >= n) break; a[threadIdx.x] += 1.0f;\n\
               if (j < 100) { j++; continue; } i++; } }";
    for n in [0, 1, 5] {
        assert_sound(&one_warp(src, n), false);
    }
}

#[test]
fn continue_before_the_update_in_a_nested_loop() {
    let src = "__global__ void k(float *a, int n) {\n\
               for (int r = 0; r < n; r++) { int i = 0, j = 0;\n\
               while (i < n) { a[threadIdx.x] += 1.0f; if (j < 10) { j++; continue; } i++; } } }";
    for n in [1, 3] {
        assert_sound(&one_warp(src, n), false);
    }
}

#[test]
fn continue_before_the_update_in_a_grid_stride_loop() {
    let src = "__global__ void k(float *a, int n) { int j = 0;\n\
               int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
               while (i < n) { a[i % 64] += 1.0f; if (j < 20) { j++; continue; }\n\
               i += blockDim.x * gridDim.x; } }";
    for n in [1, 40, 64] {
        assert_sound(&one_warp(src, n), false);
        let found = Case {
            src,
            grid: [2, 1, 1],
            block: [32, 1, 1],
            args: &[("n", n)],
            arrays: &[("a", 64)],
        }
        .run(true);
        assert_sound(&found, false);
    }
}

#[test]
fn continue_before_the_update_of_a_loop_the_launch_counts() {
    // The trip count evaluated with the update run every iteration: 5.
    let src = "__global__ void k(float *a, int n) { int j = 0; int s = blockDim.x / 2;\n\
               while (s > 0) { a[threadIdx.x] += 1.0f; if (j < 20) { j++; continue; } s >>= 1; } }";
    assert_sound(&one_warp(src, 1), false);
}

#[test]
fn continue_that_never_lets_the_loop_end_gives_no_bound() {
    // Before: 8 + 31·n for a loop that never ends once i reaches 3.
    let src = "__global__ void k(float *a, int n) { int i = 0;\n\
               while (i < n) { a[threadIdx.x] += 1.0f; if (i == 3) continue; i++; } }";
    // Every iteration costs steps and sectors (it never has conflicts or
    // divergence: 0 bounds those).
    for (metric, found) in super::analyze_only(src, [1, 1, 1], [32, 1, 1]) {
        if ["wsteps", "steps", "sectors"].contains(&metric) {
            assert!(
                found.is_err(),
                "{metric}: a bound for a loop that never ends: {found:?}"
            );
        }
    }
}

#[test]
fn break_before_the_update_leaves_the_counter_for_the_next_loop() {
    // Before: sectors bound 800 against 801 simulated at n = 50: the first
    // loop's exit was paid as if its counter had moved.
    let src = "__global__ void k(float *a, int n) { int i = 0;\n\
               while (i < n) { if (a[1] > 0.0f) break; i++; }\n\
               while (i < n) { a[threadIdx.x] += 1.0f; a[threadIdx.x + 32] += 1.0f; i++; } }";
    for n in [1, 50] {
        assert_sound(&one_warp(src, n), true);
    }
}

#[test]
fn continue_in_a_for_loop_runs_the_step_and_keeps_its_bound() {
    let src = "__global__ void k(float *a, int n) {\n\
               for (int i = 0; i < n; i++) { if (i % 2 == 0) continue; a[threadIdx.x] += 1.0f; } }";
    for n in [0, 1, 7, 100] {
        assert_sound(&one_warp(src, n), true);
    }
    let uniform_while = "__global__ void k(float *a, int n) { int i = 0;\n\
               while (i < n) { i++; if (i % 2 == 0) continue; a[threadIdx.x] += 1.0f; } }";
    for n in [0, 1, 7, 100] {
        assert_sound(&one_warp(uniform_while, n), true);
    }
}
