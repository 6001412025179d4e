//! The rewrite before and after, and the kernels it leaves alone with the
//! exact reason ([`crate::fixture`]).

use super::WarpShuffle;
use crate::fixture::{check, check_not_applicable, rewrites, try_propose_with};

#[test]
fn the_last_steps_of_a_float_tree_use_shuffles() {
    let desc = check(
        &WarpShuffle,
        [128, 1, 1],
        r#"#define BLOCK_SIZE 128
__global__ void reduce_sum(const float *__restrict__ in, float *__restrict__ out, unsigned int n) {
__shared__ float sdata[BLOCK_SIZE];
unsigned int tid = threadIdx.x;
unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
sdata[tid] = (i < n) ? in[i] : 0.0f;
__syncthreads();
for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
        sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
}
if (tid == 0) out[blockIdx.x] = sdata[0];
}
"#,
        r#"#define BLOCK_SIZE 128
__global__ void reduce_sum(const float *__restrict__ in, float *__restrict__ out, unsigned int n) {
__shared__ float sdata[BLOCK_SIZE];
unsigned int tid = threadIdx.x;
unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
sdata[tid] = (i < n) ? in[i] : 0.0f;
__syncthreads();
for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) {
        sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
}
if (tid < 32) {
    float warp_sum = sdata[tid] + sdata[tid + 32];
    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 16);
    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 8);
    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 4);
    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 2);
    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 1);
    if (tid == 0) {
        sdata[0] = warp_sum;
    }
}
__syncthreads();
if (tid == 0) out[blockIdx.x] = sdata[0];
}
"#,
    );
    assert_eq!(
    desc,
    "the last 5 steps of the tree reduction of `sdata` at line 8 (the first warp's) use `__shfl_down_sync` instead of shared memory and barriers; the sums keep their order"
);
}

#[test]
fn a_double_tree_with_a_constant_stride_uses_shuffles() {
    let desc = check(
        &WarpShuffle,
        [256, 1, 1],
        r#"__global__ void reduce_max_shape(const double *in, double *out, int n) {
__shared__ double partial[256];
int tid = threadIdx.x;
int i = blockIdx.x * blockDim.x + threadIdx.x;
partial[tid] = i < n ? in[i] : 0.0;
__syncthreads();
for (int s = 128; s > 0; s /= 2) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
}
if (tid == 0) out[blockIdx.x] = partial[0];
}
"#,
        r#"__global__ void reduce_max_shape(const double *in, double *out, int n) {
__shared__ double partial[256];
int tid = threadIdx.x;
int i = blockIdx.x * blockDim.x + threadIdx.x;
partial[tid] = i < n ? in[i] : 0.0;
__syncthreads();
for (int s = 128; s > 32; s /= 2) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
}
if (tid < 32) {
    double warp_sum = partial[tid] + partial[tid + 32];
    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 16);
    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 8);
    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 4);
    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 2);
    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 1);
    if (tid == 0) {
        partial[0] = warp_sum;
    }
}
__syncthreads();
if (tid == 0) out[blockIdx.x] = partial[0];
}
"#,
    );
    assert_eq!(
    desc,
    "the last 5 steps of the tree reduction of `partial` at line 7 (the first warp's) use `__shfl_down_sync` instead of shared memory and barriers; the sums keep their order"
);
}

#[test]
fn a_stride_that_skips_32_stays() {
    check_not_applicable(
    &WarpShuffle,
    [96, 1, 1],
    r#"__global__ void reduce96(const int *in, int *out, int n) {
__shared__ int sdata[96];
unsigned int tid = threadIdx.x;
unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
sdata[tid] = (i < n) ? in[i] : 0;
__syncthreads();
for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
}
if (tid == 0) out[blockIdx.x] = sdata[0];
}
"#,
    "the tree reduction of `sdata` at line 7 keeps its shared-memory steps: the stride starts at 48, not at a power of two of at least 32",
);
}

