//! The rewrite before and after, and the kernels it leaves alone with
//! the exact reason ([`crate::fixture`]).

use super::TiledGlobalToShared;
use crate::fixture::{check, check_not_applicable};

#[test]
fn a_vector_read_by_every_column_is_staged_in_tiles() {
    let desc = check(
        &TiledGlobalToShared,
        [64, 1, 1],
        r#"__global__ void vecmat(const float *v, const float *m, float *out, int w, int h) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < w) {
        float s = 0.0f;
        for (int k = 0; k < h; k++) {
            s += v[k] * m[k * w + col];
        }
        out[col] = s;
    }
}
"#,
        r#"__global__ void vecmat(const float *__restrict__ v, const float *m, float *__restrict__ out, int w, int h) {
    __shared__ float v_tile[64];
    __shared__ int any_active;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    bool active = col < w;
    if (threadIdx.x == 0) {
        any_active = 0;
    }
    __syncthreads();
    if (active) {
        any_active = 1;
    }
    __syncthreads();
    {
        float s;
        if (active) {
            s = 0.0f;
        }
        for (int k_tile = 0; k_tile < h; k_tile += 64) {
            if (any_active && k_tile + threadIdx.x < h) {
                v_tile[threadIdx.x] = v[k_tile + threadIdx.x];
            }
            __syncthreads();
            int k_end = h < k_tile + 64 ? h : k_tile + 64;
            if (active) {
                for (int k = k_tile; k < k_end; k++) {
                    s += v_tile[k - k_tile] * m[k * w + col];
                }
            }
            __syncthreads();
        }
        if (active) {
            out[col] = s;
        }
    }
}
"#,
    );
    assert_eq!(
        desc,
        "staged `v` through shared memory 64 elements at a time: the loop at line 5 runs in tiles the whole block loads together; declares `v` and `out` `__restrict__`: callers must pass arrays that do not overlap (copper cannot tell: the file does not launch it, and there is no parameter file)"
    );
}

#[test]
fn a_weight_row_of_macro_length_is_staged() {
    let desc = check(
        &TiledGlobalToShared,
        [128, 1, 1],
        r#"#define DIM 64
__global__ void weighted(const int *__restrict__ weights, const int *__restrict__ x, long long *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    long long acc = 0;
    for (int k = 0; k < DIM; k++) {
        acc += static_cast<long long>(weights[k]) * x[(i % n) * DIM + k];
    }
    if (i < n) y[i] = acc;
}
"#,
        r#"#define DIM 64
__global__ void weighted(const int *__restrict__ weights, const int *__restrict__ x, long long *y, int n) {
    __shared__ int weights_tile[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    long long acc = 0;
    for (int k_tile = 0; k_tile < DIM; k_tile += 128) {
        if (k_tile + threadIdx.x < DIM) {
            weights_tile[threadIdx.x] = weights[k_tile + threadIdx.x];
        }
        __syncthreads();
        int k_end = DIM < k_tile + 128 ? DIM : k_tile + 128;
        for (int k = k_tile; k < k_end; k++) {
            acc += static_cast<long long>(weights_tile[k - k_tile]) * x[i % n * DIM + k];
        }
        __syncthreads();
    }
    if (i < n) y[i] = acc;
}
"#,
    );
    assert_eq!(
        desc,
        "staged `weights` through shared memory 128 elements at a time: the loop at line 5 runs in tiles the whole block loads together"
    );
}

#[test]
fn a_size_t_counter_is_refused_by_its_type() {
    check_not_applicable(
        &TiledGlobalToShared,
        [64, 1, 1],
        r#"#include <cstddef>
__global__ void vecmat_sizet(const float *v, const float *m, float *out, size_t w, size_t h) {
    size_t col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < w) {
        float s = 0.0f;
        for (size_t k = 0; k < h; k++) {
            s += v[k] * m[k * w + col];
        }
        out[col] = s;
    }
}
"#,
        "the loop at line 6 is not tiled: its counter `k` is `size_t`: tiling rewrites only counters of the built-in integer types (`int`, `unsigned`, `long`, …)",
    );
}

#[test]
fn an_early_return_keeps_the_loop() {
    check_not_applicable(
        &TiledGlobalToShared,
        [64, 1, 1],
        r#"__global__ void vecmat_early(const float *v, const float *m, float *out, int w, int h) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= w) return;
    float s = 0.0f;
    for (int k = 0; k < h; k++) {
        s += v[k] * m[k * w + col];
    }
    out[col] = s;
}
"#,
        "the loop at line 5 is not tiled: the kernel may return early, and the tiles' barriers need every thread",
    );
}

#[test]
fn a_tile_that_does_not_fit_beside_a_launch_s_dynamic_shared_memory_is_refused() {
    let src = |bytes: &str| {
        format!(
            r#"__global__ void vecmat(const float *v, const float *m, float *out, int w, int h) {{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < w) {{
        float s = 0.0f;
        for (int k = 0; k < h; k++) {{
            s += v[k] * m[k * w + col];
        }}
        out[col] = s;
    }}
}}
void host(const float *v, const float *m, float *out, int w, int h) {{ vecmat<<<w / 64, 64, {bytes}>>>(v, m, out, w, h); }}
"#
        )
    };
    check_not_applicable(
        &TiledGlobalToShared,
        [64, 1, 1],
        &src("48 * 1024 - 100"),
        "the loop at line 5 is not tiled: tiling `v` takes 256 bytes, and with the kernel's 0 bytes of shared memory and the 49052 bytes of dynamic shared memory the launch at line 11 asks for more than 49152",
    );
    let fits = crate::fixture::rewrites(&TiledGlobalToShared, &src("1024"), [64, 1, 1]);
    assert_eq!(fits.len(), 1);
}
