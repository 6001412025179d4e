//! Windows written out as reads at constant offsets, 1-D and 2-D: the
//! rewrite before and after, and what is left alone with the exact reason
//! ([`crate::fixture`]).

use super::HaloTile;
use crate::fixture::{check, check_not_applicable, rewrites};

const SMOOTH3: &str = r#"__global__ void smooth3(const float *__restrict__ in, float *__restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) out[i] = (in[i - 1] + in[i] + in[i + 1]) / 3.0f;
}
"#;

const JACOBI: &str = r#"__global__ void jacobi(const float *__restrict__ in, float *__restrict__ out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x > 0 && x < w - 1 && y > 0 && y < h - 1) {
        int idx = y * w + x;
        out[idx] = 0.2f * (in[idx - 1] + in[idx + 1] + in[idx - w] + in[idx + w] + in[idx]);
    }
}
"#;

const NINE: &str = r#"__global__ void nine(const int *__restrict__ in, int *__restrict__ out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1) return;
    int s = in[(y - 1) * w + x - 1] + in[(y - 1) * w + x] + in[(y - 1) * w + (x + 1)];
    s += in[y * w + x - 1] + in[y * w + x + 1];
    s += in[(y + 1) * w + x - 1] + in[(y + 1) * w + x] + in[(y + 1) * w + x + 1];
    out[y * w + x] = s;
}
"#;

const GAPS: &str = r#"__global__ void diff2(const float *__restrict__ in, float *__restrict__ out, int n) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < 2 || i >= n - 2) return;
    out[i] = in[i + 2] - in[i - 2];
}
"#;

/// `in[i - 1] + in[i] + in[i + 1]` under an interior-only guard: the
/// tile holds the elements interior threads read (`i > 0` taken as `i >=
/// 1`), read at `threadIdx.x + (offset + 1)`.
#[test]
fn a_three_point_average_written_out_reads_a_halo_tile() {
    let desc = check(
        &HaloTile,
        [256, 1, 1],
        SMOOTH3,
        r#"__global__ void smooth3(const float *__restrict__ in, float *__restrict__ out, int n) {
    if (blockDim.x <= 1024 && blockDim.y == 1 && blockDim.z == 1) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        __shared__ float in_halo[1026];
        long long in_base = (long long)i - threadIdx.x;
        if (in_base + blockDim.x > 1 && 1 < n - 1 && in_base < n - 1) {
            for (int in_t = threadIdx.x; in_t < blockDim.x + 2; in_t += blockDim.x) {
                long long in_j = in_base + in_t - 1;
                if (in_j + 1 >= 1 && in_j - 1 < n - 1) {
                    in_halo[in_t] = in[in_j];
                }
            }
        }
        __syncthreads();
        if (i > 0 && i < n - 1) out[i] = (in_halo[threadIdx.x] + in_halo[threadIdx.x + 1] + in_halo[threadIdx.x + 2]) / 3.0f;
    } else {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i > 0 && i < n - 1) out[i] = (in[i - 1] + in[i] + in[i + 1]) / 3.0f;
    }
}
"#,
    );
    assert!(
        desc.contains("(`in[i - 1]`, `in[i]`, `in[i + 1]`; offsets from -1 to 1)"),
        "{desc}"
    );
}

/// The 5-point Jacobi step through `idx = y * w + x`: the tile loads the
/// cross the threads read and its center (between two reads of one
/// thread), as a row and a column of offsets, never the corners.
#[test]
fn a_five_point_cross_loads_a_row_and_a_column_but_no_corner() {
    check(
        &HaloTile,
        [16, 16, 1],
        JACOBI,
        r#"__global__ void jacobi(const float *__restrict__ in, float *__restrict__ out, int w, int h) {
    if (blockDim.x <= 32 && blockDim.y <= 32 && blockDim.z == 1) {
        int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
        __shared__ float in_halo[34][48];
        long long in_by = (long long)y - threadIdx.y;
        long long in_bx = (long long)x - threadIdx.x;
        if (in_by + blockDim.y > 1 && 1 < h - 1 && in_by < h - 1 && in_bx + blockDim.x > 1 && 1 < w - 1 && in_bx < w - 1) {
            for (int in_ty = threadIdx.y; in_ty < blockDim.y + 2; in_ty += blockDim.y) {
                long long in_jy = in_by + in_ty - 1;
                for (int in_tx = threadIdx.x; in_tx < blockDim.x + 2; in_tx += blockDim.x) {
                    long long in_jx = in_bx + in_tx - 1;
                    if (in_jy + 1 >= 1 && in_jy - 1 < h - 1 && in_tx >= 1 && in_tx < blockDim.x + 1 && in_jx >= 1 && in_jx < w - 1 || in_ty >= 1 && in_ty < blockDim.y + 1 && in_jy >= 1 && in_jy < h - 1 && in_jx + 1 >= 1 && in_jx - 1 < w - 1) {
                        in_halo[in_ty][in_tx] = in[in_jy * w + in_jx];
                    }
                }
            }
        }
        __syncthreads();
        if (x > 0 && x < w - 1 && y > 0 && y < h - 1) {
            int idx = y * w + x;
            out[idx] = 0.2f * (in_halo[threadIdx.y + 1][threadIdx.x] + in_halo[threadIdx.y + 1][threadIdx.x + 2] + in_halo[threadIdx.y][threadIdx.x + 1] + in_halo[threadIdx.y + 2][threadIdx.x + 1] + in_halo[threadIdx.y + 1][threadIdx.x + 1]);
        }
    } else {
        int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
        if (x > 0 && x < w - 1 && y > 0 && y < h - 1) {
            int idx = y * w + x;
            out[idx] = 0.2f * (in[idx - 1] + in[idx + 1] + in[idx - w] + in[idx + w] + in[idx]);
        }
    }
}
"#,
    );
}

