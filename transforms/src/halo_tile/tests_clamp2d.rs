//! 2-D windows written out with clamps at the image's borders (`int xl
//! = max(x - 1, 0);`, `in[min(y + 1, h - 1) * w + x]`, `x > 0 ? x - 1 :
//! 0`): the tile loads the clamped element at each position, and the
//! reads whose clamps copper cannot show agree are refused with the reason
//! ([`crate::fixture`]).

use super::HaloTile;
use crate::fixture::{check_not_applicable, rewrites};

/// The one rewrite of `src` on `block`.
fn rewritten(src: &str, block: [u64; 3]) -> String {
    let found = rewrites(&HaloTile, src, block);
    assert_eq!(found.len(), 1, "{found:#?}");
    found[0].1.clone()
}

/// The load of a tile clamped to `[0, h - 1]` × `[0, w - 1]`.
const CLAMPED_LOAD: &str = "in_halo[in_ty][in_tx] = in[(long long)min(max((int)in_jy, 0), h - 1) * w + min(max((int)in_jx, 0), w - 1)];";

/// A 3 × 3 box blur with its clamped neighbours in locals: the tile holds
/// the clamped element at each position, so the border threads read what
/// the original reads, and the clamps are no longer needed.
#[test]
fn a_box_blur_clamped_in_locals_loads_the_tile_clamped() {
    let text = rewritten(
        r#"__global__ void blur(const float *__restrict__ in, float *__restrict__ out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    int xl = max(x - 1, 0);
    int xr = min(x + 1, w - 1);
    int yu = max(y - 1, 0);
    int yd = min(y + 1, h - 1);
    out[y * w + x] = (in[yu * w + xl] + in[yu * w + x] + in[yu * w + xr]
                    + in[y * w + xl] + in[y * w + x] + in[y * w + xr]
                    + in[yd * w + xl] + in[yd * w + x] + in[yd * w + xr]) / 9.0f;
}
"#,
        [16, 16, 1],
    );
    for want in [
        CLAMPED_LOAD,
        "if (in_jy - 1 < h && in_jx - 1 < w) {",
        "out[y * w + x] = (in_halo[threadIdx.y][threadIdx.x] + in_halo[threadIdx.y][threadIdx.x + 1] + in_halo[threadIdx.y][threadIdx.x + 2] + in_halo[threadIdx.y + 1][threadIdx.x] + in_halo[threadIdx.y + 1][threadIdx.x + 1]",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }
}

/// Clamps written inline, `min` and `max` in either order, and as
/// conditionals (`y > 0 ? y - 1 : 0`), in a 5-point cross: each axis is
/// clamped on both sides, and the corners are still not loaded.
#[test]
fn inline_and_conditional_clamps_of_a_cross_load_the_tile_clamped() {
    let text = rewritten(
        r#"__global__ void cross(const float *__restrict__ in, float *__restrict__ out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        int up = y > 0 ? y - 1 : 0;
        int down = (y + 1 >= h) ? h - 1 : y + 1;
        out[y * w + x] = in[up * w + x] + in[down * w + x] + in[y * w + max(0, x - 1)] + in[y * w + min(w - 1, x + 1)] - 4.0f * in[y * w + x];
    }
}
"#,
        [32, 8, 1],
    );
    for want in [
        CLAMPED_LOAD,
        "out[y * w + x] = in_halo[threadIdx.y][threadIdx.x + 1] + in_halo[threadIdx.y + 2][threadIdx.x + 1] + in_halo[threadIdx.y + 1][threadIdx.x] + in_halo[threadIdx.y + 1][threadIdx.x + 2] - 4.0f * in_halo[threadIdx.y + 1][threadIdx.x + 1];",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }
}

/// Rows clamped, columns kept inside by the thread's bounds (`x > 0 && x
/// < w - 1`): only the rows are clamped in the tile.
#[test]
fn rows_clamped_and_columns_bounded_clamp_only_the_rows() {
    let text = rewritten(
        r#"__global__ void sobel_x(const float *__restrict__ in, float *__restrict__ out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x > 0 && x < w - 1 && y < h) {
        int yu = max(y - 1, 0), yd = min(y + 1, h - 1);
        out[y * w + x] = in[yu * w + x + 1] - in[yu * w + x - 1] + 2.0f * (in[y * w + x + 1] - in[y * w + x - 1]) + in[yd * w + x + 1] - in[yd * w + x - 1];
    }
}
"#,
        [16, 16, 1],
    );
    let want = "in_halo[in_ty][in_tx] = in[(long long)min(max((int)in_jy, 0), h - 1) * w + in_jx];";
    assert!(text.contains(want), "{want}\n{text}");
}

/// The threads that read are `y < m`, not `y < h`: a thread at `y = h -
/// 1 < m - 1` reads row `h` of `in[y * w + x]`'s neighbour below unclamped
/// for the thread below it, while `min(y + 1, h - 1)` of the thread above
/// makes row `h` row `h - 1`; one tile element cannot serve both, and the
/// proof says so. (Without the proof the rewrite would be offered.)
#[test]
fn clamps_copper_cannot_relate_to_the_threads_are_refused() {
    check_not_applicable(
        &HaloTile,
        [16, 16, 1],
        r#"__global__ void down(const float *__restrict__ in, float *__restrict__ out, int w, int h, int m) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < m) out[y * w + x] = in[y * w + x] + in[min(y + 1, h - 1) * w + x];
}
"#,
        "`in` is not loaded into a halo tile for its reads at line 4: copper cannot show that `in[y * w + x]` reads what the clamp of the other reads makes of its position for every thread that reads it",
    );
}

/// Columns clamped to two different bounds, and a clamp that is not of
/// the whole row (`max(y - 1, 0) + 1`, which is `y` at `y = 0`).
#[test]
fn clamps_to_other_bounds_or_of_part_of_a_row_are_refused() {
    check_not_applicable(
        &HaloTile,
        [16, 16, 1],
        r#"__global__ void two(const float *__restrict__ in, float *__restrict__ out, int w, int h, int m) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = in[y * w + min(x + 1, w - 1)] + in[y * w + min(x + 2, m)];
}
"#,
        "`in` is not loaded into a halo tile for its reads at line 4: its reads are clamped to different bounds (`w - 1` and `m`)",
    );
    check_not_applicable(
        &HaloTile,
        [16, 16, 1],
        r#"__global__ void part(const float *__restrict__ in, float *__restrict__ out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = in[(max(y - 1, 0) + 1) * w + x] + in[y * w + x + 1];
}
"#,
        "`in` is not loaded into a halo tile for its reads at line 4: its index `(max(y - 1, 0) + 1) * w + x` is not the thread's own element plus a constant",
    );
}
