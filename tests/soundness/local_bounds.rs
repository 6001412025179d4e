//! Generated loops bounded through locals: a copy of `n` (`int m = n`,
//! `const`, wider), a divided or shifted copy (`m / 4`, `n >> 2`, a copy
//! of the copy), the bound of a `__device__` function's parameter after
//! inlining (given `n`, a copy of it or a copy of that copy, so that a
//! chain of plain copies reaches the loop through the parameter), and
//! copies the analysis must not trust blindly: assigned again before the
//! loop (in a branch or not, divided, capped by `min`/`max`) or inside it;
//! and limits `min(n, c)`, `max(n, c)` held by locals. Grid-stride, block-stride and
//! constant-stride loops over them, `n` negative, small or up to hundreds
//! of strides, on blocks like 33×2 and grids of thousands of blocks.
//!
//! Each loop up to a local assigned once comes with its twin, the loop up
//! to the same value written over the input (`n / 4` for `int m = n; …
//! m / 4`): the test asserts that every metric the twin bounds is bounded
//! through the local too (a precision floor; a chain of three copies once
//! left the potential without a base over `n`, "no potential satisfies
//! the constraints").

use copper::sim::params::SplitMix;

use copper::bound::{prepare, Outcome};
use copper::cost::{Metric, BUILTIN_METRICS};

use super::{analysis_configs, generated_kernel, Generated, Tally};

/// (declarations before the loop, the loop's bound) of each way of
/// reaching the input through a local; `$n` is the input (the kernel's
/// `n`, or a device function's parameter `len`), `D` a divisor and `S` a
/// shift. The first two read the input itself: in a device function, a
/// local once inlined.
const LOCALS: [(&str, &str); 24] = [
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
    ("int m = $n + D;", "m / D"),
    // Limits: a minimum or a maximum (with a constant), divided or not.
    ("", "min($n, 500) / D"),
    ("int m = min($n, 500);", "m"),
    ("int m = $n; int l = max(m, 100);", "l / D"),
    // A maximum of quotients with different divisors.
    ("", "max($n / D, 100)"),
    ("int q = $n / D;", "max(q, $n)"),
    // Assigned again: before the loop, in a branch, inside the loop.
    ("int m = $n; m = m * 2;", "m / D"),
    (
        "int m = $n; if (threadIdx.x % 3 == 0) { m = $n / 2; }",
        "m / D",
    ),
    ("int m = $n; if ($n > 40) { m = 40; }", "m"),
    ("int m = $n; m += D;", "m"),
    ("int m = $n; m /= D;", "m"),
    ("int m = $n; m = min(m, 64);", "m"),
    ("int m = $n; m -= 1;", "m"),
    (
        "int m = $n; if ($n > 40) { m = 40; } m = max(m, 16);",
        "m / D",
    ),
];

/// The first entry of [`LOCALS`] assigned again before the loop.
const FIRST_REASSIGNED: usize = 16;

/// A generated kernel, and whether its loop's bound is a local assigned
/// again (before the loop, in a branch, or inside the loop): the forms
/// whose bound is allowed to be loose or missing.
pub struct Local {
    /// The kernel and its launch.
    pub gen: Generated,
    /// Whether the local bounding the loop is assigned more than once.
    pub reassigned: bool,
    /// For a local assigned once, the same kernel with the loop bound
    /// written over the input directly (and a device function given `n`
    /// itself): wherever the twin is bounded, the kernel must be too.
    pub twin: Option<Generated>,
}

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

/// Each entry of [`LOCALS`] before [`FIRST_REASSIGNED`] with the loop
/// bound written over the input itself, no local between: its twin.
const DIRECT: [&str; FIRST_REASSIGNED] = [
    "$n",
    "$n / D",
    "$n",
    "$n / D",
    "$n / D",
    "$n / D",
    "($n >> S)",
    "$n / D",
    "(long long)$n / D",
    "($n >> S)",
    "($n + D) / D",
    "min($n, 500) / D",
    "min($n, 500)",
    "max($n, 100) / D",
    "max($n / D, 100)",
    "max($n / D, $n)",
];

