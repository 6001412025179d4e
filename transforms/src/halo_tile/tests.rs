//! The rewrite before and after, and the kernels it leaves alone with
//! the exact reason ([`crate::fixture`]).

use super::HaloTile;
use crate::fixture::{check, check_not_applicable, rewrites};

#[test]
fn a_centered_window_with_its_guard_reads_a_halo_tile() {
    let desc = check(
        &HaloTile,
        [64, 1, 1],
        r#"#define R 3
__global__ void window_sum(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int k = -R; k <= R; k++)
            if (i + k >= 0 && i + k < n)
                s += in[i + k];
        out[i] = s;
    }
}
"#,
        r#"#define R 3
__global__ void window_sum(const float *__restrict__ in, float *__restrict__ out, int n) {
    if (blockDim.x <= 1024 && blockDim.y == 1 && blockDim.z == 1) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        __shared__ float in_halo[1030];
        long long in_base = (long long)i - threadIdx.x;
        if (in_base < n) {
            for (int in_t = threadIdx.x; in_t < blockDim.x + 6; in_t += blockDim.x) {
                long long in_j = in_base + in_t - R;
                if (in_j >= 0 && in_j < n) {
                    in_halo[in_t] = in[in_j];
                }
            }
        }
        __syncthreads();
        if (i < n) {
            float s = 0.0f;
            for (int k = -R; k <= R; k++)
                if (i + k >= 0 && i + k < n)
                    s += in_halo[threadIdx.x + (k + R)];
            out[i] = s;
        }
    } else {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            float s = 0.0f;
            for (int k = -R; k <= R; k++)
                if (i + k >= 0 && i + k < n)
                    s += in[i + k];
            out[i] = s;
        }
    }
}
"#,
    );
    assert_eq!(
        desc,
        "loaded the elements of `in` that a block's windows read in the loop at line 6 (`in[i + k]` for `k` from -3 to 3) into a `__shared__` tile of blockDim.x + 6 elements, each once, by the whole block and only where the original reads it; the loop reads the tile. Blocks that are not 1-D or have more than 1024 threads run the original code; declares `in` and `out` `__restrict__`: callers must pass arrays that do not overlap (copper cannot tell: the file does not launch it, and there is no parameter file)"
    );
}

#[test]
fn a_forward_window_after_an_early_return() {
    let desc = check(
        &HaloTile,
        [32, 1, 1],
        r#"#define WS 4
__global__ void forward(const int *__restrict__ in, int *__restrict__ out, int n) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i >= n) return;
    int s = 0;
    for (int k = 0; k < WS; k++) {
        if (i + k < n) s += in[i + k];
    }
    out[i] = s;
}
"#,
        r#"#define WS 4
__global__ void forward(const int *__restrict__ in, int *__restrict__ out, int n) {
    if (blockDim.x <= 1024 && blockDim.y == 1 && blockDim.z == 1) {
        int i = threadIdx.x + blockIdx.x * blockDim.x;
        __shared__ int in_halo[1027];
        long long in_base = (long long)i - threadIdx.x;
        if (in_base < n) {
            for (int in_t = threadIdx.x; in_t < blockDim.x + 3; in_t += blockDim.x) {
                long long in_j = in_base + in_t;
                if (in_j < n) {
                    in_halo[in_t] = in[in_j];
                }
            }
        }
        __syncthreads();
        if (i >= n) return;
        int s = 0;
        for (int k = 0; k < WS; k++) {
            if (i + k < n) s += in_halo[threadIdx.x + k];
        }
        out[i] = s;
    } else {
        int i = threadIdx.x + blockIdx.x * blockDim.x;
        if (i >= n) return;
        int s = 0;
        for (int k = 0; k < WS; k++) {
            if (i + k < n) s += in[i + k];
        }
        out[i] = s;
    }
}
"#,
    );
    assert_eq!(
        desc,
        "loaded the elements of `in` that a block's windows read in the loop at line 6 (`in[i + k]` for `k` from 0 to 3) into a `__shared__` tile of blockDim.x + 3 elements, each once, by the whole block and only where the original reads it; the loop reads the tile. Blocks that are not 1-D or have more than 1024 threads run the original code"
    );
}

