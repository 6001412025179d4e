//! The block-size verdict of `copper lint` (BSI) is sound: a kernel
//! it calls independent computes the same arrays for every block size
//! (grid resized to keep the thread count), including blocks that are
//! not multiples of 32. Random kernels store an
//! expression over the builtins, with integer casts of every width and
//! non-polynomial operators, at the global index; each is simulated at
//! several block sizes.

use copper::cuda::parse::parse_source;
use copper::ir::lower::lower_kernel;
use copper::ir::Value;
use copper::lint::block_size::verdict;
use copper::lint::{lint_kernel, BlockSize};
use copper::sim::params::ParamFile;
use copper::sim::{inputs_from_spec, simulate, SimOptions};
use copper::source::SourceFile;
use proptest::prelude::*;

/// Threads in every launch: 2^5·3·5·11, so that blocks that are not
/// multiples of 32 (33, 48, 160, 330, …) also divide it and the grid keeps
/// the thread count, as the verdict's definition requires.
const THREADS: u64 = 5280;

/// The verdict for the kernel `k` in `src`.
fn verdict_of(src: &str) -> BlockSize {
    let parsed = parse_source(SourceFile::new("k.cu", src));
    let kernel = lower_kernel(&parsed, "k").unwrap_or_else(|d| panic!("{}\n{src}", d.render()));
    verdict(&kernel).0
}

/// The final `out` array of `k` launched with blocks of `block` threads,
/// or `None` when the simulator refuses the run (out of bounds, undefined
/// behaviour).
fn outputs(src: &str, block: u64) -> Option<Vec<Value>> {
    let parsed = parse_source(SourceFile::new("k.cu", src));
    let kernel = lower_kernel(&parsed, "k").ok()?;
    let params = format!(
        "[kernel.k]\ngrid = [{}]\nblock = [{block}]\nargs = {{ n = {THREADS} }}\n\
         [kernel.k.arrays.out]\nlen = {THREADS}\n",
        THREADS / block
    );
    let p = ParamFile::from_toml(&params).expect("parameter file");
    let inputs = inputs_from_spec(&kernel, &p.kernel["k"]).ok()?;
    let r = simulate(&kernel, &inputs, &SimOptions::default()).ok()?;
    let out = r.arrays.iter().find(|(n, _)| n == "out")?;
    Some(out.1.values().collect())
}

fn kernel(expr: &str) -> String {
    format!(
        "__global__ void k(int *out, int n) {{\n    int gid = blockIdx.x * blockDim.x + threadIdx.x;\n    if (gid < n) {{\n        out[gid] = (int)({expr});\n    }}\n}}\n"
    )
}

/// Random integer expressions over the builtins, the global index and `n`.
fn expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("gid".to_string()),
        Just("threadIdx.x".to_string()),
        Just("blockIdx.x".to_string()),
        Just("blockDim.x".to_string()),
        Just("gridDim.x".to_string()),
        Just("(blockIdx.x * blockDim.x)".to_string()),
        Just("(gridDim.x * blockDim.x)".to_string()),
        Just("n".to_string()),
        (1i32..300).prop_map(|c| c.to_string()),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        let cast = prop_oneof![
            Just("unsigned char"),
            Just("char"),
            Just("short"),
            Just("unsigned short"),
            Just("unsigned"),
            Just("int"),
            Just("long long"),
            Just("bool"),
        ];
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} + {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} - {b})")),
            (inner.clone(), 1i32..8).prop_map(|(a, c)| format!("({a} * {c})")),
            (inner.clone(), 1i32..9).prop_map(|(a, c)| format!("({a} / {c})")),
            (inner.clone(), 1i32..9).prop_map(|(a, c)| format!("({a} % {c})")),
            (inner.clone(), 0i32..9).prop_map(|(a, c)| format!("({a} >> {c})")),
            (inner.clone(), 1i32..255).prop_map(|(a, c)| format!("({a} & {c})")),
            (cast.clone(), inner.clone()).prop_map(|(t, a)| format!("(({t})({a}))")),
            (cast, inner.clone(), inner).prop_map(|(t, a, b)| format!("(({t})({a}) + {b})")),
        ]
    })
}

