//! Generated loops over unsigned counters: `size_t`,
//! `unsigned`, `unsigned long long`, `unsigned short` and `unsigned char`
//! counters in grid-stride loops (32- and 64-bit strides, a local
//! `stride`, twice the grid, a cooperative grid group's `size()`) and
//! block-stride loops (1-D, over a 2-D block, four times the block, a
//! cooperative block's `size()`), below or up to (`c <= n`, `n >= c`) an
//! `int`, `unsigned`, `size_t` or `long long` bound `n` up to 2^20, or
//! negative; grids of thousands of blocks, blocks like 33×2. The
//! bounds of these loops may hold only under an assumption (`0 ≤ n`,
//! `n ≤ 2^31 − 1`, `gridDim.x ≤ 2^21`): inputs that break one are counted
//! apart, not compared.

use copper::sim::params::SplitMix;

use super::Generated;

const COUNTERS: [&str; 6] = [
    "size_t",
    "unsigned",
    "unsigned int",
    "unsigned long long",
    "unsigned short",
    "unsigned char",
];

const BOUND_TYPES: [&str; 4] = ["int", "unsigned", "size_t", "long long"];

const BLOCKS: [[u64; 3]; 6] = [
    [33, 2, 1],
    [256, 1, 1],
    [96, 1, 1],
    [1024, 1, 1],
    [32, 4, 1],
    [7, 5, 1],
];

const GRIDS: [[u64; 3]; 6] = [
    [1, 1, 1],
    [7, 1, 1],
    [1000, 1, 1],
    [4096, 1, 1],
    [65535, 1, 1],
    [3000, 2, 1],
];

/// (start, step, local declaration, whether the stride covers the grid)
/// of each loop shape; `T` is the counter's type.
const SHAPES: [(&str, &str, &str, bool); 10] = [
    (
        "blockIdx.x * blockDim.x + threadIdx.x",
        "blockDim.x * gridDim.x",
        "",
        true,
    ),
    (
        "(size_t)blockIdx.x * blockDim.x + threadIdx.x",
        "(size_t)blockDim.x * gridDim.x",
        "",
        true,
    ),
    (
        "blockIdx.x * blockDim.x + threadIdx.x",
        "stride",
        "const T stride = blockDim.x * gridDim.x;\n",
        true,
    ),
    (
        "static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x",
        "stride",
        "const size_t stride = static_cast<size_t>(blockDim.x) * gridDim.x;\n",
        true,
    ),
    ("threadIdx.x", "blockDim.x", "", false),
    (
        "threadIdx.y * blockDim.x + threadIdx.x",
        "blockDim.x * blockDim.y",
        "",
        false,
    ),
    // A constant times the threads of the grid or the block.
    (
        "blockIdx.x * blockDim.x + threadIdx.x",
        "2 * blockDim.x * gridDim.x",
        "",
        true,
    ),
    ("threadIdx.x", "blockDim.x * 4", "", false),
    // Cooperative groups' sizes: the grid's and the block's threads.
    (
        "grid.thread_rank()",
        "grid.size()",
        "cg::grid_group grid = cg::this_grid();\n",
        true,
    ),
    (
        "block.thread_rank()",
        "block.size()",
        "cg::thread_group block = cg::this_thread_block();\n",
        false,
    ),
];

/// The loop conditions: below `n` or up to it, either side first.
const CONDITIONS: [&str; 4] = ["c < n", "c <= n", "n > c", "n >= c"];

const BODIES: [&str; 3] = [
    "acc += a[c % 64];",
    "acc += a[(c + threadIdx.y) % 64]; s[c % 64] = acc;",
    "if (c % 3 == 0) { acc += a[0]; } else { acc -= a[c % 64]; }",
];

/// The generated kernel `i`: `k(float *a, float *out, N n)`.
pub fn generate(i: u64) -> Generated {
    let mut g = SplitMix::new(0xFACE ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut pick = |n: u64| g.next_u64() % n.max(1);
    let counter = COUNTERS[pick(COUNTERS.len() as u64) as usize];
    let bound = BOUND_TYPES[pick(BOUND_TYPES.len() as u64) as usize];
    let block = BLOCKS[pick(BLOCKS.len() as u64) as usize];
    let grid = GRIDS[pick(GRIDS.len() as u64) as usize];
    let shape = pick(SHAPES.len() as u64) as usize;
    let (start, step, stride, whole_grid) = SHAPES[shape];
    let body = BODIES[pick(BODIES.len() as u64) as usize];
    let cond = CONDITIONS[pick(CONDITIONS.len() as u64) as usize];
    // The threads a stride covers, and so the most elements a launch
    // walks within the simulator's step budget (about 200 strides).
    let per_block: u64 = block.iter().product();
    let threads = if step == "grid.size()" {
        per_block * grid.iter().product::<u64>()
    } else if whole_grid {
        per_block * grid[0]
    } else {
        per_block
    };
    let n: i64 = match pick(5) {
        0 => pick((threads * 200).min(1 << 20) + 1) as i64,
        1 => pick(3000) as i64,
        2 => (threads * (1 + pick(3)) + pick(40)) as i64,
        3 if bound == "int" || bound == "long long" => -(1 + pick(5) as i64),
        _ => pick(1 << 20) as i64,
    };
    let src = format!(
        "namespace cg = cooperative_groups;\n\
         __global__ void k(float *a, float *out, {bound} n) {{\n\
         __shared__ float s[64];\n\
         float acc = 0;\n\
         {}\
         for ({counter} c = {start}; {cond}; c += {step}) {{ {body} }}\n\
         out[threadIdx.x % 64] = acc + s[threadIdx.x % 64];\n\
         }}",
        stride.replace('T', counter)
    );
    Generated {
        src,
        grid,
        block,
        n,
    }
}
