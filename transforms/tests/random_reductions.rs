//! The warp-shuffle rewrite as a property: on randomly written shared-memory
//! tree reductions, sequential, interleaved (also through a strided
//! index), or finished by the first
//! warp's steps unrolled by hand without barriers (element types from `char` to `double`; sums written
//! three ways, minima and maxima with either operand first; strides of
//! `int`, `unsigned`, `short`, `char`, `size_t`, `auto` and a typedef, started at half
//! the block, a constant or a template's `BLOCK / 2`; blocks from 32 to
//! 1024 threads and ones that are no multiple of 32, like 33 and 96; the
//! buffer read after the loop at 0 only, at 1, or written again for a
//! second tree), every candidate computes, on every synthesized launch,
//! exactly what the original computes, and the kernels that meet the
//! preconditions by construction are rewritten. (With
//! `--allow-reassociation`, a floating-point sum reduced per warp differs
//! from the tree's in the last bits: the check's tolerance rejects it when
//! the terms cancel, as random data of both signs do, so that order is
//! left to the fixtures.)
//!
//! `PROPTEST_CASES=1000 cargo test --release -p copper-transforms --test
//! random_reductions -- --nocapture` for a longer run.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};

use common::try_propose_with;
use copper_transforms::warp_shuffle::WarpShuffle;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Element types: name, whether `__shfl_down_sync` takes it, whether it is
/// an integer, its zero.
const ELEMENTS: &[(&str, bool, bool, &str)] = &[
    ("int", true, true, "0"),
    ("unsigned int", true, true, "0u"),
    ("long long", true, true, "0ll"),
    ("float", true, false, "0.0f"),
    ("double", true, false, "0.0"),
    ("char", false, true, "0"),
];

/// How two partial results combine (`A` the own element, `P` the
/// partner), and whether it needs a floating-point element type (`f`),
/// works on any (`*`).
const COMBINES: &[(&str, char)] = &[
    ("A += P;", '*'),
    ("A = A + P;", '*'),
    ("A = P + A;", '*'),
    ("A = max(A, P);", 'i'),
    ("A = min(P, A);", 'i'),
    ("A = fmaxf(A, P);", 'f'),
    ("A = fminf(P, A);", 'f'),
];

/// Stride counters: type, and the largest start it holds.
const COUNTERS: &[(&str, u64)] = &[
    ("int", i32::MAX as u64),
    ("unsigned", u32::MAX as u64),
    ("short", i16::MAX as u64),
    ("char", i8::MAX as u64),
    ("size_t", u64::MAX),
    ("auto", i32::MAX as u64),
    ("u16", u16::MAX as u64),
];

/// What follows the loop: whether the rewrite keeps the results of it.
const AFTER: &[(&str, bool)] = &[
    ("if (tid == 0) out[blockIdx.x] = buf[0];", true),
    ("if (tid == 0) out[blockIdx.x] = buf[0] + buf[1];", false),
    (
        "T m = buf[0];\n    __syncthreads();\n    buf[tid] = i < n ? in[i] - m : m;\n    __syncthreads();\n    if (i < n) out[i] = buf[(tid + 1) % BLOCK];",
        true,
    ),
];

struct Case {
    element: usize,
    combine: usize,
    counter: usize,
    start: usize,
    after: usize,
    tid_local: bool,
    block: u64,
    /// 0: sequential (`tid < s`); 1 and 2: interleaved (`tid % (2 * s)`,
    /// `tid & (2 * s - 1)`); 3 and 4: sequential to 32, then the first
    /// warp's six steps unrolled by hand without barriers (through a
    /// `volatile` pointer, or on the buffer); 5: interleaved through a
    /// strided index (`index = 2 * s * tid`).
    style: usize,
}

