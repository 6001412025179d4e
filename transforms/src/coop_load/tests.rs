//! The rewrite before and after, and the kernels it leaves alone with
//! the exact reason ([`crate::fixture`]).

use super::CooperativeLoad;
use crate::fixture::{check, check_not_applicable, rewrites};

#[test]
fn weights_read_by_every_thread_are_loaded_once() {
    let desc = check(
        &CooperativeLoad,
        [128, 1, 1],
        r#"#define TAPS 16
__global__ void fir(const float *__restrict__ w, const float *__restrict__ x, float *__restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < TAPS; k++) {
        acc += w[k] * x[(i + k) % n];
    }
    if (i < n) y[i] = acc;
}
"#,
        r#"#define TAPS 16
__global__ void fir(const float *__restrict__ w, const float *__restrict__ x, float *__restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    __shared__ float w_sh[16];
    for (int w_k = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); w_k < 16; w_k += blockDim.x * blockDim.y * blockDim.z) {
        w_sh[w_k] = w[w_k];
    }
    __syncthreads();
    for (int k = 0; k < TAPS; k++) {
        acc += w_sh[k] * x[(i + k) % n];
    }
    if (i < n) y[i] = acc;
}
"#,
    );
    assert_eq!(
        desc,
        "loaded the 16 elements of `w` that every thread of a block reads in the loop at line 5 into shared memory once, by the whole block, before the code that holds the loop"
    );
}

#[test]
fn a_guarded_loop_copies_when_some_thread_reaches_it() {
    let found = rewrites(
        &CooperativeLoad,
        r#"__global__ void rowdot(const int *__restrict__ coef, const int *__restrict__ a, int *__restrict__ out, int n, int off) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int s = 0;
    for (int k = 2; k < 34; k++) {
        s += coef[k + off] * a[i * 40 + k];
    }
    out[i] = s;
}
"#,
        [64, 1, 1],
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    let text = &found[0].1;
    assert!(text.contains("bool coop_active = !(i >= n);"), "{text}");
    assert!(text.contains("if (coop_active)"), "{text}");
    assert!(text.contains("if (coop_any)"), "{text}");
    // The range starts at 2: the buffer is indexed by `k` itself.
    assert!(text.contains("__shared__ int coef_sh[34];"), "{text}");
    assert!(text.contains("int coef_k = 2 + (threadIdx.x"), "{text}");
    assert!(
        text.contains("coef_sh[coef_k] = coef[coef_k + off];"),
        "{text}"
    );
    assert!(text.contains("s += coef_sh[k] * a[i * 40 + k];"), "{text}");
    // The barrier comes before the early return.
    let barrier = text.find("__syncthreads();").unwrap_or(usize::MAX);
    let ret = text.find("return;").unwrap_or(0);
    assert!(barrier < ret, "{text}");
}

#[test]
fn a_loop_under_a_divergent_if_is_loaded_under_a_flag() {
    let found = rewrites(
        &CooperativeLoad,
        r#"__global__ void smooth(const float *__restrict__ k3, const float *__restrict__ x, float *__restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int k = 0; k < 8; k++) {
            s += k3[k] * x[i];
        }
        y[i] = s;
    }
}
"#,
        [32, 2, 1],
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].1.contains("bool coop_active = i < n;"),
        "{}",
        found[0].1
    );
}

#[test]
fn a_length_from_a_parameter_is_refused() {
    check_not_applicable(
        &CooperativeLoad,
        [64, 1, 1],
        r#"__global__ void conv(const float *__restrict__ w, const float *__restrict__ x, float *__restrict__ y, int ws, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < ws; k++) {
        s += w[k] * x[i];
    }
    if (i < n) y[i] = s;
}
"#,
        "the loop at line 4 keeps its global reads: its range is not fixed by constants (a length from a parameter would need dynamic shared memory sized at every launch, which is not done)",
    );
}

#[test]
fn a_loop_inside_another_loop_is_refused() {
    check_not_applicable(
        &CooperativeLoad,
        [64, 1, 1],
        r#"__global__ void rows(const float *__restrict__ w, float *__restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < 4; r++) {
        float s = 0.0f;
        for (int k = 0; k < 8; k++) {
            s += w[r * 8 + k];
        }
        if (i < n) y[i * 4 + r] = s;
    }
}
"#,
        "the loop at line 5 keeps its global reads: it sits in another loop (one copy before the kernel's code would not cover every iteration)",
    );
}

#[test]
fn a_thread_dependent_offset_is_refused() {
    check_not_applicable(
        &CooperativeLoad,
        [64, 1, 1],
        r#"__global__ void window(const float *__restrict__ x, float *__restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < 8; k++) {
        s += x[i + k];
    }
    if (i < n) y[i] = s;
}
"#,
        "`x` is not loaded cooperatively for the loop at line 4: its index is not `k + c` with `c` the same in every thread",
    );
}

#[test]
fn a_range_past_the_shared_memory_limit_is_refused() {
    check_not_applicable(
        &CooperativeLoad,
        [64, 1, 1],
        r#"__global__ void big(const double *__restrict__ w, double *__restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double s = 0.0;
    for (int k = 0; k < 8192; k++) {
        s += w[k];
    }
    if (i < n) y[i] = s;
}
"#,
        "`w` is not loaded cooperatively for the loop at line 4: a buffer of 8192 elements takes 65536 bytes, and with the kernel's 0 bytes of shared memory more than 49152 (copying in chunks is not done)",
    );
}

#[test]
fn a_range_far_from_zero_is_buffered_from_its_start() {
    let found = rewrites(
        &CooperativeLoad,
        r#"__global__ void tail(const float *__restrict__ w, const float *__restrict__ x, float *__restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    float v = x[i];
    for (int k = 100; k < 132; k++) {
        s = s * v + w[k];
    }
    y[i] = s;
}
"#,
        [96, 1, 1],
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    let text = &found[0].1;
    assert!(text.contains("__shared__ float w_sh[32];"), "{text}");
    assert!(text.contains("w_sh[w_k] = w[100 + w_k];"), "{text}");
    assert!(text.contains("s = s * v + w_sh[k - 100];"), "{text}");
    assert!(!text.contains("coop_any"), "{text}");
}

#[test]
fn a_range_from_minus_r_is_buffered_from_its_start() {
    let found = rewrites(
        &CooperativeLoad,
        r#"#define R 4
__global__ void smooth(const float *__restrict__ g, const float *__restrict__ x, float *__restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        float v = x[i];
        for (int k = -R; k <= R; k++) {
            s += g[k + R] * v;
        }
        y[i] = s;
    }
}
"#,
        [64, 1, 1],
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    let text = &found[0].1;
    assert!(text.contains("__shared__ float g_sh[9];"), "{text}");
    assert!(text.contains("g_sh[g_k] = g[g_k - 4 + R];"), "{text}");
    assert!(text.contains("s += g_sh[k + 4] * v;"), "{text}");
}