#[test]
fn an_unguarded_forward_window_loads_only_what_active_threads_read() {
    check(
        &HaloTile,
        [32, 1, 1],
        r#"__global__ void forward(const float *__restrict__ in, float *__restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int k = 0; k < 5; k++) s += in[i + k];
        out[i] = s;
    }
}
"#,
        r#"__global__ void forward(const float *__restrict__ in, float *__restrict__ out, int n) {
    if (blockDim.x <= 1024 && blockDim.y == 1 && blockDim.z == 1) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        __shared__ float in_halo[1028];
        long long in_base = (long long)i - threadIdx.x;
        if (in_base < n) {
            for (int in_t = threadIdx.x; in_t < blockDim.x + 4; in_t += blockDim.x) {
                long long in_j = in_base + in_t;
                if (in_j - 4 < n) {
                    in_halo[in_t] = in[in_j];
                }
            }
        }
        __syncthreads();
        if (i < n) {
            float s = 0.0f;
            for (int k = 0; k < 5; k++) s += in_halo[threadIdx.x + k];
            out[i] = s;
        }
    } else {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            float s = 0.0f;
            for (int k = 0; k < 5; k++) s += in[i + k];
            out[i] = s;
        }
    }
}
"#,
    );
}

#[test]
fn a_window_of_every_thread_loads_every_element() {
    check(
        &HaloTile,
        [32, 1, 1],
        r#"__global__ void forward(const float *__restrict__ in, float *__restrict__ out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < 5; k++) s += in[i + k];
    out[i] = s;
}
"#,
        r#"__global__ void forward(const float *__restrict__ in, float *__restrict__ out) {
    if (blockDim.x <= 1024 && blockDim.y == 1 && blockDim.z == 1) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        float s = 0.0f;
        __shared__ float in_halo[1028];
        long long in_base = (long long)i - threadIdx.x;
        for (int in_t = threadIdx.x; in_t < blockDim.x + 4; in_t += blockDim.x) {
            long long in_j = in_base + in_t;
            in_halo[in_t] = in[in_j];
        }
        __syncthreads();
        for (int k = 0; k < 5; k++) s += in_halo[threadIdx.x + k];
        out[i] = s;
    } else {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        float s = 0.0f;
        for (int k = 0; k < 5; k++) s += in[i + k];
        out[i] = s;
    }
}
"#,
    );
}

#[test]
fn a_radius_from_a_parameter_is_refused() {
    check_not_applicable(
        &HaloTile,
        [64, 1, 1],
        r#"__global__ void window(const float *__restrict__ in, float *__restrict__ out, int n, int r) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int k = -r; k <= r; k++)
            if (i + k >= 0 && i + k < n) s += in[i + k];
        out[i] = s;
    }
}
"#,
        "`in` is not loaded into a halo tile for the loop at line 5: its range is not fixed by constants (a radius from a parameter would need dynamic shared memory sized at every launch, which is not done)",
    );
}

#[test]
fn a_written_array_is_refused() {
    check_not_applicable(
        &HaloTile,
        [64, 1, 1],
        r#"__global__ void smooth(float *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int k = -1; k <= 1; k++)
            if (i + k >= 0 && i + k < n) s += a[i + k];
        a[i] = s;
    }
}
"#,
        "`a` is not loaded into a halo tile for the loop at line 5: the kernel writes it, so a tile could hold stale values",
    );
}

#[test]
fn an_index_other_than_the_window_is_refused() {
    check_not_applicable(
        &HaloTile,
        [64, 1, 1],
        r#"__global__ void pairs(const float *__restrict__ in, float *__restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int k = 0; k < 2; k++) s += in[2 * i + k];
        out[i] = s;
    }
}
"#,
        "`in` is not loaded into a halo tile for the loop at line 5: its index `2 * i + k` is not the window index `i + k`, a copy of it or a clamp of it with `min`, `max` or `?:`",
    );
}

#[test]
fn a_bound_that_depends_on_the_thread_is_refused() {
    check_not_applicable(
        &HaloTile,
        [64, 1, 1],
        r#"__global__ void ragged(const float *__restrict__ in, float *__restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int k = 0; k < i % 4; k++) s += in[i + k];
        out[i] = s;
    }
}
"#,
        "`in` is not loaded into a halo tile for the loop at line 5: its range may differ between threads",
    );
}