/// A block size whose outputs differ from those of blocks of 32, among
/// multiples of 32 and blocks that are not (odd warps); `None` when every
/// size that runs agrees.
fn block_that_differs(src: &str) -> Option<u64> {
    let reference = outputs(src, 32)?;
    [96, 160, 480, 33, 48, 165, 330, 528, 880]
        .into_iter()
        .find(|&block| outputs(src, block).is_some_and(|o| o != reference))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256)
    ))]

    #[test]
    fn independent_kernels_compute_the_same_for_every_block_size(e in expr()) {
        let src = kernel(&e);
        if !matches!(verdict_of(&src), BlockSize::Independent { .. }) {
            return Ok(());
        }
        prop_assert_eq!(block_that_differs(&src), None, "called independent, but differs from blocks of 32:\n{}", src);
    }
}

#[test]
fn narrowing_casts_of_the_thread_index_depend_on_the_block_size() {
    for e in [
        "blockIdx.x * blockDim.x + (unsigned char)threadIdx.x",
        "blockIdx.x * blockDim.x + (short)(threadIdx.x * 300)",
        "(unsigned char)(blockIdx.x * blockDim.x) + threadIdx.x",
    ] {
        let src = kernel(e);
        assert!(matches!(verdict_of(&src), BlockSize::Depends(_)), "{src}");
        assert_ne!(outputs(&src, 160), outputs(&src, 480), "{src}");
    }
    // The same cast used as an index.
    let src = "__global__ void k(int *out, int n) {\n    int i = blockIdx.x * blockDim.x + (unsigned char)threadIdx.x;\n    if (i < n) {\n        out[i] = 1;\n    }\n}\n";
    assert!(matches!(verdict_of(src), BlockSize::Depends(_)), "{src}");
}

#[test]
fn value_preserving_conversions_stay_independent() {
    for e in [
        "(long long)blockIdx.x * blockDim.x + threadIdx.x",
        "(unsigned)(blockIdx.x * blockDim.x + threadIdx.x)",
        "(unsigned char)(blockIdx.x * blockDim.x + threadIdx.x)",
        "(long long)gid * 3",
    ] {
        let src = kernel(e);
        assert!(
            matches!(verdict_of(&src), BlockSize::Independent { .. }),
            "{src}"
        );
        assert_eq!(outputs(&src, 160), outputs(&src, 480), "{src}");
    }
}

/// The verdict of `copper lint` for the kernel `k` in `src` launched as the
/// property test launches it (blocks of 160), races searched.
fn linted(src: &str) -> BlockSize {
    let parsed = parse_source(SourceFile::new("k.cu", src));
    let kernel = lower_kernel(&parsed, "k").unwrap_or_else(|d| panic!("{}\n{src}", d.render()));
    let params = format!(
        "[kernel.k]\ngrid = [{}]\nblock = [160]\nargs = {{ n = {THREADS} }}\n\
         [kernel.k.arrays.out]\nlen = {}\n[kernel.k.arrays.in]\nlen = {}\n",
        THREADS / 160,
        THREADS + 1,
        THREADS + 1
    );
    let p = ParamFile::from_toml(&params).expect("parameter file");
    let spec = &p.kernel["k"];
    let shape = spec.shape().expect("shape");
    lint_kernel(
        &kernel,
        copper::bound::Config {
            hw: Default::default(),
            block: Some(shape.block()),
            grid: Some(shape.grid()),
            ..Default::default()
        },
        Some(spec),
    )
    .block_size
}

