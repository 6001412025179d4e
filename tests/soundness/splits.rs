//! Row/column splits: `idx / n` and `idx % n` over run-time `n`
//! (1, 2, 31, 32, 33, 1000, 2^20, negative), thread indices of every sign
//! and type, 1-D and 2-D blocks, grids of thousands of blocks; indices
//! where the identity `(x / n)·n + x % n = x` applies, quotients and
//! remainders alone, and mixtures it must not simplify. Each site's memory
//! bound is checked against its worst simulated request.

use copper::sim::params::SplitMix;

use super::{generated_count, Generated, Tally, BLOCKS, GRIDS};

/// Elements of each generated array.
const SPLIT_LEN: u64 = 1 << 20;

const SPLIT_DIVISORS: [i64; 9] = [1, 2, 31, 32, 33, 1000, 1 << 20, -7, -40];

const SPLIT_INDICES: [(&str, &str); 6] = [
    ("int", "blockIdx.x * blockDim.x + threadIdx.x"),
    ("unsigned", "blockIdx.x * blockDim.x + threadIdx.x"),
    ("size_t", "(size_t)blockIdx.x * blockDim.x + threadIdx.x"),
    (
        "int",
        "(blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x",
    ),
    ("int", "blockIdx.x * blockDim.x + threadIdx.x - 40"),
    ("long long", "threadIdx.x + 3 + blockIdx.x * 100"),
];

const SPLIT_ACCESSES: [&str; 12] = [
    "row * n + col",
    "col * n + row",
    "row",
    "col",
    "n * row + col + 7",
    "(row + 1) * n + col - n",
    "col + row",
    "2 * col",
    "5000 - row",
    "row * n + col + row",
    "col * n + col",
    "(row * n + col) / n",
];

fn generate(i: u64) -> Generated {
    let mut g = SplitMix::new(0xD1F ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut pick = |n: u64| g.next_u64() % n.max(1);
    let block = BLOCKS[pick(BLOCKS.len() as u64) as usize];
    let grid = GRIDS[pick(GRIDS.len() as u64) as usize];
    let n = SPLIT_DIVISORS[pick(SPLIT_DIVISORS.len() as u64) as usize];
    let (ty, idx) = SPLIT_INDICES[pick(SPLIT_INDICES.len() as u64) as usize];
    let read = SPLIT_ACCESSES[pick(SPLIT_ACCESSES.len() as u64) as usize];
    let write = SPLIT_ACCESSES[pick(SPLIT_ACCESSES.len() as u64) as usize];
    // The divisor as the index's type sees it (a signed `n` converted to
    // an unsigned one is not followed), or through a local.
    let divisor = match pick(3) {
        0 => "n",
        1 => "(int)n",
        _ => "m",
    };
    let guard = |x: &str| format!("({x}) >= 0 && ({x}) < {SPLIT_LEN}");
    let shared = if pick(4) == 0 {
        let x = format!("(row * {divisor} + col) - ({ty})blockIdx.x * blockDim.x");
        format!(
            "if ({}) {{ s[{x}] = acc; acc += s[{x}]; }}\n",
            guard(&x).replace(&SPLIT_LEN.to_string(), "1024")
        )
    } else {
        String::new()
    };
    let src = format!(
        "__global__ void k(float *a, float *out, int n) {{\n\
         __shared__ float s[1024];\n\
         const int m = n;\n\
         {ty} idx = {idx};\n\
         {ty} row = idx / {divisor};\n\
         {ty} col = idx % {divisor};\n\
         float acc = 0;\n\
         if ({}) {{ acc += a[{read}]; }}\n\
         {shared}\
         if ({}) {{ out[{write}] = acc; }}\n\
         }}",
        guard(read),
        guard(write)
    );
    Generated {
        src,
        grid,
        block,
        n,
    }
}

#[test]
fn generated_splits_are_bounded_soundly() {
    let count = generated_count();
    let mut tally = Tally::default();
    for i in 0..count {
        tally.check(i, &generate(i), SPLIT_LEN, true);
    }
    tally.finish("generated splits", count, count);
    assert!(
        tally.split_sites * 4 >= count,
        "the splits were followed at only {} sites",
        tally.split_sites
    );
}