/// 9-point reads written as `(y - 1) * w + x - 1` and the like, after an
/// early return: one box, the whole 3 × 3 (its center filled in).
#[test]
fn a_nine_point_stencil_after_an_early_return_is_one_box() {
    let found = rewrites(&HaloTile, NINE, [16, 16, 1]);
    assert_eq!(found.len(), 1, "{found:#?}");
    let text = &found[0].1;
    assert!(
        text.contains("if (in_jy + 1 >= 1 && in_jy - 1 < h - 1 && in_jx + 1 >= 1 && in_jx - 1 < w - 1) {\n                        in_halo[in_ty][in_tx] = in[in_jy * w + in_jx];"),
        "{text}"
    );
    assert!(text.contains("s += in_halo[threadIdx.y + 2][threadIdx.x] + in_halo[threadIdx.y + 2][threadIdx.x + 1] + in_halo[threadIdx.y + 2][threadIdx.x + 2];"), "{text}");
}

/// `in[i + 2] - in[i - 2]`: the tile covers offsets -2 to 2, the three
/// between filled in (between two reads of one thread).
#[test]
fn reads_with_a_gap_load_the_elements_between() {
    let found = rewrites(&HaloTile, GAPS, [64, 1, 1]);
    assert_eq!(found.len(), 1, "{found:#?}");
    let text = &found[0].1;
    assert!(text.contains("__shared__ float in_halo[1028];"), "{text}");
    assert!(
        text.contains("out[i] = in_halo[threadIdx.x + 4] - in_halo[threadIdx.x];"),
        "{text}"
    );
}

#[test]
fn a_written_array_read_at_offsets_is_refused() {
    check_not_applicable(
        &HaloTile,
        [64, 1, 1],
        r#"__global__ void smooth(float *a, float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) b[i] = a[i - 1] + a[i + 1];
    if (i == 0) a[i] = 0.0f;
}
"#,
        "`a` is not loaded into a halo tile for its reads at line 3: the kernel writes it, so a tile could hold stale values",
    );
}

#[test]
fn an_offset_from_a_parameter_is_refused() {
    check_not_applicable(
        &HaloTile,
        [64, 1, 1],
        r#"__global__ void shifted(const float *__restrict__ in, float *__restrict__ out, int n, int s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i + s < n) out[i] = in[i - 1] + in[i + s];
}
"#,
        "`in` is not loaded into a halo tile for its reads at line 3: its index `i + s` is not the thread's own element plus a constant",
    );
}

/// A neighbour read only by some threads (`i > 0 ? in[i - 1] : 0`, or
/// under its own `if`): which threads read it is not what the tile's
/// conditions describe, so it is left alone.
#[test]
fn a_read_under_a_condition_of_its_own_is_refused() {
    check_not_applicable(
        &HaloTile,
        [64, 1, 1],
        r#"__global__ void smooth(const float *__restrict__ in, float *__restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float left = i > 0 ? in[i - 1] : 0.0f;
    out[i] = left + in[i];
}
"#,
        "`in` is not loaded into a halo tile for its reads at line 4: a read of it is conditional within its expression (`&&`, `||` or `?:`)",
    );
    check_not_applicable(
        &HaloTile,
        [64, 1, 1],
        r#"__global__ void smooth(const float *__restrict__ in, float *__restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = in[i];
        if (i + 1 < n) s += in[i + 1];
        out[i] = s;
    }
}
"#,
        "`in` is not loaded into a halo tile for its reads at line 4: `in` is read in a loop, under a condition or in an `else` branch, not all in straight-line code every thread runs",
    );
}

