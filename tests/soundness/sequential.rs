//! Generated sequential loops that reuse one counter, declared once
//! before them (`int i; for (i = 0; i < n + 1; i++) …; for (i = 0; i < n;
//! i++) for (int j = 0; j < i; j++) …`), as C-style code such as
//! rodinia's LU decomposition writes them: guards that coincide between
//! the loops up to a constant (`n`, `n + K`, `n - K`, `K`), upward and
//! downward counters, steps of 1 and 2, `while` loops, and nests whose
//! inner loop runs up to the counter or from it (triangles of either
//! orientation, the inner counter declared in the nest or reused too).
//! Such loops once shared their bases' origins, and an assignment moved
//! the potential one base received from another a second time: a bound of
//! `4/3·n·(n + 1) + 4/3·n` sectors for `2·n·(n − 1)` simulated.

use copper::sim::params::SplitMix;

use super::Generated;

/// Loop guards over the shared counter `i`; `K` is a small constant.
const GUARDS: [&str; 6] = [
    "i < n",
    "i < n + K",
    "i <= n",
    "i < n - K",
    "n > i",
    "i < K",
];

/// A loop over `i` with guard `GUARD` and body `BODY`, each way students
/// write one: `for`, a `while` with the update last, a downward `for`, a
/// step of 2.
const LOOPS: [&str; 5] = [
    "for (i = 0; GUARD; i++) { BODY }",
    "i = 0; while (GUARD) { BODY i++; }",
    "for (i = 0; GUARD; i += 2) { BODY }",
    "for (i = 0; GUARD; ++i) { BODY }",
    "for (i = n; i > 0; i--) { BODY }",
];

/// What a loop's body does: nothing, a cost of its own, or an inner loop
/// over `j` bounded by the counter (below it, from it up to `n`, down to
/// it), with `j` declared in the nest or the kernel's `j` reused.
const BODIES: [&str; 8] = [
    "",
    "acc += a[i % 64];",
    "for (int j = 0; j < i; j++) { s[threadIdx.x % 64] += 2.0f; }",
    "for (j = 0; j < i; j++) { acc += a[(i + j) % 64]; }",
    "for (int j = i + 1; j < n; j++) { out[threadIdx.x % 64] += a[j % 64]; }",
    "for (j = i; j < n + K; j++) { acc += s[j % 64]; }",
    "for (int j = i; j > 0; j--) { s[(threadIdx.x + j) % 64] += 1.0f; }",
    "if (threadIdx.x > i) { for (j = 0; j < i; j++) { acc += s[j % 64]; } }",
];

const BLOCKS: [[u64; 3]; 4] = [[16, 1, 1], [32, 1, 1], [33, 2, 1], [64, 1, 1]];

const GRIDS: [[u64; 3]; 2] = [[1, 1, 1], [3, 1, 1]];

/// Generated launch `i`: two or three loops over one counter.
pub fn generate(i: u64) -> Generated {
    let mut g = SplitMix::new(0x5E0 ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut pick = |n: u64| g.next_u64() % n.max(1);
    let loops = 2 + pick(2);
    let mut code = String::new();
    for _ in 0..loops {
        let guard = GUARDS[pick(GUARDS.len() as u64) as usize];
        let shape = LOOPS[pick(LOOPS.len() as u64) as usize];
        let body = BODIES[pick(BODIES.len() as u64) as usize];
        let k = (1 + pick(3)).to_string();
        let text = shape
            .replace("GUARD", guard)
            .replace("BODY", body)
            .replace('K', &k);
        code.push_str(&text);
        code.push('\n');
    }
    let src = format!(
        "__global__ void k(float *a, float *out, int n) {{\n\
         __shared__ float s[64];\n\
         float acc = 0;\n\
         int i, j = 0;\n\
         s[threadIdx.x % 64] = 0.0f;\n\
         {code}\
         out[threadIdx.x % 64] += acc + s[(threadIdx.x + j) % 64];\n\
         }}"
    );
    Generated {
        src,
        grid: GRIDS[pick(GRIDS.len() as u64) as usize],
        block: BLOCKS[pick(BLOCKS.len() as u64) as usize],
        n: pick(40) as i64,
    }
}
