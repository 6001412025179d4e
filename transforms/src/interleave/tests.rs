//! The rewrite before and after, and the kernels it leaves alone with
//! the exact reason ([`crate::fixture`]).

use super::Interleave;
use crate::fixture::{check, check_not_applicable};

#[test]
fn a_guarded_run_per_thread_becomes_interleaved() {
    let desc = check(
        &Interleave,
        [128, 1, 1],
        r#"#define C 8
__global__ void scale(const float *__restrict__ in, float *__restrict__ out, int m) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < m) {
        for (int k = 0; k < C; k++) {
            out[idx * C + k] = 2.0f * in[idx * C + k];
        }
    }
}
"#,
        r#"#define C 8
__global__ void scale(const float *__restrict__ in, float *__restrict__ out, int m) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)blockDim.x * gridDim.x;
    const long long total = (long long)m * C;
    for (int k = 0; k < C; k++) {
        long long e = k * stride + idx;
        if (e >= total) {
            break;
        }
        out[e] = 2.0f * in[e];
    }
}
"#,
    );
    assert_eq!(
        desc,
        "interleaved the runs of `idx`: step `k` of a thread now takes element `e = k * stride + idx` (`stride` = `blockDim.x * gridDim.x`, the threads along x) instead of `idx * C + k`, so consecutive lanes take consecutive elements; the same elements, each once: the elements `e < m * C` the guard `idx < m` allowed; proved independent: every access is element `idx * C + k` of `in` or `out`, and every variable the loop assigns is declared in it; lanes now read consecutive `in` elements: 32 → 4 sectors per warp; lanes now write consecutive `out` elements: 32 → 4 sectors per warp"
    );
}

#[test]
fn an_early_exit_and_a_per_element_guard_keep_the_same_elements() {
    let desc = check(
        &Interleave,
        [96, 1, 1],
        r#"__global__ void add(const int *a, const int *b, int *out, int m, int c, int n) {
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    if (t >= m) return;
    for (int j = 0; j < c; ++j) {
        if (t * c + j < n) {
            out[t * c + j] = a[t * c + j] + b[t * c + j];
        }
    }
}
"#,
        r#"__global__ void add(const int *__restrict__ a, const int *__restrict__ b, int *__restrict__ out, int m, int c, int n) {
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    const long long stride = (long long)blockDim.x * gridDim.x;
    const long long total = (long long)m * c;
    for (int j = 0; j < c; ++j) {
        long long e = j * stride + t;
        if (e >= total) {
            break;
        }
        if (e >= n) {
            break;
        }
        out[e] = a[e] + b[e];
    }
}
"#,
    );
    assert!(
        desc.ends_with("declares `a`, `b` and `out` `__restrict__`: callers must pass arrays that do not overlap (copper cannot tell: the file does not launch it, and there is no parameter file)"),
        "{desc}"
    );
}

#[test]
fn an_unguarded_run_with_an_index_copy_becomes_interleaved() {
    let desc = check(
        &Interleave,
        [64, 1, 1],
        r#"#define PER_THREAD 4
__global__ void square(float *__restrict__ x, int *__restrict__ where) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < PER_THREAD; k++) {
        int i = idx * PER_THREAD + k;
        float v = x[i];
        x[i] = v * v;
        where[i] = i;
    }
}
"#,
        r#"#define PER_THREAD 4
__global__ void square(float *__restrict__ x, int *__restrict__ where) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (int k = 0; k < PER_THREAD; k++) {
        long long e = k * stride + idx;
        int i = e;
        float v = x[i];
        x[i] = v * v;
        where[i] = i;
    }
}
"#,
    );
    assert!(
        desc.contains("every element below `stride * PER_THREAD`, as before"),
        "{desc}"
    );
}

#[test]
fn a_sum_over_the_run_keeps_it() {
    check_not_applicable(
        &Interleave,
        [128, 1, 1],
        r#"__global__ void sums(const float *in, float *out, int m) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < m) {
        float s = 0.0f;
        for (int k = 0; k < 8; k++) {
            s += in[idx * 8 + k];
        }
        out[idx] = s;
    }
}
"#,
        "each thread keeps its run of elements: `s` is assigned in the loop, so a value may pass from one element to the next",
    );
}

#[test]
fn a_weight_per_step_keeps_it() {
    check_not_applicable(
        &Interleave,
        [128, 1, 1],
        r#"__global__ void weigh(const float *in, const float *w, float *out, int m) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < m) {
        for (int k = 0; k < 8; k++) {
            out[idx * 8 + k] = in[idx * 8 + k] * w[k];
        }
    }
}
"#,
        "each thread keeps its run of elements: `w[k]` is not element `idx * 8 + k` of a pointer parameter, so iterations may share memory",
    );
}

#[test]
fn an_unsigned_index_keeps_it() {
    check_not_applicable(
        &Interleave,
        [128, 1, 1],
        r#"__global__ void twice(const float *in, float *out, int m) {
    unsigned idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < m) {
        for (int k = 0; k < 8; k++) {
            out[idx * 8 + k] = in[idx * 8 + k] * 2.0f;
        }
    }
}
"#,
        "each thread keeps its run of elements: `idx` is not an `int` (the rewrite's proof of the element index's range is for `int` arithmetic)",
    );
}

#[test]
fn the_index_as_a_value_keeps_it() {
    check_not_applicable(
        &Interleave,
        [128, 1, 1],
        r#"__global__ void iota(float *out, int m) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < m) {
        for (int k = 0; k < 8; k++) {
            out[idx * 8 + k] = (idx * 8 + k) * 0.5f;
        }
    }
}
"#,
        "each thread keeps its run of elements: the element index `idx * 8 + k` is used as a value (only subscripts, comparisons and `int` copies are kept exact when it is computed in 64 bits)",
    );
}

#[test]
fn a_break_keeps_it() {
    check_not_applicable(
        &Interleave,
        [128, 1, 1],
        r#"__global__ void until(const float *__restrict__ in, float *__restrict__ out, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 8; k++) {
        if (idx * 8 + k >= n) break;
        out[idx * 8 + k] = in[idx * 8 + k] + 1.0f;
    }
}
"#,
        "each thread keeps its run of elements: the loop body may `break`, `continue` or `return`",
    );
}

#[test]
fn a_run_from_a_start_index_becomes_interleaved() {
    let desc = check(
        &Interleave,
        [128, 1, 1],
        r#"__global__ void offset(const double *__restrict__ in, double *__restrict__ out, int m, double d) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int start = tid * 6;
    if (tid < m) {
        for (int i = 0; i < 6; i++) {
            out[start + i] = in[start + i] + d;
        }
    }
}
"#,
        r#"__global__ void offset(const double *__restrict__ in, double *__restrict__ out, int m, double d) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int start = tid * 6;
    const long long stride = (long long)blockDim.x * gridDim.x;
    const long long total = (long long)m * 6;
    for (int i = 0; i < 6; i++) {
        long long e = i * stride + tid;
        if (e >= total) {
            break;
        }
        out[e] = in[e] + d;
    }
}
"#,
    );
    assert!(desc.contains("instead of `start + i`"), "{desc}");
}