/// A row length copied into a local `const int` (`const int W = width;`)
/// is a fixed `int`: the reads `in[(y - 1) * W + x]` make the 5-point
/// cross, the bounds `x < W - 1` are bounds on the thread, and the tile
/// is loaded as `in[in_jy * W + in_jx]` after the copy.
#[test]
fn a_row_length_in_a_const_local_copy_makes_a_2d_window() {
    let found = rewrites(
        &HaloTile,
        r#"__global__ void lap(const float *__restrict__ in, float *__restrict__ out, int width, int height) {
    const int W = width;
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x > 0 && x < W - 1 && y > 0 && y < height - 1)
        out[y * W + x] = in[y * W + x - 1] + in[y * W + x + 1] + in[(y - 1) * W + x] + in[(y + 1) * W + x] - 4.0f * in[y * W + x];
}
"#,
        [16, 16, 1],
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    let text = &found[0].1;
    for want in [
        "in_halo[in_ty][in_tx] = in[in_jy * W + in_jx];",
        "in_bx + blockDim.x > 1 && 1 < W - 1 && in_bx < W - 1",
        "out[y * W + x] = in_halo[threadIdx.y + 1][threadIdx.x] + in_halo[threadIdx.y + 1][threadIdx.x + 2] + in_halo[threadIdx.y][threadIdx.x + 1] + in_halo[threadIdx.y + 2][threadIdx.x + 1] - 4.0f * in_halo[threadIdx.y + 1][threadIdx.x + 1];",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }
    // The copy comes before the tile's load.
    let copy = text.find("const int W = width;").unwrap_or(usize::MAX);
    let load = text.find("__shared__").unwrap_or(0);
    assert!(copy < load, "{text}");
}

/// A constant row length in a local (`const int W = 512;`) stays a name
/// in the index, so `y * W` is a row; other local constants fold
/// (`in[(y + R) * W + x]` is the row below for `R = 1`).
#[test]
fn a_constant_row_length_in_a_local_makes_a_2d_window() {
    let found = rewrites(
        &HaloTile,
        r#"__global__ void lap512(const float *__restrict__ in, float *__restrict__ out) {
    const int W = 512;
    const int R = 1;
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x > 0 && x < W - 1 && y > 0 && y < W - 1)
        out[y * W + x] = in[y * W + x - R] + in[y * W + x + R] + in[(y - R) * W + x] + in[(y + R) * W + x] - 4 * in[y * W + x];
}
"#,
        [16, 16, 1],
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    let text = &found[0].1;
    assert!(
        text.contains("in_halo[in_ty][in_tx] = in[in_jy * W + in_jx];"),
        "{text}"
    );
    assert!(
        text.contains("in_halo[threadIdx.y + 2][threadIdx.x + 1]"),
        "{text}"
    );
}

/// A row length copied after an early return cannot be read where the
/// tile is loaded (before the return): refused with the reason.
#[test]
fn a_row_length_declared_after_a_return_is_refused() {
    check_not_applicable(
        &HaloTile,
        [16, 16, 1],
        r#"__global__ void lap(const float *__restrict__ in, float *__restrict__ out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= width - 1 || y >= height - 1) return;
    const int W = width;
    out[y * W + x] = in[y * W + x - 1] + in[y * W + x + 1] + in[(y - 1) * W + x] + in[(y + 1) * W + x];
}
"#,
        "`in` is not loaded into a halo tile for its reads at line 6: its row length `W` is declared after a statement that may return, so the tile cannot be loaded before it",
    );
}

/// Neighbours clamped at the ends (`in[max(i - 1, 0)]`, `in[min(i + 1,
/// n - 1)]`): the tile loads `min(max(j, 0), n - 1)` at each position,
/// what every read makes of it for the threads `i < n`, so the ends read
/// the clamped elements as the original does.
#[test]
fn neighbours_clamped_at_the_ends_load_the_tile_clamped() {
    let found = rewrites(
        &HaloTile,
        r#"__global__ void smooth(const float *__restrict__ in, float *__restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (in[max(i - 1, 0)] + in[i] + in[min(n - 1, i + 1)]) / 3.0f;
}
"#,
        [256, 1, 1],
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    let text = &found[0].1;
    for want in [
        "in_halo[in_t] = in[min(max((int)in_j, 0), n - 1)];",
        "out[i] = (in_halo[threadIdx.x] + in_halo[threadIdx.x + 1] + in_halo[threadIdx.x + 2]) / 3.0f;",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }
}

