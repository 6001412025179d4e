//! The 2-D rewrite before and after, and the 2-D windows it leaves alone
//! with the exact reason ([`crate::fixture`]).

use super::HaloTile;
use crate::fixture::{check, check_not_applicable, rewrites};

/// The one rewrite of `src` on `block`.
fn rewritten(src: &str, block: [u64; 3]) -> String {
    let found = rewrites(&HaloTile, src, block);
    assert_eq!(found.len(), 1, "{found:#?}");
    found[0].1.clone()
}

#[test]
fn a_guarded_box_blur_reads_a_2d_halo_tile() {
    let desc = check(
        &HaloTile,
        [16, 16, 1],
        r#"#define R 1
__global__ void blur(const float *__restrict__ in, float *__restrict__ out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        float s = 0;
        for (int dy = -R; dy <= R; dy++)
            for (int dx = -R; dx <= R; dx++) {
                int yy = y + dy, xx = x + dx;
                if (yy >= 0 && yy < h && xx >= 0 && xx < w) s += in[yy * w + xx];
            }
        out[y * w + x] = s / ((2 * R + 1) * (2 * R + 1));
    }
}
"#,
        r#"#define R 1
__global__ void blur(const float *__restrict__ in, float *__restrict__ out, int w, int h) {
    if (blockDim.x <= 32 && blockDim.y <= 32 && blockDim.z == 1) {
        int x = blockIdx.x * blockDim.x + threadIdx.x;
        int y = blockIdx.y * blockDim.y + threadIdx.y;
        __shared__ float in_halo[34][48];
        long long in_by = (long long)y - threadIdx.y;
        long long in_bx = (long long)x - threadIdx.x;
        if (in_by < h && in_bx < w) {
            for (int in_ty = threadIdx.y; in_ty < blockDim.y + 2; in_ty += blockDim.y) {
                long long in_jy = in_by + in_ty - R;
                for (int in_tx = threadIdx.x; in_tx < blockDim.x + 2; in_tx += blockDim.x) {
                    long long in_jx = in_bx + in_tx - R;
                    if (in_jy >= 0 && in_jy < h && in_jx >= 0 && in_jx < w) {
                        in_halo[in_ty][in_tx] = in[(int)in_jy * w + (int)in_jx];
                    }
                }
            }
        }
        __syncthreads();
        if (x < w && y < h) {
            float s = 0;
            for (int dy = -R; dy <= R; dy++)
                for (int dx = -R; dx <= R; dx++) {
                    int yy = y + dy, xx = x + dx;
                    if (yy >= 0 && yy < h && xx >= 0 && xx < w) s += in_halo[threadIdx.y + (dy + R)][threadIdx.x + (dx + R)];
                }
            out[y * w + x] = s / ((2 * R + 1) * (2 * R + 1));
        }
    } else {
        int x = blockIdx.x * blockDim.x + threadIdx.x;
        int y = blockIdx.y * blockDim.y + threadIdx.y;
        if (x < w && y < h) {
            float s = 0;
            for (int dy = -R; dy <= R; dy++)
                for (int dx = -R; dx <= R; dx++) {
                    int yy = y + dy, xx = x + dx;
                    if (yy >= 0 && yy < h && xx >= 0 && xx < w) s += in[yy * w + xx];
                }
            out[y * w + x] = s / ((2 * R + 1) * (2 * R + 1));
        }
    }
}
"#,
    );
    assert_eq!(
        desc,
        "loaded the elements of `in` that a block's windows read in the loops at line 7 (`in[yy * w + xx]` for `dy` from -1 to 1 and `dx` from -1 to 1) into a `__shared__` tile of (blockDim.y + 2) × (blockDim.x + 2) elements, each once, by the whole block and only where the original reads it; the loops read the tile. Blocks wider or taller than 32 or 3-D run the original code"
    );
}

#[test]
fn a_clamped_mean_filter_loads_the_clamped_elements() {
    let text = rewritten(
        r#"__global__ void mean5(const float *__restrict__ in, float *__restrict__ out, int w, int h) {
    const int R = 2;
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float s = 0.0f;
    for (int dy = -R; dy <= R; dy++) {
        for (int dx = -R; dx <= R; dx++) {
            s += in[min(max(y + dy, 0), h - 1) * w + min(max(x + dx, 0), w - 1)];
        }
    }
    out[y * w + x] = s / 25.0f;
}
"#,
        [16, 16, 1],
    );
    for line in [
        "__shared__ float in_halo[36][48];",
        "if (in_by < h && in_bx < w) {",
        "if (in_jy - 2 < h && in_jx - 2 < w) {",
        "in_halo[in_ty][in_tx] = in[min(max((int)in_jy, 0), h - 1) * w + min(max((int)in_jx, 0), w - 1)];",
        "s += in_halo[threadIdx.y + (dy + R)][threadIdx.x + (dx + R)];",
    ] {
        assert!(text.contains(line), "{line}:\n{text}");
    }
}