#[test]
fn partial_sums_read_after_the_loop_stay() {
    check_not_applicable(
    &WarpShuffle,
    [128, 1, 1],
    r#"__global__ void reduce_pair(const int *in, int *out, int n) {
__shared__ int sdata[128];
unsigned int tid = threadIdx.x;
unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
sdata[tid] = (i < n) ? in[i] : 0;
__syncthreads();
for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
}
if (tid == 0) out[blockIdx.x] = sdata[0] + sdata[1];
}
"#,
    "the tree reduction of `sdata` at line 7 keeps its shared-memory steps: after the loop, `sdata` is used at other indices than 0 before each thread writes its own element again",
);
}

#[test]
fn a_max_tree_keeps_the_operands_of_its_fmaxf() {
    let desc = check(
        &WarpShuffle,
        [256, 1, 1],
        r#"#include <math.h>
__global__ void row_max(const float *x, float *out, int cols) {
    __shared__ float smax[256];
    int row = blockIdx.x;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        m = fmaxf(m, x[row * cols + c]);
    smax[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            smax[threadIdx.x] = fmaxf(smax[threadIdx.x], smax[threadIdx.x + s]);
        __syncthreads();
    }
    if (threadIdx.x == 0) out[row] = smax[0];
}
"#,
        r#"#include <math.h>
__global__ void row_max(const float *x, float *out, int cols) {
    __shared__ float smax[256];
    int row = blockIdx.x;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        m = fmaxf(m, x[row * cols + c]);
    smax[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (threadIdx.x < s)
            smax[threadIdx.x] = fmaxf(smax[threadIdx.x], smax[threadIdx.x + s]);
        __syncthreads();
    }
    if (threadIdx.x < 32) {
        float warp_max = fmaxf(smax[threadIdx.x], smax[threadIdx.x + 32]);
        warp_max = fmaxf(warp_max, __shfl_down_sync(0xffffffff, warp_max, 16));
        warp_max = fmaxf(warp_max, __shfl_down_sync(0xffffffff, warp_max, 8));
        warp_max = fmaxf(warp_max, __shfl_down_sync(0xffffffff, warp_max, 4));
        warp_max = fmaxf(warp_max, __shfl_down_sync(0xffffffff, warp_max, 2));
        warp_max = fmaxf(warp_max, __shfl_down_sync(0xffffffff, warp_max, 1));
        if (threadIdx.x == 0) {
            smax[0] = warp_max;
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) out[row] = smax[0];
}
"#,
    );
    assert_eq!(
        desc,
        "the last 5 steps of the tree reduction of `smax` at line 10 (the first warp's) use `__shfl_down_sync` instead of shared memory and barriers; each `fmaxf` takes the same operands in the same order"
    );
}

const BLOCK_MIN: &str = r#"#include <climits>
__global__ void block_min(const int *keys, int *out, unsigned n) {
    __shared__ int lo[128];
    const unsigned tid = threadIdx.x;
    const unsigned i = blockIdx.x * blockDim.x + tid;
    lo[tid] = i < n ? keys[i] : INT_MAX;
    __syncthreads();
    for (unsigned s = blockDim.x >> 1; s != 0; s >>= 1) {
        if (tid < s) {
            lo[tid] = min(lo[tid + s], lo[tid]);
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = lo[0];
}
"#;

#[test]
fn an_integer_min_tree_also_reduces_per_warp_with_its_operands_in_order() {
    let found = rewrites(&WarpShuffle, BLOCK_MIN, [128, 1, 1]);
    let texts: Vec<&str> = found.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(
        texts,
        [
            r#"#include <climits>
__global__ void block_min(const int *keys, int *out, unsigned n) {
    __shared__ int lo[128];
    const unsigned tid = threadIdx.x;
    const unsigned i = blockIdx.x * blockDim.x + tid;
    lo[tid] = i < n ? keys[i] : INT_MAX;
    __syncthreads();
    for (unsigned s = blockDim.x >> 1; s > 32; s >>= 1) {
        if (tid < s) {
            lo[tid] = min(lo[tid + s], lo[tid]);
        }
        __syncthreads();
    }
    if (tid < 32) {
        int warp_min = min(lo[tid + 32], lo[tid]);
        warp_min = min(__shfl_down_sync(0xffffffff, warp_min, 16), warp_min);
        warp_min = min(__shfl_down_sync(0xffffffff, warp_min, 8), warp_min);
        warp_min = min(__shfl_down_sync(0xffffffff, warp_min, 4), warp_min);
        warp_min = min(__shfl_down_sync(0xffffffff, warp_min, 2), warp_min);
        warp_min = min(__shfl_down_sync(0xffffffff, warp_min, 1), warp_min);
        if (tid == 0) {
            lo[0] = warp_min;
        }
    }
    __syncthreads();
    if (tid == 0) out[blockIdx.x] = lo[0];
}
"#,
            r#"#include <climits>
__global__ void block_min(const int *keys, int *out, unsigned n) {
    __shared__ int lo[128];
    const unsigned tid = threadIdx.x;
    const unsigned i = blockIdx.x * blockDim.x + tid;
    lo[tid] = i < n ? keys[i] : INT_MAX;
    __syncthreads();
    int warp_min = lo[tid];
    warp_min = min(__shfl_down_sync(0xffffffff, warp_min, 16), warp_min);
    warp_min = min(__shfl_down_sync(0xffffffff, warp_min, 8), warp_min);
    warp_min = min(__shfl_down_sync(0xffffffff, warp_min, 4), warp_min);
    warp_min = min(__shfl_down_sync(0xffffffff, warp_min, 2), warp_min);
    warp_min = min(__shfl_down_sync(0xffffffff, warp_min, 1), warp_min);
    __syncthreads();
    if (tid % 32 == 0) {
        lo[tid / 32] = warp_min;
    }
    __syncthreads();
    if (tid < 32) {
        warp_min = tid < blockDim.x / 32 ? lo[tid] : lo[0];
        warp_min = min(__shfl_down_sync(0xffffffff, warp_min, 16), warp_min);
        warp_min = min(__shfl_down_sync(0xffffffff, warp_min, 8), warp_min);
        warp_min = min(__shfl_down_sync(0xffffffff, warp_min, 4), warp_min);
        warp_min = min(__shfl_down_sync(0xffffffff, warp_min, 2), warp_min);
        warp_min = min(__shfl_down_sync(0xffffffff, warp_min, 1), warp_min);
        if (tid == 0) {
            lo[0] = warp_min;
        }
    }
    __syncthreads();
    if (tid == 0) out[blockIdx.x] = lo[0];
}
"#
        ]
    );
    assert_eq!(
        found[1].0,
        "the tree reduction of `lo` at line 8 runs in registers: each warp combines its 32 elements with `min` over `__shfl_down_sync`, then the first warp combines the warps' results (3 barriers instead of one per step; `min` of integers gives the same result in any order)"
    );
}

/// A block reduction written once for every element type, launched for
/// `int` and `float` (the way library and SDK reductions are written).
const TEMPLATE_SUM: &str = r#"template <typename T, unsigned int BLOCK>
__global__ void block_reduce(const T *in, T *out, int n) {
    __shared__ T buf[BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * BLOCK + tid;
    buf[tid] = i < n ? in[i] : T(0);
    __syncthreads();
    for (unsigned int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) buf[tid] += buf[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = buf[0];
}

void launch(const int *a, int *b, const float *c, float *d, int n) {
    block_reduce<int, 256><<<(n + 255) / 256, 256>>>(a, b, n);
    block_reduce<float, 128><<<(n + 127) / 128, 128>>>(c, d, n);
}
"#;

#[test]
fn a_template_tree_shuffles_values_of_its_type_parameter() {
    // `BLOCK / 2` is read with the instantiation's argument; the partial
    // sum is declared `T`. The per-warp order is not proposed: the
    // `float` instantiation would sum in another order.
    check(
        &WarpShuffle,
        [256, 1, 1],
        TEMPLATE_SUM,
        r#"template <typename T, unsigned int BLOCK>
__global__ void block_reduce(const T *in, T *out, int n) {
    __shared__ T buf[BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * BLOCK + tid;
    buf[tid] = i < n ? in[i] : T(0);
    __syncthreads();
    for (unsigned int s = BLOCK / 2; s > 32; s >>= 1) {
        if (tid < s) buf[tid] += buf[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        T warp_sum = buf[tid] + buf[tid + 32];
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 16);
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 8);
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 4);
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 2);
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 1);
        if (tid == 0) {
            buf[0] = warp_sum;
        }
    }
    __syncthreads();
    if (tid == 0) out[blockIdx.x] = buf[0];
}

void launch(const int *a, int *b, const float *c, float *d, int n) {
    block_reduce<int, 256><<<(n + 255) / 256, 256>>>(a, b, n);
    block_reduce<float, 128><<<(n + 127) / 128, 128>>>(c, d, n);
}
"#,
    );
    let p = try_propose_with(&WarpShuffle, TEMPLATE_SUM, [256, 1, 1], true)
        .expect("the original can be checked");
    let reassociates: Vec<bool> = p.candidates.iter().map(|c| c.reassociates).collect();
    assert_eq!(reassociates, [false, true], "with --allow-reassociation");
}

#[test]
fn a_template_with_an_instantiation_shuffles_cannot_take_stays() {
    check_not_applicable(
        &WarpShuffle,
        [128, 1, 1],
        &TEMPLATE_SUM
            .replace("const float *c, float *d", "const signed char *c, signed char *d")
            .replace("block_reduce<float, 128>", "block_reduce<signed char, 128>"),
        "the tree reduction of `buf` at line 8 keeps its shared-memory steps: its elements in `block_reduce<signed char, 128>` are `char`, which `__shfl_down_sync` does not take",
    );
}

#[test]
fn a_kernels_two_trees_are_also_rewritten_together() {
    let found = rewrites(
        &WarpShuffle,
        r#"#include <cmath>
__global__ void normalize(const float *x, float *y, int n) {
    __shared__ float hi[128];
    __shared__ float total[128];
    int t = threadIdx.x;
    float v = t < n ? x[t] : -INFINITY;
    hi[t] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) hi[t] = fmaxf(hi[t], hi[t + s]);
        __syncthreads();
    }
    float e = t < n ? expf(v - hi[0]) : 0.0f;
    total[t] = e;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) total[t] += total[t + s];
        __syncthreads();
    }
    if (t < n) y[t] = e / total[0];
}
"#,
        [128, 1, 1],
    );
    let descriptions: Vec<&str> = found.iter().map(|(d, _)| d.as_str()).collect();
    assert_eq!(descriptions.len(), 3, "{descriptions:#?}");
    assert_eq!(
        descriptions[2],
        "the last 5 steps of the tree reductions of `hi` at line 9 and `total` at line 16 (the first warp's) use `__shfl_down_sync` instead of shared memory and barriers; each step combines the same operands in the same order"
    );
    let both = &found[2].1;
    assert_eq!(
        both.matches("for (int s = blockDim.x / 2; s > 32; s >>= 1) {")
            .count(),
        2,
        "{both}"
    );
    assert!(
        both.contains("float warp_max = fmaxf(hi[t], hi[t + 32]);"),
        "{both}"
    );
    assert!(
        both.contains("float warp_sum = total[t] + total[t + 32];"),
        "{both}"
    );
    assert_eq!(both.matches("__shfl_down_sync").count(), 10, "{both}");
}

