//! The 2-D rewrite before and after, and the 2-D windows it leaves alone
//! with the exact reason ([`crate::fixture`]).

use super::HaloTile;
use crate::fixture::{check, check_not_applicable, rewrites};

const BLUR: &str = r#"#define R 1
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
"#;

#[test]
fn a_guarded_box_blur_reads_a_2d_halo_tile() {
    let found = rewrites(&HaloTile, BLUR, [16, 16, 1]);
    for (d, t) in &found {
        println!("{d}\n{t}");
    }
    let p = crate::fixture::try_propose(&HaloTile, BLUR, [16, 16, 1]).unwrap();
    for s in &p.skipped {
        println!("SKIP {}", s.reason);
    }
    let _ = (check, check_not_applicable);
    panic!();
}
