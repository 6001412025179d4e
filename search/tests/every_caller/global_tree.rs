//! The every-caller promise over generated tree reductions in global
//! memory (`p[tid] += p[tid + s]` through a per-block pointer, or the
//! input indexed directly): random element types, index forms, loop
//! forms (`for` or `while`), conditions, steps and combinations, each rewrite checked on every
//! block of [`super::SHAPES`] (the two-dimensional ones race in the
//! original, so only the one-dimensional ones compare), the partial sums
//! left in the input compared with the original's bit for bit.

use copper::cuda::parse::parse_source;
use copper::source::SourceFile;
use copper_search::pipeline::Cache;
use rayon::prelude::*;

use super::{check_kernels, count, report, settings, Found, Rng};

/// Generated global-memory trees (`COPPER_EVERY_CALLER_GLOBAL_TREES=N`
/// of them, 12 by default; see [`generated_global_tree`]): at least one in
/// two must run in shared memory, and every rewrite must be right on
/// every block.
#[test]
fn shared_copies_of_generated_global_trees_are_right_for_every_block() {
    let n: u64 = count("COPPER_EVERY_CALLER_GLOBAL_TREES", 12);
    let settings = settings();
    let cache = Cache::default();
    let found: Vec<Found> = (0..n)
        .into_par_iter()
        .flat_map_iter(|seed| {
            let src = generated_global_tree(seed);
            let file = parse_source(SourceFile::new(format!("global-tree-{seed}.cu"), &src));
            check_kernels(&file, &settings, &cache)
        })
        .collect();
    report(&found, &format!("{n} generated global-memory trees"));
    let moved = found
        .iter()
        .filter(|f| f.applied.contains(&"shared-memory tree reduction"))
        .count();
    println!("{moved} of them moved into shared memory");
    assert!(
        moved * 2 >= n as usize,
        "only {moved} of {n} generated global-memory trees moved into shared memory"
    );
}

/// Kernel `seed`: a tree reduction over each block's slice of `in`,
/// through a pointer or indexing `in` directly, summing or taking the
/// maximum, in a `for` or a `while` loop, the result of each block stored
/// by its thread 0.
fn generated_global_tree(seed: u64) -> String {
    let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5eed);
    let ty = r.pick(&["int", "unsigned", "float", "double"]);
    let max = match ty {
        "float" => "fmaxf",
        "double" => "fmax",
        _ => "max",
    };
    let stride = r.pick(&["unsigned", "int"]);
    let cond = r.pick(&["s > 0", "s != 0", "s >= 1"]);
    let step = r.pick(&["s >>= 1", "s /= 2", "s = s / 2"]);
    let (setup, own, first) = match r.below(3) {
        0 => (
            format!("{ty} *p = in + blockIdx.x * blockDim.x;"),
            ("p", "tid"),
            "p[0]",
        ),
        1 => (
            "int i = blockIdx.x * blockDim.x + threadIdx.x;".to_string(),
            ("in", "i"),
            "in[i]",
        ),
        _ => (
            String::new(),
            ("in", "blockIdx.x * blockDim.x + tid"),
            "in[blockIdx.x * blockDim.x]",
        ),
    };
    let (a, x) = own;
    let update = match r.below(3) {
        0 => format!("{a}[{x}] += {a}[{x} + s];"),
        1 => format!("{a}[{x}] = {a}[{x} + s] + {a}[{x}];"),
        _ => format!("{a}[{x}] = {max}({a}[{x}], {a}[{x} + s]);"),
    };
    // The `for` loop, or the same loop written as a `while`.
    let tree = if r.below(2) == 0 {
        format!(
            "for ({stride} s = blockDim.x / 2; {cond}; {step}) {{
        if (tid < s) {{
            {update}
        }}
        __syncthreads();
    }}"
        )
    } else {
        format!(
            "{stride} s = blockDim.x / 2;
    while ({cond}) {{
        if (tid < s) {{
            {update}
        }}
        __syncthreads();
        {step};
    }}"
        )
    };
    format!(
        "__global__ void k({ty} *in, {ty} *out) {{
    unsigned tid = threadIdx.x;
    {setup}
    {tree}
    if (tid == 0) out[blockIdx.x] = {first};
}}
"
    )
}