/// The kernel running loop `lp`: in the kernel, or (`arg` given) in a
/// device function given `arg` (`n`, its copy `cp`, or `again`, a copy of
/// `cp`) as its parameter `len`.
fn kernel_source(lp: &str, arg: Option<&str>) -> String {
    match arg {
        Some(arg) => format!(
            "__device__ float part(const float *a, float *s, int len) {{\n\
             float acc = 0;\n\
             {lp}\n\
             return acc;\n\
             }}\n\
             __global__ void k(float *a, float *out, int n) {{\n\
             __shared__ float s[64];\n\
             int cp = n;\n\
             int again = cp;\n\
             float acc = part(a, s, {arg});\n\
             out[threadIdx.x % 64] = acc + s[threadIdx.x % 64];\n\
             }}"
        ),
        None => format!(
            "__global__ void k(float *a, float *out, int n) {{\n\
             __shared__ float s[64];\n\
             float acc = 0;\n\
             {lp}\n\
             out[threadIdx.x % 64] = acc + s[threadIdx.x % 64];\n\
             }}"
        ),
    }
}

/// The generated kernel `i`: `k(float *a, float *out, int n)`, its loop
/// in the kernel or (a third of the time) in a `__device__` function
/// given `n` (or a copy of it, or a copy of that) as its parameter `len`.
pub fn generate(i: u64) -> Local {
    let mut g = SplitMix::new(0x10CA1 ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut pick = |n: u64| g.next_u64() % n.max(1);
    let form = pick(LOCALS.len() as u64) as usize;
    let (decl, bound) = LOCALS[form];
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
    // `n`, its copy, or a copy of the copy.
    let arg = ["n", "cp", "again"][pick(3) as usize];
    let arg = device.then_some(arg);
    let lp = |decl: &str, bound: &str, inside: &str| {
        format!("{decl}\nfor (int c = {start}; c < {bound}; {step}) {{ {body} {inside} }}")
    };
    let reassigned = form >= FIRST_REASSIGNED || !inside.is_empty();
    let launch = |src| Generated {
        src,
        grid,
        block,
        n,
    };
    let twin = DIRECT.get(form).filter(|_| !reassigned).map(|direct| {
        launch(kernel_source(
            &lp("", &fill(direct), ""),
            device.then_some("n"),
        ))
    });
    Local {
        gen: launch(kernel_source(&lp(&decl, &bound, inside), arg)),
        reassigned,
        twin,
    }
}

/// Checks `count` generated kernels: every bound at least the simulated
/// cost, loops up to locals assigned once bounded wherever their twins
/// are, and no kernel whose loops are bounded alone but not together.
pub fn check(count: u64) {
    // Loops up to a local assigned once (a copy, a chain of copies through
    // a device function's parameter, a quotient of one), and up to one
    // assigned again.
    let (mut once, mut again) = (Tally::default(), Tally::default());
    let (mut once_kernels, mut again_kernels) = (0, 0);
    // Metrics bounded for the twin (the bound over the input directly)
    // but not through the local, by configuration.
    let mut lost = Vec::new();
    for i in 0..count {
        let local = generate(i);
        if let Some(twin) = &local.twin {
            for (config, analysis) in analysis_configs(twin) {
                let bounded = |gen: &Generated| -> Vec<bool> {
                    let kernel = generated_kernel(gen);
                    let p = prepare(&kernel, analysis);
                    BUILTIN_METRICS
                        .iter()
                        .filter_map(|m| Metric::builtin(m))
                        .map(|m| matches!(p.bound(&m).work, Outcome::Bound(_)))
                        .collect()
                };
                for (m, (direct, through)) in BUILTIN_METRICS
                    .iter()
                    .zip(bounded(twin).into_iter().zip(bounded(&local.gen)))
                {
                    if direct && !through {
                        lost.push(format!("case {i} ({config}) {m}:\n{}", local.gen.src));
                    }
                }
            }
        }
        if local.reassigned {
            again.check(i, &local.gen, 64, false);
            again_kernels += 1;
        } else {
            once.check(i, &local.gen, 64, false);
            once_kernels += 1;
        }
    }
    once.finish(
        "generated loops bounded through locals assigned once",
        once_kernels,
        once_kernels,
    );
    again.finish(
        "generated loops bounded through locals assigned again",
        again_kernels,
        again_kernels,
    );
    // Precision floor: a loop up to a local assigned once is bounded
    // wherever the same loop up to the input is, however many copies lie
    // between; and no kernel here has loops bounded on their own but not
    // together.
    let infeasible = |t: &Tally| -> u64 {
        t.unbounded
            .iter()
            .filter(|(why, _)| why.starts_with("no potential satisfies"))
            .map(|(_, n)| n)
            .sum()
    };
    println!(
        "locals assigned once: {} metrics bounded over the input directly but not through the local",
        lost.len()
    );
    assert!(
        lost.is_empty(),
        "{} metrics lost their bound through a local:\n{}",
        lost.len(),
        lost.join("\n")
    );
    assert_eq!(infeasible(&once), 0, "{:?}", once.unbounded);
    assert_eq!(infeasible(&again), 0, "{:?}", again.unbounded);
}
