//! The rewrite before and after, and the kernels it leaves alone with
//! the exact reason ([`crate::fixture`]).

use super::WarpPerRow;
use crate::fixture::{check, check_not_applicable, try_propose_with};

const INT_MATVEC: &str = r#"__global__ void matvec(const int *M, const int *x, int *y, int rows, int m) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        int acc = 0;
        for (int i = 0; i < m; i++)
            acc += M[row * m + i] * x[i];
        y[row] = acc;
    }
}
"#;

const FLOAT_MATVEC: &str = r#"__global__ void matvec(const float *M, const float *x, float *y, int rows, int m) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float acc = 0.0f;
        for (int i = 0; i < m; i++)
            acc += M[row * m + i] * x[i];
        y[row] = acc;
    }
}
"#;

#[test]
fn an_integer_matvec_gets_one_warp_per_row() {
    let desc = check(
        &WarpPerRow,
        [256, 1, 1],
        INT_MATVEC,
        r#"__global__ void matvec(const int *__restrict__ M, const int *__restrict__ x, int *__restrict__ y, int rows, int m) {
    if (blockDim.x % 32 == 0) {
        const int lane = threadIdx.x % 32;
        for (int k = 0; k < 32; k++) {
            int row = blockIdx.x * blockDim.x + (threadIdx.x - lane + k);
            if (row < rows) {
                int acc = 0;
                for (long long j = lane; j < m; j += 32) {
                    int i = (int)j;
                    acc += M[row * m + i] * x[i];
                }
                acc += __shfl_down_sync(0xffffffff, acc, 16);
                acc += __shfl_down_sync(0xffffffff, acc, 8);
                acc += __shfl_down_sync(0xffffffff, acc, 4);
                acc += __shfl_down_sync(0xffffffff, acc, 2);
                acc += __shfl_down_sync(0xffffffff, acc, 1);
                if (lane == 0) {
                    y[row] = acc;
                }
            }
        }
    } else {
        int row = blockIdx.x * blockDim.x + threadIdx.x;
        if (row < rows) {
            int acc = 0;
            for (int i = 0; i < m; i++)
                acc += M[row * m + i] * x[i];
            y[row] = acc;
        }
    }
}
"#,
    );
    assert_eq!(
        desc,
        "each warp takes the 32 rows `row` its threads had, one after the other; its lanes stride the loop over `i` (lane `l` takes `i = l`, then every 32nd) and combine their `acc` with `__shfl_down_sync` (offsets 16 … 1), and lane 0 runs what followed the loop; blocks whose `blockDim.x` is not a multiple of 32 run the original code, so every launch computes the same rows; integer sums wrap, so the new order gives the same result; lanes now read consecutive `M` elements: 32 → 5 sectors per warp; writes of `y`: 4 → 1 sectors per warp; declares `M`, `x` and `y` `__restrict__`: callers must pass arrays that do not overlap (copper cannot tell: the file does not launch it, and there is no parameter file)"
    );
}

#[test]
fn a_row_sum_with_an_early_exit_and_a_start_that_is_not_zero() {
    let desc = check(
        &WarpPerRow,
        [128, 1, 1],
        r#"__global__ void rowsum(const int *M, int *y, int rows, int m) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    int acc = 5;
    for (int i = 1; i < m; ++i) {
        int v = M[row * m + i];
        acc += v;
    }
    y[row] = acc;
}
"#,
        r#"__global__ void rowsum(const int *__restrict__ M, int *__restrict__ y, int rows, int m) {
    if (blockDim.x % 32 == 0) {
        const int lane = threadIdx.x % 32;
        for (int k = 0; k < 32; k++) {
            int row = blockIdx.x * blockDim.x + (threadIdx.x - lane + k);
            if (row < rows) {
                int acc = lane == 0 ? 5 : 0;
                for (long long j = 1 + lane; j < m; j += 32) {
                    int i = (int)j;
                    int v = M[row * m + i];
                    acc += v;
                }
                acc += __shfl_down_sync(0xffffffff, acc, 16);
                acc += __shfl_down_sync(0xffffffff, acc, 8);
                acc += __shfl_down_sync(0xffffffff, acc, 4);
                acc += __shfl_down_sync(0xffffffff, acc, 2);
                acc += __shfl_down_sync(0xffffffff, acc, 1);
                if (lane == 0) {
                    y[row] = acc;
                }
            }
        }
    } else {
        int row = blockIdx.x * blockDim.x + threadIdx.x;
        if (row >= rows) return;
        int acc = 5;
        for (int i = 1; i < m; ++i) {
            int v = M[row * m + i];
            acc += v;
        }
        y[row] = acc;
    }
}
"#,
    );
    assert_eq!(
        desc,
        "each warp takes the 32 rows `row` its threads had, one after the other; its lanes stride the loop over `i` (lane `l` takes `i = 1 + l`, then every 32nd) and combine their `acc` with `__shfl_down_sync` (offsets 16 … 1), and lane 0 runs what followed the loop; blocks whose `blockDim.x` is not a multiple of 32 run the original code, so every launch computes the same rows; integer sums wrap, so the new order gives the same result; lanes now read consecutive `M` elements: 32 → 5 sectors per warp; writes of `y`: 4 → 1 sectors per warp; declares `M` and `y` `__restrict__`: callers must pass arrays that do not overlap (copper cannot tell: the file does not launch it, and there is no parameter file)"
    );
}