/// A softmax that reuses one buffer for both reductions, as students
/// write it: after the first tree, each thread writes its own element
/// again before anything reads past `buf[0]`.
const ONE_BUFFER: &str = r#"#include <cmath>
__global__ void softmax_one_buffer(const float *x, float *y, int n) {
    __shared__ float buf[64];
    int t = threadIdx.x;
    float v = t < n ? x[t] : -INFINITY;
    buf[t] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] = fmaxf(buf[t], buf[t + s]);
        __syncthreads();
    }
    float m = buf[0];
    __syncthreads();
    float e = t < n ? expf(v - m) : 0.0f;
    buf[t] = e;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t < n) y[t] = e / buf[0];
}
"#;

#[test]
fn a_buffer_reused_for_a_second_tree_is_rewritten_in_both() {
    let found = rewrites(&WarpShuffle, ONE_BUFFER, [64, 1, 1]);
    let descriptions: Vec<&str> = found.iter().map(|(d, _)| d.as_str()).collect();
    assert_eq!(
        descriptions.last().copied(),
        Some("the last 5 steps of the tree reductions of `buf` at line 8 and `buf` at line 17 (the first warp's) use `__shfl_down_sync` instead of shared memory and barriers; each step combines the same operands in the same order"),
        "{descriptions:#?}"
    );
}

