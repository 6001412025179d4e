//! Generated loops with `break`, `continue` and `return`: in `while`,
//! `for (;;)` (the update in the body), `for` (the update in the step,
//! which a `continue` runs), `do … while`, nested loops, grid-stride loops
//! and loops whose trip count the launch fixes. The jump comes before the
//! counter's update, under a condition that is the same in every lane or
//! not, limited by a second counter or by the data, and sometimes never
//! lets the loop end (such launches run past the step budget and are
//! skipped). Half of the kernels run a second loop over the same counter
//! after the first, so a counter a `break` left behind matters.

use copper::sim::params::SplitMix;

use super::Generated;

/// (declarations before the loop, the loop's head up to its body, what
/// the body ends with, what follows the body) of each loop shape: `JUMP`
/// marks where the jump goes, `STEP` the counter's update.
const SHAPES: [(&str, &str, &str, &str); 7] = [
    ("int i = 0;", "while (i < n) {", "JUMP i += STEP;", "}"),
    (
        "int i = 0;",
        "for (;;) { if (i >= n) break;",
        "JUMP i += STEP;",
        "}",
    ),
    ("int i = 0;", "for (; i < n; i += STEP) {", "JUMP", "}"),
    ("int i = 0;", "do {", "JUMP i += STEP;", "} while (i < n);"),
    (
        "int i = 0;",
        "for (int r = 0; r < 3; r++) { i = 0; while (i < n) {",
        "JUMP i += STEP;",
        "} }",
    ),
    (
        "int i = blockIdx.x * blockDim.x + threadIdx.x;",
        "while (i < n) {",
        "JUMP i += blockDim.x * gridDim.x;",
        "}",
    ),
    (
        "int i = blockDim.x;",
        "while (i > 0) {",
        "JUMP i >>= 1;",
        "}",
    ),
];

/// Jumps before the update: a limited number of uniform or divergent
/// `continue`s, `continue` that may never let the loop end, uniform and
/// divergent `break`s on data or on the counter, and `return`.
const JUMPS: [&str; 9] = [
    "if (j < LIMIT) { j++; continue; }",
    "if (threadIdx.x % 3 == 0 && j < LIMIT) { j++; continue; }",
    "if (j++ < LIMIT) continue;",
    "if ((i & 3) == 1 && j < LIMIT) { j++; continue; }",
    "if (i == LIMIT) continue;",
    "if (a[(i + 1) % 64] > 0.5f) break;",
    "if (a[threadIdx.x % 64] > 0.5f) break;",
    "if (i > LIMIT) break;",
    "if (a[0] > 0.9f) return;",
];

const BODIES: [&str; 4] = [
    "acc += a[threadIdx.x % 64];",
    "s[threadIdx.x % 64] += 1.0f;",
    "if (threadIdx.x % 2) { acc += a[0]; } else { acc -= a[1]; }",
    "acc += a[i % 64];",
];

const BLOCKS: [[u64; 3]; 4] = [[32, 1, 1], [64, 1, 1], [33, 2, 1], [128, 1, 1]];

const GRIDS: [[u64; 3]; 3] = [[1, 1, 1], [3, 1, 1], [40, 1, 1]];

/// Generated launch `i`.
pub fn generate(i: u64) -> Generated {
    let mut g = SplitMix::new(0x1EAF ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut pick = |n: u64| g.next_u64() % n.max(1);
    let (decl, head, end, close) = SHAPES[pick(SHAPES.len() as u64) as usize];
    let jump = JUMPS[pick(JUMPS.len() as u64) as usize].replace("LIMIT", &pick(40).to_string());
    let body = BODIES[pick(BODIES.len() as u64) as usize];
    let step = [1, 1, 2, 7][pick(4) as usize].to_string();
    let end = end.replace("JUMP", &jump).replace("STEP", &step);
    let head = head.replace("STEP", &step);
    let after = if pick(2) == 0 {
        "while (i < n) { acc += a[(threadIdx.x + 1) % 64]; out[0] = acc; i++; }"
    } else {
        ""
    };
    let src = format!(
        "__global__ void k(float *a, float *out, int n) {{\n\
         __shared__ float s[64];\n\
         float acc = 0; int j = 0;\n\
         {decl}\n\
         {head} {body} {end} {close}\n\
         {after}\n\
         out[threadIdx.x % 64] = acc + s[threadIdx.x % 64];\n\
         }}"
    );
    Generated {
        src,
        grid: GRIDS[pick(GRIDS.len() as u64) as usize],
        block: BLOCKS[pick(BLOCKS.len() as u64) as usize],
        n: pick(200) as i64,
    }
}