/// A read clamped on one side only, the other read unclamped: `i >= 0`
/// keeps `in[i]` above the lower bound 0 of `in[max(i - 2, 0)]`.
#[test]
fn a_read_clamped_below_only_loads_the_tile_clamped_below() {
    let found = rewrites(
        &HaloTile,
        r#"__global__ void back(const int *__restrict__ in, int *__restrict__ out, int n) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i >= n) return;
    out[i] = in[i] - in[max(0, i - 2)];
}
"#,
        [64, 1, 1],
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    let text = &found[0].1;
    assert!(
        text.contains("in_halo[in_t] = in[max((int)in_j, 0)];"),
        "{text}"
    );
}

/// Clamps whose bounds copper cannot relate to the threads that read:
/// `in[i]` for `i < m` may lie past `n - 1`, where `in[min(i + 1, n -
/// 1)]` of the thread before reads `in[n - 1]`; and two upper bounds.
#[test]
fn clamps_that_disagree_on_a_position_are_refused() {
    check_not_applicable(
        &HaloTile,
        [64, 1, 1],
        r#"__global__ void fwd(const float *__restrict__ in, float *__restrict__ out, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) out[i] = in[i] + in[min(i + 1, n - 1)];
}
"#,
        "`in` is not loaded into a halo tile for its reads at line 3: copper cannot show that `in[i]` reads what the clamp of the other reads makes of its position for every thread that reads it",
    );
    check_not_applicable(
        &HaloTile,
        [64, 1, 1],
        r#"__global__ void fwd(const float *__restrict__ in, float *__restrict__ out, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[min(i + 1, n - 1)] + in[min(i + 2, m)];
}
"#,
        "`in` is not loaded into a halo tile for its reads at line 3: its reads are clamped to different bounds (`n - 1` and `m`)",
    );
}

/// The clamp written as a conditional (`i > 0 ? i - 1 : 0`, `(i + 1 >= n)
/// ? n - 1 : i + 1`): the condition holds exactly when the index is past
/// the bound, so it is `max`/`min`, and the tile loads the same clamp.
#[test]
fn a_clamp_written_as_a_conditional_loads_the_tile_clamped() {
    let found = rewrites(
        &HaloTile,
        r#"__global__ void smooth(const float *__restrict__ in, float *__restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i > 0 ? i - 1 : 0] + in[i] + in[(i + 1 >= n) ? n - 1 : i + 1];
}
"#,
        [256, 1, 1],
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    let text = &found[0].1;
    for want in [
        "in_halo[in_t] = in[min(max((int)in_j, 0), n - 1)];",
        "out[i] = in_halo[threadIdx.x] + in_halo[threadIdx.x + 1] + in_halo[threadIdx.x + 2];",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }
}

/// A conditional that is no clamp (`i > 2 ? i - 1 : 0` picks 0 at `i =
/// 2`, where `max(i - 1, 0)` is 1): its index is not the thread's element
/// plus a constant, and the reads are left alone.
#[test]
fn a_conditional_that_is_no_clamp_is_refused() {
    check_not_applicable(
        &HaloTile,
        [64, 1, 1],
        r#"__global__ void smooth(const float *__restrict__ in, float *__restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n - 1) out[i] = in[i > 2 ? i - 1 : 0] + in[i + 1];
}
"#,
        "`in` is not loaded into a halo tile for its reads at line 3: its index `i > 2 ? i - 1 : 0` is not the thread's own element plus a constant",
    );
}

/// The 5-point Jacobi step without its center (4 reads per thread): on
/// a 16 × 16 block a warp may run 4 rounds of the tile's load, as many
/// accesses as its reads; the tile is refused with the reason.
#[test]
fn a_cross_of_four_reads_saves_no_read_and_is_refused() {
    check_not_applicable(
        &HaloTile,
        [16, 16, 1],
        r#"__global__ void jacobi(const float *__restrict__ in, float *__restrict__ out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x > 0 && x < w - 1 && y > 0 && y < h - 1) {
        int idx = y * w + x;
        out[idx] = 0.25f * (in[idx - 1] + in[idx + 1] + in[idx - w] + in[idx + w]);
    }
}
"#,
        "`in` is not loaded into a halo tile for its reads at line 5: each thread reads 4 elements of it, and on a 16×16 block a warp may run 4 rounds of the tile's load, each an access to the rows of the warp's threads as a read is: the tile would touch no fewer sectors than the reads, and adds a barrier and the load's tests",
    );
}