#[test]
fn a_return_before_the_buffer_is_written_again_keeps_the_tree() {
    let early = ONE_BUFFER.replace(
        "    float e = t < n ? expf(v - m) : 0.0f;\n",
        "    if (m > 1e30f) return;\n    float e = t < n ? expf(v - m) : 0.0f;\n",
    );
    // The first tree stays; the second, after the return, is rewritten.
    let p = try_propose_with(&WarpShuffle, &early, [64, 1, 1], false)
        .expect("the original can be checked");
    let made: Vec<&str> = p
        .candidates
        .iter()
        .map(|c| c.description.as_str())
        .collect();
    assert_eq!(
        made,
        ["the last 5 steps of the tree reduction of `buf` at line 18 (the first warp's) use `__shfl_down_sync` instead of shared memory and barriers; the sums keep their order"]
    );
    let why: Vec<&str> = p.skipped.iter().map(|s| s.reason.as_str()).collect();
    assert_eq!(
        why,
        ["the tree reduction of `buf` at line 8 keeps its shared-memory steps: after the loop, a thread may return before each thread writes its own element of `buf` again"]
    );
}

#[test]
fn a_stride_whose_type_cannot_hold_its_start_stays() {
    // `char s = 256` is 0 once converted, so the original's tree never
    // runs: a rewrite would reduce what the original leaves alone.
    check_not_applicable(
        &WarpShuffle,
        [512, 1, 1],
        r#"__global__ void reduce512(const int *in, int *out, int n) {
    __shared__ int sdata[512];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + tid;
    sdata[tid] = (i < n) ? in[i] : 0;
    __syncthreads();
    for (char s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}
"#,
        "the tree reduction of `sdata` at line 7 keeps its shared-memory steps: the stride `s` is `char`, which cannot hold its start 256",
    );
}

