//! Windows whose bounds and clamps are statements on locals of the
//! position (`if (xx < 0) xx = 0;`, `if (yy >= h) continue;`), read in
//! normal form ([`super::normalize`]): each candidate is checked by the
//! fixture's simulation against the original, and the ones left alone
//! say why.

use super::HaloTile;
use crate::fixture::{check_not_applicable, rewrites};

/// The one candidate for `src` on `block`, as written to the file.
fn rewritten(src: &str, block: [u64; 3]) -> String {
    let found = rewrites(&HaloTile, src, block);
    assert_eq!(found.len(), 1, "{found:#?}");
    found[0].1.clone()
}

/// Whether `text` holds `part`, whitespace aside (the edit keeps the
/// file's tabs).
fn holds(text: &str, part: &str) -> bool {
    let squeezed = |s: &str| s.split_whitespace().collect::<String>();
    squeezed(text).contains(&squeezed(part))
}

#[test]
fn clamps_through_statements_on_locals_are_keys_of_the_position() {
    let src = r#"#define R 2
__global__ void blur(const float *in, float *out, int w, int h) {
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x >= w || y >= h) return;
	float s = 0.0f;
	for (int dy = -R; dy <= R; dy++)
		for (int dx = -R; dx <= R; dx++) {
			int xx = x + dx;
			xx = xx < 0 ? 0 : (xx > w - 1 ? w - 1 : xx);
			int yy = y + dy;
			if (yy < 0) yy = 0;
			if (yy >= h) yy = h - 1;
			s += in[yy * w + xx];
		}
	out[y * w + x] = s;
}
"#;
    for block in [[16, 16, 1], [33, 3, 1], [1, 32, 1]] {
        let out = rewritten(src, block);
        assert!(
            holds(&out, "in_halo[in_ty][in_tx] = in[min(max((int)in_jy, 0), h - 1) * w + ((int)in_jx < 0 ? 0 : min((int)in_jx, w - 1))];"),
            "{out}"
        );
        // The clamps the tile leaves unused go with their locals.
        assert!(
            holds(&out, "for (int dx = -R; dx <= R; dx++) {\n                s += in_halo[threadIdx.y + (dy + R)][threadIdx.x + (dx + R)];\n            }"),
            "{out}"
        );
    }
}

#[test]
fn continue_guards_and_min_max_updates_read_as_bounds_and_clamps() {
    let src = r#"#define R 2
__global__ void g(const float *in, const float *k, float *out, int w, int h) {
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x < w && y < h) {
		float s = 0.0f;
		for (int dy = -R; dy <= R; dy++)
			for (int dx = -R; dx <= R; dx++) {
				int xx = x + dx;
				xx = min(max(xx, 0), w - 1);
				int yy = y + dy;
				if (yy < 0 || yy >= h) continue;
				s += in[yy * w + xx] * k[(dy + R) * 5 + dx + R];
			}
		out[y * w + x] = s;
	}
}
"#;
    let out = rewritten(src, [16, 16, 1]);
    assert!(
        holds(&out, "if (in_jy >= 0 && in_jy < h && in_jx - 2 < w) {\n                        in_halo[in_ty][in_tx] = in[(int)in_jy * w + min(max((int)in_jx, 0), w - 1)];"),
        "{out}"
    );
    // The guard stays as written.
    assert!(holds(&out, "if (yy < 0 || yy >= h) continue;"), "{out}");
}

#[test]
fn a_1d_continue_guard_reads_as_the_bounds_of_the_window() {
    let src = r#"#define R 3
__global__ void s1(const float *in, float *out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float s = 0.0f;
		for (int k = -R; k <= R; k++) {
			int j = i + k;
			if (j < 0 || j >= n) continue;
			s += in[j];
		}
		out[i] = s;
	}
}
"#;
    for block in [[1, 1, 1], [33, 1, 1], [256, 1, 1]] {
        let out = rewritten(src, block);
        assert!(
            holds(
                &out,
                "if (in_j >= 0 && in_j < n) {\n                    in_halo[in_t] = in[in_j];"
            ),
            "{out}"
        );
    }
}