#[test]
fn a_row_max_keeps_its_function_and_operand_order() {
    let desc = check(
        &WarpPerRow,
        [256, 1, 1],
        r#"__global__ void rowmax(const float *M, float *y, int rows, int m) {
    int row = threadIdx.x + blockIdx.x * blockDim.x;
    if (row < rows) {
        float mx = M[row * m];
        for (int i = 1; i < m; i++)
            mx = fmaxf(M[row * m + i], mx);
        y[row] = mx;
    }
}
"#,
        r#"__global__ void rowmax(const float *__restrict__ M, float *__restrict__ y, int rows, int m) {
    if (blockDim.x % 32 == 0) {
        const int lane = threadIdx.x % 32;
        for (int k = 0; k < 32; k++) {
            int row = threadIdx.x - lane + k + blockIdx.x * blockDim.x;
            if (row < rows) {
                float mx = M[row * m];
                for (long long j = 1 + lane; j < m; j += 32) {
                    int i = (int)j;
                    mx = fmaxf(M[row * m + i], mx);
                }
                mx = fmaxf(__shfl_down_sync(0xffffffff, mx, 16), mx);
                mx = fmaxf(__shfl_down_sync(0xffffffff, mx, 8), mx);
                mx = fmaxf(__shfl_down_sync(0xffffffff, mx, 4), mx);
                mx = fmaxf(__shfl_down_sync(0xffffffff, mx, 2), mx);
                mx = fmaxf(__shfl_down_sync(0xffffffff, mx, 1), mx);
                if (lane == 0) {
                    y[row] = mx;
                }
            }
        }
    } else {
        int row = threadIdx.x + blockIdx.x * blockDim.x;
        if (row < rows) {
            float mx = M[row * m];
            for (int i = 1; i < m; i++)
                mx = fmaxf(M[row * m + i], mx);
            y[row] = mx;
        }
    }
}
"#,
    );
    assert_eq!(
        desc,
        "each warp takes the 32 rows `row` its threads had, one after the other; its lanes stride the loop over `i` (lane `l` takes `i = 1 + l`, then every 32nd) and combine their `mx` with `__shfl_down_sync` (offsets 16 … 1), and lane 0 runs what followed the loop; blocks whose `blockDim.x` is not a multiple of 32 run the original code, so every launch computes the same rows; `fmaxf` does not depend on the order of its terms; reads of `M`: 32 → 5 sectors per warp; writes of `y`: 4 → 1 sectors per warp; declares `M` and `y` `__restrict__`: callers must pass arrays that do not overlap (copper cannot tell: the file does not launch it, and there is no parameter file)"
    );
}

#[test]
fn a_squared_norm_is_rewritten_with_reassociation_allowed() {
    let src = r#"__global__ void norms(const float *M, float *y, int rows, int m) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float s = 0.0f;
        for (int i = 0; i < m; i++) {
            float v = M[row * m + i];
            s += v * v;
        }
        y[row] = sqrtf(s);
    }
}
"#;
    let p = try_propose_with(&WarpPerRow, src, [256, 1, 1], true).expect("checked");
    assert_eq!(p.candidates.len(), 1, "{:?}", p.skipped);
    assert!(p.candidates[0].reassociates);
    let text = copper::cuda::print::function(&p.candidates[0].function);
    assert!(
        text.contains("if (lane == 0) {\n                    y[row] = sqrtf(s);"),
        "{text}"
    );
    let without = try_propose_with(&WarpPerRow, src, [256, 1, 1], false).expect("checked");
    assert!(without.candidates.is_empty());
}