/// The interleaved tree everyone writes first (Harris's `reduce0`).
const INTERLEAVED: &str = r#"#define BLOCK_SIZE 256
__global__ void reduce0(const int *g_idata, int *g_odata, unsigned int n) {
    __shared__ int sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
"#;

#[test]
fn an_interleaved_integer_tree_becomes_sequential_with_shuffles() {
    let found = rewrites(&WarpShuffle, INTERLEAVED, [256, 1, 1]);
    assert_eq!(found.len(), 2, "the tail and the per-warp order");
    assert_eq!(
        found[0].0,
        "the interleaved tree reduction of `sdata` at line 8 (each step keeps every `2·s`-th thread, which leaves lanes of every warp idle) becomes sequential (`tid < s`), and its last 5 steps use `__shfl_down_sync` in the first warp; integer sums, so the new order gives the same result"
    );
    assert_eq!(
        found[0].1,
        r#"#define BLOCK_SIZE 256
__global__ void reduce0(const int *g_idata, int *g_odata, unsigned int n) {
    __shared__ int sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid < 32) {
        int warp_sum = sdata[tid] + sdata[tid + 32];
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 16);
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 8);
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 4);
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 2);
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 1);
        if (tid == 0) {
            sdata[0] = warp_sum;
        }
    }
    __syncthreads();
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
"#
    );
}