#[test]
fn a_neighbour_race_is_not_called_independent() {
    // Each thread reads the element its right neighbour writes: which
    // value it reads depends on which runs first.
    let src = "__global__ void k(int *out, const int *in, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) {\n        out[i] = in[i] + out[i + 1];\n    }\n}\n";
    // The symbolic proof alone sees only the global index.
    assert!(matches!(verdict_of(src), BlockSize::Independent { .. }));
    match linted(src) {
        BlockSize::Races(m) => assert!(m.contains("data race"), "{m}"),
        v => panic!("called {v:?}:\n{src}"),
    }
    // Without the race, independent, and the launches searched are said.
    let clean = src.replace("out[i + 1]", "in[i + 1]");
    assert!(matches!(
        linted(&clean),
        BlockSize::Independent { race_free_launches: Some(n) } if n >= 2
    ));
}

#[test]
fn straight_line_updates_are_followed() {
    let global = "__global__ void k(int *out, int n) {\n    int g = blockIdx.x * blockDim.x;\n    g += threadIdx.x;\n    if (g < n) {\n        out[g] = 2 * g;\n    }\n}\n";
    assert!(
        matches!(verdict_of(global), BlockSize::Independent { .. }),
        "{global}"
    );
    assert_eq!(outputs(global, 160), outputs(global, 480));
    // Updated the other way round, the index is not the global one.
    let local = global.replace(
        "g += threadIdx.x;",
        "g += threadIdx.x;\n    g += threadIdx.x;",
    );
    assert!(
        matches!(verdict_of(&local), BlockSize::Depends(_)),
        "{local}"
    );
    // A value taken before the update, in a branch, is the block's start.
    let early = "__global__ void k(int *out, int n) {\n    int g = blockIdx.x * blockDim.x;\n    int start = 0;\n    if (n > 0) {\n        start = g;\n    }\n    g += threadIdx.x;\n    if (g < n) {\n        out[g] = start;\n    }\n}\n";
    assert!(
        matches!(verdict_of(early), BlockSize::Depends(_)),
        "{early}"
    );
    assert_ne!(outputs(early, 160), outputs(early, 480));
    // A parameter overwritten with the thread index.
    let param = "__global__ void k(int *out, int n) {\n    int g = blockIdx.x * blockDim.x + threadIdx.x;\n    if (g < 5280) {\n        n = threadIdx.x;\n        out[g] = n;\n    }\n}\n";
    assert!(
        matches!(verdict_of(param), BlockSize::Depends(_)),
        "{param}"
    );
    assert_ne!(outputs(param, 160), outputs(param, 480));
}

/// A kernel that adds to `expr` the element `d` places to the right, as
/// the thread found it: a neighbour race when `d > 0`.
fn neighbour_kernel(expr: &str, d: u32) -> String {
    format!(
        "__global__ void k(int *out, int n) {{\n    int gid = blockIdx.x * blockDim.x + threadIdx.x;\n    if (gid < n) {{\n        int right = gid + {d} < n ? out[gid + {d}] : 0;\n        out[gid] = (int)({expr}) + right;\n    }}\n}}\n"
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(64)
    ))]

    /// Random kernels with casts and, for `d > 0`, a neighbour race: what
    /// `copper lint` (races searched) calls independent computes the same
    /// for every block size, and a race is never called independent.
    #[test]
    fn linted_independent_kernels_compute_the_same_races_included(e in expr(), d in 0u32..3) {
        let src = neighbour_kernel(&e, d);
        let verdict = linted(&src);
        if d > 0 && outputs(&src, 32).is_some() {
            // Unless no launch of the race search ran at all (then the
            // verdict says it found none in 0 launches).
            prop_assert!(
                !matches!(verdict, BlockSize::Independent { race_free_launches: Some(n) } if n > 0),
                "a neighbour race called independent:\n{}",
                src
            );
        }
        if !matches!(verdict, BlockSize::Independent { .. }) {
            return Ok(());
        }
        let Some(reference) = outputs(&src, 32) else { return Ok(()) };
        for block in [96, 160, 33, 165, 528] {
            if let Some(other) = outputs(&src, block) {
                prop_assert!(other == reference, "called independent, but blocks of 32 and {} differ:\n{}", block, src);
            }
        }
    }
}

