//! Generated counted loops (not grid-strided) up to a maximum or a
//! minimum: `for (c = 0; c < max(n, K); c++)`, `c <= min(K, n)`, either
//! order of the operands, over the input `n`, a constant, the block's
//! size, a copy of `n`, or a sum, difference, constant multiple,
//! quotient, product or shift of it (`n / 4`, `n + 3`, `2 * n`, `n - 1`,
//! `cp / 3 + 1`, `(n / 8) * (cp / 8)`, `n << 1`, `(n + 5) >> 1`), `n` an
//! `int` or an `unsigned` (whose sums wrap around), held in a local (`int
//! m = max(n, 64);`) or written in the guard, as
//! `for`, `while` or a step of 2, and nests whose inner loop runs up to
//! `min(c, K)` or `max(K, c)` (over the outer counter, no input; from 0
//! or from `c`) or to another limit. `n` is negative, zero, below the
//! constants or above them, or within a few of its type's limits.

use copper::sim::params::SplitMix;

use super::Generated;

/// Operands of a limit over an `int n`: `n` the input (or a local copy
/// `cp` of it), `K` a constant, and expressions over them: linear,
/// quotients, products and shifts.
const OPERANDS: [&str; 15] = [
    "n",
    "K",
    "cp",
    "(int)blockDim.x",
    "n / 4",
    "n + 3",
    "2 * n",
    "n - 1",
    "cp / 3 + 1",
    "(n / 8) * (cp / 8)",
    "n * cp / 256",
    "n << 1",
    "n >> 2",
    "cp >> 1",
    "(n + 5) >> 1",
];

/// Operands over an `unsigned n`: quotients and right shifts (which
/// never wrap) and sums, products and differences (which may).
const UNSIGNED_OPERANDS: [&str; 10] = [
    "n",
    "K",
    "cp",
    "n / 4",
    "n >> 2",
    "n >> 1",
    "cp / 3 + 1",
    "n + 3",
    "2 * n",
    "n - 1",
];

/// How a loop over `c` up to `LIMIT` is written (`CMP` is `<` or `<=`).
const LOOPS: [&str; 5] = [
    "for (int c = 0; c CMP LIMIT; c++) { BODY }",
    "for (int c = 0; c CMP LIMIT; c += 2) { BODY }",
    "{ int c = 0; while (c CMP LIMIT) { BODY c++; } }",
    "{ TY m = LIMIT; for (int c = 0; c CMP m; ++c) { BODY } }",
    "for (int c = 1; LIMIT RCMP c; c++) { BODY }",
];

/// What a loop's body does: a cost of its own, or an inner loop up to a
/// minimum or maximum over the counter, or up to a limit of its own.
const BODIES: [&str; 5] = [
    "acc += a[c % 64];",
    "for (int j = 0; j < min(c, K2); j++) { s[(threadIdx.x + j) % 64] += 1.0f; }",
    "for (int j = 0; j < min(K2, n); j++) { acc += a[(c + j) % 64]; }",
    "for (int j = c; j <= max(K2, c); j++) { acc += s[j % 64]; }",
    "for (int j = 0; j <= max(K2, c); j++) { acc += a[j % 64]; }",
];

const BLOCKS: [[u64; 3]; 4] = [[32, 1, 1], [33, 2, 1], [64, 1, 1], [16, 1, 1]];

const GRIDS: [[u64; 3]; 2] = [[1, 1, 1], [3, 1, 1]];

/// Generated launch `i`: one loop up to a `max` or `min` of two operands,
/// its body perhaps a nest.
pub fn generate(i: u64) -> Generated {
    let mut g = SplitMix::new(0xE87 ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut pick = |n: u64| g.next_u64() % n.max(1);
    let f = ["max", "min"][pick(2) as usize];
    // `n` unsigned a quarter of the time.
    let (ty, operands) = if pick(4) == 0 {
        ("unsigned", &UNSIGNED_OPERANDS[..])
    } else {
        ("int", &OPERANDS[..])
    };
    let x = operands[pick(operands.len() as u64) as usize];
    // The other operand: a constant half of the time.
    let y = if pick(2) == 0 {
        "K"
    } else {
        operands[pick(operands.len() as u64) as usize]
    };
    let (x, y) = if pick(2) == 0 { (x, y) } else { (y, x) };
    let limit = format!("{f}({x}, {y})");
    let (cmp, rcmp) = [("<", ">"), ("<=", ">=")][pick(2) as usize];
    let body = BODIES[pick(BODIES.len() as u64) as usize];
    let k = [0, 7, 64, 100][pick(4) as usize];
    let k2 = [3, 16][pick(2) as usize];
    let lp = LOOPS[pick(LOOPS.len() as u64) as usize]
        .replace("LIMIT", &limit)
        .replace("RCMP", rcmp)
        .replace("CMP", cmp)
        .replace("BODY", body)
        .replace("TY", ty)
        .replace("K2", &k2.to_string())
        .replace('K', &k.to_string());
    let block = BLOCKS[pick(BLOCKS.len() as u64) as usize];
    let grid = GRIDS[pick(GRIDS.len() as u64) as usize];
    // At most about 150 iterations of the outer loop, or near the
    // type's limits (where a sum, product or shift overflows, undefined
    // for `int`, or wraps around for `unsigned`, and most loops run past
    // the simulator's step budget).
    let n: i64 = match (pick(8), ty) {
        (0, "int") => -(1 + pick(9) as i64),
        (0, _) => pick(8) as i64,
        (1, "int") => i64::from(i32::MIN) + pick(4) as i64,
        (1, _) => i64::from(u32::MAX) - pick(4) as i64,
        (2, "int") => i64::from(i32::MAX) - pick(4) as i64,
        (2, _) => i64::from(i32::MAX) + pick(4) as i64,
        (3, _) => pick(8) as i64,
        _ => pick(150) as i64,
    };
    let src = format!(
        "__global__ void k(float *a, float *out, {ty} n) {{\n\
         __shared__ float s[64];\n\
         float acc = 0;\n\
         {ty} cp = n;\n\
         {lp}\n\
         out[threadIdx.x % 64] = acc + s[threadIdx.x % 64];\n\
         }}"
    );
    Generated {
        src,
        grid,
        block,
        n,
    }
}