#[test]
fn an_interleaved_float_tree_changes_order_only_when_allowed() {
    let float = INTERLEAVED
        .replace("const int *", "const float *")
        .replace("int *g_odata", "float *g_odata")
        .replace("__shared__ int", "__shared__ float");
    check_not_applicable(
        &WarpShuffle,
        [256, 1, 1],
        &float,
        "the tree reduction of `sdata` at line 8 keeps its shared-memory steps: made sequential, its floating-point steps would combine in another order (allowed by --allow-reassociation)",
    );
    let p = try_propose_with(&WarpShuffle, &float, [256, 1, 1], true)
        .expect("the original can be checked");
    assert!(
        !p.candidates.is_empty() && p.candidates.iter().all(|c| c.reassociates),
        "with --allow-reassociation, every candidate is checked as reassociated"
    );
}

#[test]
fn an_interleaved_tree_over_a_block_that_is_no_power_of_two_stays() {
    check_not_applicable(
        &WarpShuffle,
        [96, 1, 1],
        &INTERLEAVED.replace("#define BLOCK_SIZE 256", "#define BLOCK_SIZE 128"),
        "the tree reduction of `sdata` at line 8 keeps its shared-memory steps: the interleaved loop reduces 96 elements, not a power of two of at least 64 that the sequential one would halve",
    );
}

/// The classic warp-synchronous tail: a `warpReduce` device function over
/// a `volatile` pointer, called by the first warp after a loop to 32.
const WARP_REDUCE: &str = r#"__device__ void warpReduce(volatile int *s, unsigned int t) {
s[t] += s[t + 32];
s[t] += s[t + 16];
s[t] += s[t + 8];
s[t] += s[t + 4];
s[t] += s[t + 2];
s[t] += s[t + 1];
}
__global__ void reduce4(const int *in, int *out, unsigned int n) {
__shared__ int sdata[128];
unsigned int tid = threadIdx.x;
unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
sdata[tid] = (i < n) ? in[i] : 0;
__syncthreads();
for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
}
if (tid < 32) warpReduce(sdata, tid);
if (tid == 0) out[blockIdx.x] = sdata[0];
}
"#;

#[test]
fn a_hand_unrolled_warp_synchronous_tail_becomes_shuffles() {
    let after = WARP_REDUCE.replace(
        "if (tid < 32) warpReduce(sdata, tid);\n",
        "if (tid < 32) {
    int warp_sum = sdata[tid] + sdata[tid + 32];
    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 16);
    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 8);
    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 4);
    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 2);
    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 1);
    if (tid == 0) {
        sdata[0] = warp_sum;
    }
}
",
    );
    let p = try_propose_with(&WarpShuffle, WARP_REDUCE, [128, 1, 1], false).unwrap();
    assert_eq!(
        p.candidates.len(),
        1,
        "only the tail: the loop already stops at 32"
    );
    assert!(p.candidates[0].repairs.is_some());
    let desc = check(&WarpShuffle, [128, 1, 1], WARP_REDUCE, &after);
    assert!(
        desc.starts_with(
            "`warpReduce`'s hand-unrolled last 6 steps of the tree reduction of `sdata` at line 15"
        ),
        "{desc}"
    );
}

#[test]
fn an_inline_tail_through_a_volatile_pointer_becomes_shuffles_for_floats_too() {
    // The same operands in the same order: exact for floating-point sums.
    let before = r#"__global__ void sum_squares(const float *x, float *partial, int n) {
__shared__ float cache[256];
int tid = threadIdx.x;
int i = blockIdx.x * blockDim.x + tid;
float v = i < n ? x[i] : 0.0f;
cache[tid] = v * v;
__syncthreads();
for (int s = 128; s > 32; s /= 2) {
    if (tid < s) {
        cache[tid] += cache[tid + s];
    }
    __syncthreads();
}
if (tid < 32) {
    volatile float *smem = cache;
    smem[tid] += smem[tid + 32];
    smem[tid] += smem[tid + 16];
    smem[tid] += smem[tid + 8];
    smem[tid] += smem[tid + 4];
    smem[tid] += smem[tid + 2];
    smem[tid] += smem[tid + 1];
}
if (tid == 0) partial[blockIdx.x] = cache[0];
}
"#;
    let after = before.replace(
        "    volatile float *smem = cache;
    smem[tid] += smem[tid + 32];
    smem[tid] += smem[tid + 16];
    smem[tid] += smem[tid + 8];
    smem[tid] += smem[tid + 4];
    smem[tid] += smem[tid + 2];
    smem[tid] += smem[tid + 1];
",
        "    float warp_sum = cache[tid] + cache[tid + 32];
    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 16);
    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 8);
    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 4);
    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 2);
    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 1);
    if (tid == 0) {
        cache[0] = warp_sum;
    }
