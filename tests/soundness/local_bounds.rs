//! Generated loops bounded through locals: a copy of `n` (`int m = n`,
//! `const`, wider), a divided or shifted copy (`m / 4`, `n >> 2`, a copy
//! of the copy), the bound of a `__device__` function's parameter after
//! inlining, and copies the analysis must not trust blindly: assigned
//! again before the loop (in a branch or not) or inside it. Grid-stride,
//! block-stride and constant-stride loops over them, `n` negative, small
//! or up to hundreds of strides, on blocks like 33×2 and grids of
//! thousands of blocks.

use copper::sim::params::SplitMix;

use super::Generated;

/// (declarations before the loop, the loop's bound) of each way of
/// reaching the input through a local; `$n` is the input (the kernel's
/// `n`, or a device function's parameter `len`), `D` a divisor and `S` a
/// shift. The first two read the input itself: in a device function, a
/// local once inlined.
const LOCALS: [(&str, &str); 14] = [
    ("", "$n"),
    ("", "$n / D"),
    ("int m = $n;", "m"),
    ("int m = $n;", "m / D"),
    ("const int m = $n;", "m / D"),
    ("int q = $n / D;", "q"),
    ("int m = $n >> S;", "m"),
    ("int m = $n; const int q = m / D;", "q"),
    ("long long m = $n;", "m / D"),
    ("int m = $n; int half = m >> S;", "half"),
    // Assigned again: before the loop, in a branch, inside the loop.
    ("int m = $n; m = m * 2;", "m / D"),
    (
        "int m = $n; if (threadIdx.x % 3 == 0) { m = $n / 2; }",
        "m / D",
    ),
    ("int m = $n; if ($n > 40) { m = 40; }", "m"),
    ("int m = $n + D;", "m / D"),
];

/// The loop shapes: (start, step, whether the stride covers the grid).
const SHAPES: [(&str, &str, bool); 5] = [
    (
        "blockIdx.x * blockDim.x + threadIdx.x",
        "c += blockDim.x * gridDim.x",
        true,
    ),
    ("threadIdx.x", "c += blockDim.x", false),
    (
        "threadIdx.y * blockDim.x + threadIdx.x",
        "c += blockDim.x * blockDim.y",
        false,
    ),
    ("0", "c++", false),
    ("threadIdx.x % 4", "c += 4", false),
];

const BODIES: [&str; 3] = [
    "acc += a[c % 64];",
    "acc += a[(4 * c) % 64] + a[(4 * c + 1) % 64]; s[c % 64] = acc;",
    "if (c % 3 == 0) { acc += a[0]; } else { acc -= a[c % 64]; }",
];

const BLOCKS: [[u64; 3]; 6] = [
    [32, 1, 1],
    [33, 2, 1],
    [128, 1, 1],
    [7, 5, 1],
    [256, 1, 1],
    [31, 1, 1],
];

const GRIDS: [[u64; 3]; 5] = [[1, 1, 1], [3, 1, 1], [500, 1, 1], [4096, 1, 1], [7, 2, 1]];

/// The generated kernel `i`: `k(float *a, float *out, int n)`, its loop
/// in the kernel or (a third of the time) in a `__device__` function
/// given `n` (or a copy of it) as its parameter `len`.
pub fn generate(i: u64) -> Generated {
    let mut g = SplitMix::new(0x10CA1 ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut pick = |n: u64| g.next_u64() % n.max(1);
    let (decl, bound) = LOCALS[pick(LOCALS.len() as u64) as usize];
    let (start, step, whole_grid) = SHAPES[pick(SHAPES.len() as u64) as usize];
    let body = BODIES[pick(BODIES.len() as u64) as usize];
    let block = BLOCKS[pick(BLOCKS.len() as u64) as usize];
    let grid = GRIDS[pick(GRIDS.len() as u64) as usize];
    let d = [2, 4, 8][pick(3) as usize];
    let shift = [1, 2, 3][pick(3) as usize];
    // A third of the loops are in a device function given `n`, or the
    // kernel's copy of it, as its parameter `len`.
    let device = pick(3) == 0;
    let input = if device { "len" } else { "n" };
    let fill = |t: &str| {
        t.replace('D', &d.to_string())
            .replace('S', &shift.to_string())
            .replace("$n", input)
    };
    let (decl, bound) = (fill(decl), fill(bound));
    // Half of the loops whose bound is a copy also decrease it inside.
    let inside = if bound == "m" && pick(2) == 0 {
        "if (c % 5 == 4) { m -= 3; }"
    } else {
        ""
    };
    let threads: u64 = block.iter().product::<u64>() * if whole_grid { grid[0] } else { 1 };
    let stride = if step == "c++" {
        1
    } else {
        threads.min(1 << 20)
    };
    // At most about 150 iterations per lane (the simulator's budget).
    let divides = [&decl, &bound]
        .iter()
        .any(|t| t.contains('/') || t.contains(">>"));
    let most = (stride * 150 * if divides { d } else { 1 }).min(1 << 24);
    let n: i64 = match pick(5) {
        0 => -(1 + pick(9) as i64),
        1 => pick(100) as i64,
        _ => pick(most + 1) as i64,
    };
    let lp = format!("{decl}\nfor (int c = {start}; c < {bound}; {step}) {{ {body} {inside} }}");
    let src = if device {
        let arg = if pick(2) == 0 { "n" } else { "cp" };
        format!(
            "__device__ float part(const float *a, float *s, int len) {{\n\
             float acc = 0;\n\
             {lp}\n\
             return acc;\n\
             }}\n\
             __global__ void k(float *a, float *out, int n) {{\n\
             __shared__ float s[64];\n\
             int cp = n;\n\
             float acc = part(a, s, {arg});\n\
             out[threadIdx.x % 64] = acc + s[threadIdx.x % 64];\n\
             }}"
        )
    } else {
        format!(
            "__global__ void k(float *a, float *out, int n) {{\n\
             __shared__ float s[64];\n\
             float acc = 0;\n\
             {lp}\n\
             out[threadIdx.x % 64] = acc + s[threadIdx.x % 64];\n\
             }}"
        )
    };
    Generated {
        src,
        grid,
        block,
        n,
    }
}