/// The float matrix-vector product's sums cancel (data in [−2, 2]): its
/// rewrite passes the check, which judges them by the size of their
/// terms (the original run on the absolute values of the inputs), not
/// by their small totals ([`crate::check::reassociation_tolerance`]).
#[test]
fn a_float_matvec_whose_sums_cancel_passes_its_check() {
    let p = try_propose_with(&WarpPerRow, FLOAT_MATVEC, [256, 1, 1], true).expect("checked");
    assert_eq!(p.candidates.len(), 1, "{:?}", p.skipped);
    assert!(p.candidates[0].reassociates);
}

#[test]
fn a_float_sum_needs_reassociation() {
    check_not_applicable(
        &WarpPerRow,
        [256, 1, 1],
        FLOAT_MATVEC,
        "each thread keeps its row: `acc` is a floating-point sum, which the warp would add in another order (allowed by --allow-reassociation)",
    );
}

#[test]
fn a_loop_bound_that_depends_on_the_row_is_refused() {
    check_not_applicable(
        &WarpPerRow,
        [256, 1, 1],
        r#"__global__ void tri(const int *M, int *y, int rows, int m) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        int acc = 0;
        for (int i = 0; i < row; i++)
            acc += M[row * m + i];
        y[row] = acc;
    }
}
"#,
        "each thread keeps its row: the loop's bound `row` is not an `int` constant or an `int` parameter, so it may differ between the rows of a warp",
    );
}

#[test]
fn a_loop_that_writes_memory_is_refused() {
    check_not_applicable(
        &WarpPerRow,
        [256, 1, 1],
        r#"__global__ void prefix(int *M, int *y, int rows, int m) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        int acc = 0;
        for (int i = 0; i < m; i++) {
            M[row * m + i] = acc;
            acc += M[row * m + i];
        }
        y[row] = acc;
    }
}
"#,
        "each thread keeps its row: the loop writes memory (`M`)",
    );
}

#[test]
fn a_jump_in_the_loop_is_refused() {
    check_not_applicable(
        &WarpPerRow,
        [256, 1, 1],
        r#"__global__ void first_big(const int *M, int *y, int rows, int m) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        int acc = 0;
        for (int i = 0; i < m; i++) {
            if (M[row * m + i] > 8) break;
            acc += M[row * m + i];
        }
        y[row] = acc;
    }
}
"#,
        "each thread keeps its row: the loop body may `break`, `continue` or `return`",
    );
}

#[test]
fn a_parameter_moved_per_thread_is_refused() {
    check_not_applicable(
        &WarpPerRow,
        [256, 1, 1],
        r#"__global__ void rowsum(const int *M, int *y, int rows, int m) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        M += row * m;
        int acc = 0;
        for (int i = 0; i < m; i++)
            acc += M[i];
        y[row] = acc;
    }
}
"#,
        "each thread keeps its row: the row's code assigns `M`, which it does not declare (a value would pass from one row to the next)",
    );
}

#[test]
fn an_integer_sum_of_floats_is_refused() {
    check_not_applicable(
        &WarpPerRow,
        [256, 1, 1],
        r#"__global__ void rounded(const float *M, int *y, int rows, int m) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        int acc = 0;
        for (int i = 0; i < m; i++)
            acc += M[row * m + i];
        y[row] = acc;
    }
}
"#,
        "each thread keeps its row: the term `M[row * m + i]` may not be an integer, so adding it in another order may change `acc`",
    );
}

#[test]
fn a_maximum_that_compares_in_another_type_is_refused() {
    check_not_applicable(
        &WarpPerRow,
        [256, 1, 1],
        r#"__global__ void widest(const unsigned *M, int *y, int rows, int m) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        int best = 0;
        for (int i = 0; i < m; i++)
            best = max(best, M[row * m + i]);
        y[row] = best;
    }
}
"#,
        "each thread keeps its row: `max` may compare `M[row * m + i]` with `best` in another type than `best`'s, which the shuffles would use",
    );
}

#[test]
fn a_result_stored_elsewhere_than_the_rows_element_is_refused() {
    check_not_applicable(
        &WarpPerRow,
        [256, 1, 1],
        r#"__global__ void last(const int *M, int *y, int rows, int m) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        int acc = 0;
        for (int i = 0; i < m; i++)
            acc += M[row * m + i];
        *y = acc;
    }
}
"#,
        "each thread keeps its row: `y` is written after the loop and used at another element than `y[row]`",
    );
}
