//! Generated kernels whose blocks read what other blocks write: each
//! block reads elements of `a` that the next block (or any block, through
//! a shared slot) writes, and the values read decide branches, `break`s,
//! `continue`s in `while` loops, the bounds of inner loops, and the
//! results of atomics used in the sum. What a block reads then depends on
//! the order the blocks run in; the simulator runs them as in launch order
//! on any machine, so these kernels are also simulated on one thread and
//! on several and must give the same results.

use copper::sim::params::SplitMix;

use super::Generated;

/// Loop bodies. `OWN` is the thread's element of `a`, `NEXT` the same
/// element of the next block (the last block reads block 0's), `SLOT` an
/// element every block reads and writes. Each reads and writes inside the
/// 64 elements of `a` and `out`, and never raises `n`.
const BODIES: [&str; 10] = [
    "acc += a[NEXT]; a[OWN] = acc;",
    "if (a[NEXT] > 0.0f) { acc += out[OWN]; } else { acc -= 1.0f; } a[OWN] = acc;",
    "if (a[NEXT] > 0.5f) break; a[OWN] += 0.25f; acc += 1.0f;",
    "a[OWN] = a[NEXT] + 1.0f; acc += a[(OWN + 1) % 64];",
    "int m = (int)(a[NEXT] * 8.0f); for (int d = 0; d < m; d++) { acc += out[d % 64]; } a[OWN] = acc;",
    "acc += atomicAdd(&a[NEXT], 0.5f); if (acc > 4.0f) break;",
    "if (atomicAdd(&a[SLOT], 1.0f) > 3.0f) { acc += a[OWN]; } else { a[OWN] = acc; }",
    "a[SLOT] = acc; acc += a[NEXT];",
    "if ((int)a[SLOT] % 2 == 0) { a[OWN] = c; } acc += a[NEXT] * 0.5f;",
    "float v = a[NEXT]; if (v > 1.0f) { a[OWN] = v - 1.0f; } else { a[OWN] = v + c; }",
];

/// Loop heads over the counter `c` and the bound `n`, with what closes
/// them: counted, block- and grid-strided, and a `while` whose `continue`
/// skips the body on data another block wrote.
const LOOPS: [(&str, &str); 4] = [
    ("for (int c = 0; c < n; c++) {", "}"),
    ("for (int c = threadIdx.x; c < n; c += blockDim.x) {", "}"),
    (
        "for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < n; c += blockDim.x * gridDim.x) {",
        "}",
    ),
    (
        "int c = 0; while (c < n) { c++; if (a[NEXT] < -0.5f) continue;",
        "}",
    ),
];

/// The launch's blocks: one warp, two, a partial warp in two rows.
const BLOCKS: [[u64; 3]; 4] = [[32, 1, 1], [64, 1, 1], [33, 2, 1], [16, 4, 1]];

/// At least two blocks, so that one can see another's work.
const GRIDS: [[u64; 3]; 3] = [[2, 1, 1], [5, 1, 1], [40, 1, 1]];

/// Generated launch `i`.
pub fn generate(i: u64) -> Generated {
    let mut g = SplitMix::new(0xB10C ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut pick = |n: u64| g.next_u64() % n.max(1);
    let (head, close) = LOOPS[pick(LOOPS.len() as u64) as usize];
    let body = BODIES[pick(BODIES.len() as u64) as usize];
    let slot = pick(64).to_string();
    let fill = |s: &str| {
        s.replace("OWN", "own")
            .replace("NEXT", "next")
            .replace("SLOT", &slot)
    };
    let src = format!(
        "__global__ void k(float *a, float *out, int n) {{\n\
         float acc = 0;\n\
         int own = (blockIdx.x * blockDim.x + threadIdx.x) % 64;\n\
         int next = (((blockIdx.x + 1) % gridDim.x) * blockDim.x + threadIdx.x) % 64;\n\
         {} {} {close}\n\
         out[own] = acc;\n\
         }}",
        fill(head),
        fill(body)
    );
    Generated {
        src,
        grid: GRIDS[pick(GRIDS.len() as u64) as usize],
        block: BLOCKS[pick(BLOCKS.len() as u64) as usize],
        n: pick(300) as i64,
    }
}
