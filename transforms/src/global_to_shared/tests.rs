//! The rewrite before and after, and the kernels it leaves alone with
//! the exact reason ([`crate::fixture`]).

use super::GlobalToShared;
use crate::fixture::{check, check_not_applicable};

#[test]
fn a_row_reused_across_the_loop_is_copied_in_once() {
    let desc = check(
        &GlobalToShared,
        [64, 1, 1],
        r#"__global__ void broadcast_rows(const int *a, int *b, int w, int h) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < h; j++) {
        b[j * w + i] += a[i];
    }
}
"#,
        r#"__global__ void broadcast_rows(const int *__restrict__ a, int *__restrict__ b, int w, int h) {
    const int a_lo = 64 * blockIdx.x;
    const int a_len = 64;
    __shared__ int a_sh[a_len];
    if (0 < h) {
        for (int k = threadIdx.x; k < a_len; k += 64) {
            a_sh[k] = a[a_lo + k];
        }
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < h; j++) {
        b[j * w + i] += a_sh[i - a_lo];
    }
}
"#,
    );
    assert_eq!(
        desc,
        "moved `a` into shared memory (64 elements per block, copied in at the start); declares `a` and `b` `__restrict__`: callers must pass arrays that do not overlap (copper cannot tell: the file does not launch it, and there is no parameter file)"
    );
}

#[test]
fn a_buffer_that_does_not_fit_beside_a_launch_s_dynamic_shared_memory_stays() {
    check_not_applicable(
        &GlobalToShared,
        [64, 1, 1],
        r#"__global__ void broadcast_rows(const int *a, int *b, int w, int h) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < h; j++) {
        b[j * w + i] += a[i];
    }
}
void host(const int *a, int *b, int w, int h) { broadcast_rows<<<w / 64, 64, 48 * 1024 - 100>>>(a, b, w, h); }
"#,
        "`a` stays in global memory: its buffer takes 256 bytes, and with the kernel's 0 bytes of shared memory and the 49052 bytes of dynamic shared memory the launch at line 7 asks for more than 49152",
    );
}

#[test]
fn an_array_read_and_written_is_copied_in_and_back() {
    let desc = check(
        &GlobalToShared,
        [64, 1, 1],
        r#"__global__ void saxpy(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"#,
        r#"__global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y) {
    const int y_lo = 64 * blockIdx.x;
    const int y_len = 64;
    __shared__ float y_sh[y_len];
    for (int k = threadIdx.x; k < y_len; k += 64) {
        if (y_lo + k <= n - 1) {
            y_sh[k] = y[y_lo + k];
        }
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y_sh[i - y_lo] = a * x[i] + y_sh[i - y_lo];
    __syncthreads();
    for (int k = threadIdx.x; k < y_len; k += 64) {
        if (y_lo + k <= n - 1) {
            y[y_lo + k] = y_sh[k];
        }
    }
}
"#,
    );
    assert_eq!(
        desc,
        "moved `y` into shared memory (64 elements per block, copied in at the start, written back at the end); declares `x` and `y` `__restrict__`: callers must pass arrays that do not overlap (copper cannot tell: the file does not launch it, and there is no parameter file)"
    );
}

#[test]
fn an_array_passed_to_a_device_function_stays() {
    check_not_applicable(
        &GlobalToShared,
        [64, 1, 1],
        r#"__device__ float fetch(const float *v, int i) { return v[i]; }
__global__ void twice(const float *v, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = fetch(v, i) + fetch(v, i);
}
"#,
        "`v` stays in global memory: it is used other than as `a[index]` (as a pointer, passed to a function, or its address taken)",
    );
}

#[test]
fn an_unguarded_stencil_stays() {
    check_not_applicable(
        &GlobalToShared,
        [128, 1, 1],
        r#"#define RADIUS 3
__global__ void stencil_1d(const float *__restrict__ in, float *__restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x + RADIUS;
    float s = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; k++) {
        s += in[i + k];
    }
    out[i] = s;
}
"#,
        "`in` stays in global memory: nothing shows the copy reads only elements the kernel reads (no guard like `k < n` on every access, and no access reading each thread's own element)",
    );
}