/// The kernel of `c`, a template instantiated once with its element
/// type and block, and whether the rewrite must apply.
fn kernel(c: &Case) -> (String, bool) {
    let (elem, shuffles, integer, zero) = ELEMENTS[c.element];
    let (combine, needs) = COMBINES[c.combine];
    let combine = match needs {
        'f' if integer => COMBINES[0].0,
        'i' if !integer => COMBINES[5].0,
        _ => combine,
    };
    let tid = if c.tid_local { "tid" } else { "threadIdx.x" };
    let element = if c.style == 5 { "index" } else { tid };
    let update = combine
        .replace('A', &format!("buf[{element}]"))
        .replace('P', &format!("buf[{element} + s]"));
    let (counter, holds) = COUNTERS[c.counter];
    let (start_text, start) = match c.start {
        0 => ("blockDim.x / 2".to_string(), c.block / 2),
        1 => ("BLOCK / 2".to_string(), c.block / 2),
        _ => ("(BLOCK >> 1)".to_string(), c.block / 2),
    };
    let (after, keeps) = AFTER[c.after];
    let (header, guard) = match c.style {
        0 => (
            format!("for ({counter} s = {start_text}; s > 0; s >>= 1)"),
            format!("{tid} < s"),
        ),
        3 | 4 => (
            format!("for ({counter} s = {start_text}; s > 32; s >>= 1)"),
            format!("{tid} < s"),
        ),
        5 => (
            format!("for ({counter} s = 1; s < blockDim.x; s *= 2)"),
            "index < blockDim.x".to_string(),
        ),
        1 => (
            format!("for ({counter} s = 1; s < blockDim.x; s *= 2)"),
            format!("{tid} % (2 * s) == 0"),
        ),
        _ => (
            format!("for ({counter} s = 1; s < BLOCK; s <<= 1)"),
            format!("({tid} & (2 * s - 1)) == 0"),
        ),
    };
    let unrolled = match c.style {
        3 | 4 => {
            let w = if c.style == 3 { "w" } else { "buf" };
            let alias = if c.style == 3 {
                "volatile T *w = buf;\n        "
            } else {
                ""
            };
            let steps: Vec<String> = [32, 16, 8, 4, 2, 1]
                .iter()
                .map(|k| {
                    combine
                        .replace('A', &format!("{w}[{tid}]"))
                        .replace('P', &format!("{w}[{tid} + {k}]"))
                })
                .collect();
            format!(
                "if ({tid} < 32) {{\n        {alias}{}\n    }}\n    ",
                steps.join("\n        ")
            )
        }
        _ => String::new(),
    };
    // Made sequential, an interleaved tree reduces in another order: only
    // integers keep their result (the test runs without
    // `--allow-reassociation`), and only a power-of-two block halves.
    let interleaved_ok = ![1, 2, 5].contains(&c.style) || (integer && c.block.is_power_of_two());
    let index = match c.style {
        5 => format!("int index = 2 * s * {tid};\n        "),
        _ => String::new(),
    };
    let applies = interleaved_ok
        && c.block.is_multiple_of(32)
        && start >= 32
        && start.is_power_of_two()
        && shuffles
        && start <= holds
        && keeps;
    let src = format!(
        "typedef unsigned short u16;
template <typename T, int BLOCK>
__global__ void tree(const T *in, T *out, int n) {{
    __shared__ T buf[BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * BLOCK + tid;
    buf[tid] = i < n ? in[i] : T({zero});
    __syncthreads();
    {header} {{
        {index}if ({guard}) {update}
        __syncthreads();
    }}
    {unrolled}{after}
}}

void run(const {elem} *in, {elem} *out, int n) {{
    tree<{elem}, {block}><<<(n + {block} - 1) / {block}, {block}>>>(in, out, n);
}}
",
        block = c.block
    );
    (src, applies)
}

#[test]
fn shuffled_reductions_compute_what_the_trees_did() {
    let cases = common::cases(256);
    let strategy = (
        0..ELEMENTS.len(),
        0..COMBINES.len(),
        0..COUNTERS.len(),
        0usize..3,
        0..AFTER.len(),
        any::<bool>(),
        prop::sample::select(vec![32u64, 33, 64, 96, 128, 256, 512, 1024]),
        0usize..6,
    );
    let rewritten = AtomicUsize::new(0);
    let expected = AtomicUsize::new(0);
    let skipped = AtomicUsize::new(0);
    let unrolled = AtomicUsize::new(0);
    let strided = AtomicUsize::new(0);
    let mut runner = TestRunner::new(Config {
        cases,
        ..Config::default()
    });
    runner
        .run(
            &strategy,
            |(element, combine, counter, start, after, tid_local, block, style)| {
                let case = Case {
                    element,
                    combine,
                    counter,
                    start,
                    after,
                    tid_local,
                    block,
                    style,
                };
                let (src, applies) = kernel(&case);
                // A candidate that changes the results panics, naming it.
                let Ok(p) = try_propose_with(&WarpShuffle, &src, [block, 1, 1], false) else {
                    // The original itself fails (an interleaved `char`
                    // stride doubling past 127 indexes out of bounds).
                    skipped.fetch_add(1, Ordering::Relaxed);
                    return Ok(());
                };
                if applies {
                    expected.fetch_add(1, Ordering::Relaxed);
                    prop_assert!(
                        !p.candidates.is_empty(),
                        "not rewritten: {:?}\n{src}",
                        p.skipped
                    );
                    rewritten.fetch_add(1, Ordering::Relaxed);
                    match style {
                        3 | 4 => unrolled.fetch_add(1, Ordering::Relaxed),
                        5 => strided.fetch_add(1, Ordering::Relaxed),
                        _ => 0,
                    };
                } else {
                    prop_assert!(
                        p.candidates.is_empty(),
                        "rewritten against a precondition: {}\n{src}",
                        p.candidates[0].description
                    );
                }
                Ok(())
            },
        )
        .unwrap();
    let (rewritten, expected) = (rewritten.into_inner(), expected.into_inner());
    let (skipped, unrolled) = (skipped.into_inner(), unrolled.into_inner());
    let strided = strided.into_inner();
    println!("{cases} random trees: {rewritten} rewritten ({unrolled} with a hand-unrolled last warp, {strided} through a strided index), as {expected} should be; {skipped} originals that do not run cleanly skipped");
    assert!(
        unrolled >= cases as usize / 40,
        "only {unrolled} hand-unrolled trees rewritten in {cases}"
    );
    assert!(
        rewritten >= cases as usize / 8,
        "only {rewritten} of {cases} trees met the preconditions: the generator misses them"
    );
}