",
    );
    let desc = check(&WarpShuffle, [256, 1, 1], before, &after);
    assert!(desc.starts_with("the hand-unrolled last 6 steps"), "{desc}");
}

#[test]
fn an_unrolled_tail_that_skips_a_step_is_not_recognized() {
    // Without the `+ 8` step the first warp sums other elements: this is
    // no tree copper knows, so nothing is proposed.
    let src = WARP_REDUCE.replace("s[t] += s[t + 8];\n", "");
    let p = try_propose_with(&WarpShuffle, &src, [128, 1, 1], false).unwrap();
    assert!(
        p.candidates.is_empty() && p.skipped.is_empty(),
        "{:?}",
        p.skipped
    );
}

#[test]
fn an_unrolled_tail_whose_partial_sums_are_read_later_stays() {
    let src = WARP_REDUCE.replace(
        "out[blockIdx.x] = sdata[0];",
        "out[blockIdx.x] = sdata[0] - sdata[1];",
    );
    check_not_applicable(
        &WarpShuffle,
        [128, 1, 1],
        &src,
        "the tree reduction of `sdata` at line 15 keeps its shared-memory steps: after the loop, `sdata` is used at other indices than 0 before each thread writes its own element again",
    );
}

/// The interleaved tree through a strided index (the second kernel of the
/// classic slides): the threads are compacted, the banks conflict.
const STRIDED: &str = r#"__global__ void reduce1(const int *in, int *out, int n) {
__shared__ int sdata[128];
unsigned int tid = threadIdx.x;
unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
sdata[tid] = (i < n) ? in[i] : 0;
__syncthreads();
for (unsigned int s = 1; s < blockDim.x; s *= 2) {
    unsigned int index = 2 * s * tid;
    if (index < blockDim.x) {
        sdata[index] += sdata[index + s];
    }
    __syncthreads();
}
if (tid == 0) out[blockIdx.x] = sdata[0];
}
"#;

#[test]
fn a_strided_index_tree_of_integers_becomes_sequential_with_shuffles() {
    let found = rewrites(&WarpShuffle, STRIDED, [128, 1, 1]);
    let (desc, text) = found
        .iter()
        .find(|(d, _)| d.starts_with("the interleaved tree"))
        .expect("the tail candidate");
    assert!(
        desc.contains("the element index `2·s·tid` makes the lanes of a warp hit the same shared-memory banks"),
        "{desc}"
    );
    let sequential = "for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) {
        sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
}
if (tid < 32) {
    int warp_sum = sdata[tid] + sdata[tid + 32];";
    assert!(text.contains(sequential), "{text}");
    assert!(!text.contains("index"), "{text}");
}

#[test]
fn a_strided_index_float_tree_changes_order_only_when_allowed() {
    let src = STRIDED
        .replace("const int *in, int *out", "const float *in, float *out")
        .replace("__shared__ int", "__shared__ float");
    let p = try_propose_with(&WarpShuffle, &src, [128, 1, 1], false).unwrap();
    assert!(p.candidates.is_empty());
    assert!(p.skipped[0].reason.ends_with("made sequential, its floating-point steps would combine in another order (allowed by --allow-reassociation)"), "{:?}", p.skipped);
    let p = try_propose_with(&WarpShuffle, &src, [128, 1, 1], true).unwrap();
    assert!(!p.candidates.is_empty());
}