#[test]
fn a_read_under_another_condition_is_refused() {
    check_not_applicable(
        &HaloTile,
        [64, 1, 1],
        r#"__global__ void masked(const float *__restrict__ in, const int *__restrict__ m, float *__restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int k = 0; k < 3; k++)
            if (m[k] != 0) s += in[i + k];
        out[i] = s;
    }
}
"#,
        "`in` is not loaded into a halo tile for the loop at line 5: `in` is read under a condition (`m[k] != 0`) that is not a bound on `i + k`",
    );
}

#[test]
fn a_radius_from_a_local_constant_is_kept_by_name() {
    let found = rewrites(
        &HaloTile,
        r#"__global__ void blur(const float *__restrict__ in, float *__restrict__ out, int n) {
    const int R = 2;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = 0.0f;
    for (int k = -R; k <= R; k++)
        if (i + k >= 0 && i + k < n) s += in[i + k];
    out[i] = s;
}
"#,
        [64, 1, 1],
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    let text = &found[0].1;
    assert!(text.contains("__shared__ float in_halo[1028];"), "{text}");
    assert!(
        text.contains("long long in_j = in_base + in_t - R;"),
        "{text}"
    );
    assert!(
        text.contains("s += in_halo[threadIdx.x + (k + R)];"),
        "{text}"
    );
}

#[test]
fn a_copy_of_the_window_index_reads_the_tile_too() {
    let found = rewrites(
        &HaloTile,
        r#"#define R 4
__global__ void box(const int *__restrict__ in, int *__restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int s = 0;
        for (int k = -R; k <= R; k++) {
            int j = i + k;
            if (j >= 0 && j < n) s += in[j];
        }
        out[i] = s;
    }
}
"#,
        [64, 1, 1],
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    let text = &found[0].1;
    assert!(text.contains("if (in_j >= 0 && in_j < n) {"), "{text}");
    assert!(
        text.contains("if (j >= 0 && j < n) s += in_halo[threadIdx.x + (k + R)];"),
        "{text}"
    );
}

#[test]
fn threads_from_a_lower_bound_load_only_their_windows() {
    let found = rewrites(
        &HaloTile,
        r#"#define R 3
__global__ void inner(const float *__restrict__ in, float *__restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= R && i < n - R) {
        float s = 0.0f;
        for (int k = -R; k <= R; k++) s += in[i + k];
        out[i] = s;
    }
}
"#,
        [64, 1, 1],
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    let text = &found[0].1;
    assert!(
        text.contains("if (in_base + blockDim.x > R && R < n - R && in_base < n - R) {"),
        "{text}"
    );
    assert!(
        text.contains("if (in_j + R >= R && in_j - 3 < n - R) {"),
        "{text}"
    );
}

/// The centered window, launched from host code asking for `bytes` of
/// dynamic shared memory (line 13).
fn window_launched_with(bytes: &str) -> String {
    format!(
        r#"#define R 3
__global__ void window_sum(const float *__restrict__ in, float *__restrict__ out, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {{
        float s = 0.0f;
        for (int k = -R; k <= R; k++)
            if (i + k >= 0 && i + k < n) s += in[i + k];
        out[i] = s;
    }}
}}
void run(const float *in, float *out, int n, int smem) {{
    // shared memory asked for at the launch
    window_sum<<<(n + 63) / 64, 64, {bytes}>>>(in, out, n);
}}
"#
    )
}

#[test]
fn a_tile_that_does_not_fit_beside_a_launch_s_dynamic_shared_memory_is_refused() {
    // 46 KiB asked for at the launch and a tile of 4120 bytes: the
    // rewritten kernel would not launch.
    check_not_applicable(
        &HaloTile,
        [64, 1, 1],
        &window_launched_with("46 * 1024"),
        "`in` is not loaded into a halo tile for the loop at line 6: a tile of 1030 elements takes 4120 bytes, and with the kernel's 0 bytes of shared memory and the 47104 bytes of dynamic shared memory the launch at line 13 asks for more than 49152",
    );
    check_not_applicable(
        &HaloTile,
        [64, 1, 1],
        &window_launched_with("smem"),
        "`in` is not loaded into a halo tile for the loop at line 6: the launch at line 13 asks for a dynamic shared-memory size copper cannot read, so a static array may not fit beside it",
    );
    // A small dynamic size leaves room.
    assert_eq!(
        rewrites(&HaloTile, &window_launched_with("1024"), [64, 1, 1]).len(),
        1
    );
}