/// A kernel that stages `expr` through shared memory: each thread stores
/// it at its own element, a barrier, then reads element `read`.
fn staged_kernel(expr: &str, read: &str) -> String {
    format!(
        "__global__ void k(int *out, int n) {{\n    __shared__ int s[1024];\n    int gid = blockIdx.x * blockDim.x + threadIdx.x;\n    s[threadIdx.x] = (int)({expr});\n    __syncthreads();\n    if (gid < n) {{\n        out[gid] = s[{read}] + 1;\n    }}\n}}\n"
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(64)
    ))]

    #[test]
    fn independent_staging_kernels_compute_the_same_for_every_block_size(
        e in expr(),
        read in prop_oneof![
            Just("threadIdx.x"),
            Just("(threadIdx.x + 1) % blockDim.x"),
            Just("blockDim.x - 1 - threadIdx.x"),
            Just("0"),
        ],
    ) {
        let src = staged_kernel(&e, read);
        let verdict = verdict_of(&src);
        if read != "threadIdx.x" {
            prop_assert!(!matches!(verdict, BlockSize::Independent { .. }), "{}", src);
        }
        if !matches!(verdict, BlockSize::Independent { .. }) {
            return Ok(());
        }
        prop_assert_eq!(block_that_differs(&src), None, "called independent, but differs from blocks of 32:\n{}", src);
    }
}

#[test]
fn a_barrier_used_only_for_staging_is_independent() {
    let src = staged_kernel("3 * gid + n", "threadIdx.x");
    assert!(
        matches!(verdict_of(&src), BlockSize::Independent { .. }),
        "{src}"
    );
    assert_eq!(outputs(&src, 160), outputs(&src, 480), "{src}");
    // The same kernel reading a neighbour's element exchanges values.
    let src = staged_kernel("3 * gid + n", "(threadIdx.x + 1) % blockDim.x");
    let v = verdict_of(&src);
    assert!(matches!(v, BlockSize::NotChecked(_)), "{v:?}\n{src}");
    assert_ne!(outputs(&src, 160), outputs(&src, 480), "{src}");
}

#[test]
fn a_block_reduction_written_per_block_depends_on_the_block_size() {
    let src = "__global__ void k(int *out, int n) {\n\
               \x20   __shared__ int s[1024];\n\
               \x20   int gid = blockIdx.x * blockDim.x + threadIdx.x;\n\
               \x20   s[threadIdx.x] = gid < n ? gid : 0;\n\
               \x20   __syncthreads();\n\
               \x20   for (int st = blockDim.x / 2; st > 0; st >>= 1) {\n\
               \x20       if (threadIdx.x < st) {\n\
               \x20           s[threadIdx.x] += s[threadIdx.x + st];\n\
               \x20       }\n\
               \x20       __syncthreads();\n\
               \x20   }\n\
               \x20   if (threadIdx.x == 0) {\n\
               \x20       out[blockIdx.x] = s[0];\n\
               \x20   }\n\
               }\n";
    assert!(matches!(verdict_of(src), BlockSize::Depends(_)));
    assert_ne!(outputs(src, 160), outputs(src, 480));
}

#[test]
fn threads_exchanging_global_values_across_a_barrier_are_not_called_independent() {
    let src = "__global__ void k(int *out, int n) {\n\
               \x20   int gid = blockIdx.x * blockDim.x + threadIdx.x;\n\
               \x20   out[gid] = gid;\n\
               \x20   __syncthreads();\n\
               \x20   int v = out[gid ^ 1];\n\
               \x20   __syncthreads();\n\
               \x20   out[gid] = v;\n\
               }\n";
    assert!(matches!(verdict_of(src), BlockSize::NotChecked(_)));
}