#[test]
fn an_update_that_is_not_a_function_of_the_position_is_refused() {
    // `xx` doubled is still a key of the position, but `s` changes
    // between the declaration and the update: nothing is folded.
    check_not_applicable(
        &HaloTile,
        [16, 16, 1],
        r#"__global__ void b(const float *in, float *out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        float s = 0.0f;
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int xx = x + dx;
                s += 1.0f;
                if (xx < 0) xx = 0;
                int yy = min(max(y + dy, 0), h - 1);
                s += in[yy * w + xx];
            }
        out[y * w + x] = s;
    }
}
"#,
        "`in` is not loaded into a 2-D halo tile for the loops at line 6: its index `yy * w + xx` is not a row `y + dy` times a fixed row length plus the column `x + dx`",
    );
}

/// A 1-D window clamped through a local, in the three ways students
/// write it: the tile loads what the clamp makes of each position.
#[test]
fn a_1d_clamp_through_a_local_loads_the_tile_clamped() {
    let clamps = [
        (
            "if (j < 0) j = 0;\n\t\tif (j >= n) j = n - 1;",
            "in[min(max((int)in_j, 0), n - 1)]",
        ),
        (
            "j = min(max(j, 0), n - 1);",
            "in[min(max((int)in_j, 0), n - 1)]",
        ),
        (
            "j = j < 0 ? 0 : (j > n - 1 ? n - 1 : j);",
            "in[(int)in_j < 0 ? 0 : min((int)in_j, n - 1)]",
        ),
    ];
    for (clamp, load) in clamps {
        let src = format!(
            "#define R 3
__global__ void c1(const float *in, const float *w, float *out, int n) {{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	float s = 0.0f;
	for (int k = -R; k <= R; k++) {{
		int j = i + k;
		{clamp}
		s += w[k + R] * in[j];
	}}
	out[i] = s;
}}
"
        );
        for block in [[1, 1, 1], [31, 1, 1], [33, 1, 1], [256, 1, 1]] {
            let out = rewritten(&src, block);
            assert!(holds(&out, &format!("in_halo[in_t] = {load};")), "{out}");
            assert!(
                holds(&out, "s += w[k + R] * in_halo[threadIdx.x + (k + R)];"),
                "{out}"
            );
            // The clamped local goes with its updates in the tiled loop
            // (the original body, after `else`, keeps them).
            let tiled = out.split("} else {").next().unwrap_or_default();
            assert!(!holds(tiled, "int j = i + k;"), "{out}");
            assert!(holds(&out, "int j = i + k;"), "{out}");
        }
    }
}

#[test]
fn reads_of_the_position_and_of_its_clamp_in_one_loop_are_refused() {
    check_not_applicable(
        &HaloTile,
        [256, 1, 1],
        r#"__global__ void m(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int k = -2; k <= 2; k++) {
            int j = min(max(i + k, 0), n - 1);
            if (i + k >= 0 && i + k < n) s += in[i + k] - in[j];
        }
        out[i] = s;
    }
}
"#,
        "`in` is not loaded into a halo tile for the loop at line 5: its reads of `in` take different elements at the same position",
    );
}

/// A row skipped by a `continue` in the outer loop, before the loop
/// over the columns: its bounds guard the reads of the inner loop.
#[test]
fn a_continue_in_the_outer_loop_bounds_the_rows() {
    let src = r#"#define RAD 1
__global__ void b(const float *src, float *dst, int width, int height) {
	int col = blockIdx.x * blockDim.x + threadIdx.x;
	int row = blockIdx.y * blockDim.y + threadIdx.y;
	if (col >= width || row >= height) return;
	float total = 0.0f;
	for (int dy = -RAD; dy <= RAD; dy++) {
		int r = row + dy;
		if (r < 0 || r >= height) continue;
		for (int dx = -RAD; dx <= RAD; dx++) {
			int c = col + dx;
			if (c < 0 || c >= width) continue;
			total += src[r * width + c];
		}
	}
	dst[row * width + col] = total;
}
"#;
    for block in [[16, 16, 1], [33, 3, 1], [1, 32, 1], [32, 1, 1]] {
        let out = rewritten(src, block);
        assert!(
            holds(&out, "if (src_jy >= 0 && src_jy < height && src_jx >= 0 && src_jx < width) {\n src_halo[src_ty][src_tx] = src[(int)src_jy * width + (int)src_jx];"),
            "{out}"
        );
        assert!(holds(&out, "if (r < 0 || r >= height) continue;"), "{out}");
    }
}