#[test]
fn an_interior_jacobi_step_loads_only_what_interior_threads_read() {
    let text = rewritten(
        r#"#define R 1
__global__ void jacobi(const int *__restrict__ in, int *__restrict__ out, int w, int h) {
    int y = threadIdx.y + blockIdx.y * blockDim.y;
    int x = threadIdx.x + blockIdx.x * blockDim.x;
    if (x >= R && x < w - R && y >= R && y < h - R) {
        int s = 0;
        for (int dx = -R; dx <= R; dx++)
            for (int dy = -R; dy <= R; dy++)
                s += in[(y + dy) * w + x + dx];
        out[y * w + x] = s;
    }
}
"#,
        [32, 8, 1],
    );
    for line in [
        "__shared__ int in_halo[34][48];",
        "if (in_by + blockDim.y > R && R < h - R && in_by < h - R && in_bx + blockDim.x > R && R < w - R && in_bx < w - R) {",
        "if (in_jy + R >= R && in_jy - 1 < h - R && in_jx + R >= R && in_jx - 1 < w - R) {",
        "in_halo[in_ty][in_tx] = in[(int)in_jy * w + (int)in_jx];",
        "s += in_halo[threadIdx.y + (dy + R)][threadIdx.x + (dx + R)];",
    ] {
        assert!(text.contains(line), "{line}:\n{text}");
    }
}

#[test]
fn a_radius_from_a_parameter_is_refused_in_2d() {
    check_not_applicable(
        &HaloTile,
        [16, 16, 1],
        r#"__global__ void blur(const float *__restrict__ in, float *__restrict__ out, int w, int h, int r) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        float s = 0;
        for (int dy = -r; dy <= r; dy++)
            for (int dx = -r; dx <= r; dx++)
                s += in[min(max(y + dy, 0), h - 1) * w + min(max(x + dx, 0), w - 1)];
        out[y * w + x] = s;
    }
}
"#,
        "`in` is not loaded into a 2-D halo tile for the loops at line 6: its range is not fixed by constants (a radius from a parameter would need dynamic shared memory sized at every launch, which is not done)",
    );
}

#[test]
fn a_condition_on_the_flat_index_is_refused() {
    check_not_applicable(
        &HaloTile,
        [16, 16, 1],
        r#"__global__ void blur(const float *__restrict__ in, float *__restrict__ out, int w, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y * w + x < n) {
        float s = 0;
        for (int dy = 0; dy < 3; dy++)
            for (int dx = 0; dx < 3; dx++)
                s += in[(y + dy) * w + (x + dx)];
        out[y * w + x] = s;
    }
}
"#,
        "`in` is not loaded into a 2-D halo tile for the loops at line 6: the condition `y * w + x < n` on the way to it is neither `y < n` or `x < n` nor the same in every thread of the block",
    );
}

#[test]
fn an_index_that_is_no_row_and_column_is_refused() {
    check_not_applicable(
        &HaloTile,
        [16, 16, 1],
        r#"__global__ void strided(const float *__restrict__ in, float *__restrict__ out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        float s = 0;
        for (int dy = 0; dy < 3; dy++)
            for (int dx = 0; dx < 3; dx++)
                s += in[(y + dy) * w + 2 * x + dx];
        out[y * w + x] = s;
    }
}
"#,
        "`in` is not loaded into a 2-D halo tile for the loops at line 6: its index `(y + dy) * w + 2 * x + dx` is not a row `y + dy` times a fixed row length plus the column `x + dx`",
    );
}

#[test]
fn a_read_under_a_bound_on_the_flat_index_is_refused() {
    check_not_applicable(
        &HaloTile,
        [16, 16, 1],
        r#"__global__ void blur(const float *__restrict__ in, float *__restrict__ out, int w, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    float s = 0;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            int k = (y + dy) * w + x + dx;
            if (k >= 0 && k < n) s += in[(y + dy) * w + x + dx];
        }
    out[y * w + x] = s;
}
"#,
        "`in` is not loaded into a 2-D halo tile for the loops at line 5: `in` is read under a condition (`k >= 0`) that is not a bound on `y + dy` or `x + dx`",
    );
}

#[test]
fn a_tile_over_the_shared_memory_is_refused() {
    check_not_applicable(
        &HaloTile,
        [16, 16, 1],
        r#"#define R 40
__global__ void wide(const float *__restrict__ in, float *__restrict__ out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        float s = 0;
        for (int dy = -R; dy <= R; dy++)
            for (int dx = -R; dx <= R; dx++)
                s += in[min(max(y + dy, 0), h - 1) * w + min(max(x + dx, 0), w - 1)];
        out[y * w + x] = s;
    }
}
"#,
        "`in` is not loaded into a 2-D halo tile for the loops at line 7: a tile of 12544 elements takes 50176 bytes, and with the kernel's 0 bytes of shared memory more than 49152",
    );
}

/// The clamped positions a student keeps in locals
/// (`int r = min(max(row + dy, 0), h - 1);`) are not used once the read
/// is the tile's: the rewrite drops them, and keeps them in the original
/// code.
#[test]
fn clamped_locals_the_tile_makes_unused_are_dropped() {
    let text = rewritten(
        r#"__global__ void blur(const float *__restrict__ src, float *__restrict__ dst, int w, int h) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col < w && row < h) {
        float sum = 0.0f;
        for (int dy = -2; dy <= 2; dy++)
            for (int dx = -2; dx <= 2; dx++) {
                int r = min(max(row + dy, 0), h - 1);
                int c = min(max(col + dx, 0), w - 1);
                sum += src[r * w + c];
            }
        dst[row * w + col] = sum;
    }
}
"#,
        [16, 16, 1],
    );
    assert_eq!(
        text.matches("int r = min(max(row + dy, 0), h - 1);")
            .count(),
        1,
        "{text}"
    );
    assert_eq!(
        text.matches("int c = min(max(col + dx, 0), w - 1);")
            .count(),
        1,
        "{text}"
    );
    assert!(
        text.contains("for (int dx = -2; dx <= 2; dx++) {\n                    sum += src_halo[threadIdx.y + (dy + 2)][threadIdx.x + (dx + 2)];\n                }"),
        "{text}"
    );
}
