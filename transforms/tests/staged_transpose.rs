//! The staged transposition through a padded shared tile: the file before
//! and after the rewrite (every candidate checked against the original by
//! differential simulation), and the kernels it must leave alone, with the
//! reason.

mod common;

use common::try_propose;
use copper_transforms::staged_transpose::StagedTranspose;
use copper_transforms::Proposals;

/// A launch in the file, so that copper sees separate allocations.
const HOST: &str = "
int main() {
    float *a, *b;
    cudaMalloc(&a, 4096 * sizeof(float));
    cudaMalloc(&b, 4096 * sizeof(float));
    k<<<dim3(4, 4), dim3(16, 16)>>>(a, b, 50, 70);
    return 0;
}
";

fn propose(src: &str, block: [u64; 3]) -> Proposals {
    try_propose(&StagedTranspose, src, block).expect("checkable")
}

/// The files the candidates make of `before` (as edits), with their
/// descriptions.
fn rewrites(before: &str, block: [u64; 3]) -> Vec<(String, String)> {
    common::rewrites(&StagedTranspose, before, block)
}

/// `before` has one candidate on 16×16 blocks, and it makes `after`.
fn check(before: &str, after: &str) -> String {
    common::check(&StagedTranspose, [16, 16, 1], before, after)
}

/// `src` has no candidate on `block`, for a reason containing `reason`.
fn check_not_applicable(src: &str, block: [u64; 3], reason: &str) {
    let p = propose(src, block);
    assert!(p.candidates.is_empty(), "{:?}", p.candidates[0].description);
    let why: Vec<&str> = p.skipped.iter().map(|s| s.reason.as_str()).collect();
    assert!(why.contains(&reason), "expected `{reason}` in {why:#?}");
}

#[test]
fn uncoalesced_writes_are_stored_by_the_exchanged_thread() {
    let before = format!(
        "__global__ void k(const float *in, float *out, int rows, int cols) {{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) {{
        out[x * rows + y] = in[y * cols + x];
    }}
}}
{HOST}"
    );
    let after = before.replace(
        "    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) {
        out[x * rows + y] = in[y * cols + x];
    }
",
        "    __shared__ float tile[16][16 + 1];
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) {
        tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
    }
    __syncthreads();
    {
        int x = blockIdx.x * blockDim.x + threadIdx.y;
        int y = blockIdx.y * blockDim.y + threadIdx.x;
        if (x < cols && y < rows) {
            out[x * rows + y] = tile[threadIdx.x][threadIdx.y];
        }
    }
",
    );
    let desc = check(&before, &after);
    assert!(
        desc.contains("writes to `out` now coalesced: 32 → 6 sectors per warp"),
        "{desc}"
    );
    assert!(
        desc.contains("the launch at line 13 passes separate `cudaMalloc` allocations"),
        "{desc}"
    );
}

#[test]
fn uncoalesced_reads_are_loaded_by_the_exchanged_thread() {
    // The lanes follow `col`, which walks `a` down a column.
    let before = "#define N 48
__global__ void k(const int *__restrict__ a, int *at) {
    const int col = blockIdx.x * 16 + threadIdx.x;
    const int row = blockIdx.y * 16 + threadIdx.y;
    if (row < N)
        if (col < N)
            at[row * N + col] = 3 * a[col * N + row] + 1;
}
";
    let after = "#define N 48
__global__ void k(const int *__restrict__ a, int *at) {
    __shared__ int tile[16][16 + 1];
    {
        const int col = blockIdx.x * 16 + threadIdx.y;
        const int row = blockIdx.y * 16 + threadIdx.x;
        if (row < N)
            if (col < N)
                tile[threadIdx.x][threadIdx.y] = 3 * a[col * N + row] + 1;
    }
    __syncthreads();
    const int col = blockIdx.x * 16 + threadIdx.x;
    const int row = blockIdx.y * 16 + threadIdx.y;
    if (row < N)
        if (col < N)
            at[row * N + col] = tile[threadIdx.y][threadIdx.x];
}
";
    let desc = check(before, after);
    assert!(desc.contains("reads of `a` now coalesced"), "{desc}");
    assert!(
        desc.contains("`a` and `at` do not overlap: `a` is declared `__restrict__`"),
        "{desc}"
    );
}

#[test]
fn partial_tiles_keep_the_guards_of_each_element() {
    // 16×16 blocks over a 50×70 matrix: every edge block is partial, and
    // the check runs launches whose sizes are not multiples of 16.
    let src = format!(
        "__global__ void k(float *in, float *out, int rows, int cols) {{
    int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
    if (y < rows && x < cols && x != y) out[x * rows + y] = 0.5f * in[y * cols + x];
}}
{HOST}"
    );
    let found = rewrites(&src, [16, 16, 1]);
    assert_eq!(found.len(), 1);
    assert!(
        found[0].1.contains(
            "        int x = blockIdx.x * 16 + threadIdx.y, y = blockIdx.y * 16 + threadIdx.x;
        if (y < rows && x < cols && x != y)
            out[x * rows + y] = tile[threadIdx.x][threadIdx.y];"
        ),
        "{}",
        found[0].1
    );
}

#[test]
fn a_coalesced_copy_is_left_alone() {
    let src = format!(
        "__global__ void k(float *in, float *out, int rows, int cols) {{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) out[y * cols + x] = in[y * cols + x];
}}
{HOST}"
    );
    check_not_applicable(
        &src,
        [16, 16, 1],
        "not staged through a shared tile: it would not make the global accesses touch fewer sectors per warp (the store exchanged: 12 → 38; the loads exchanged: 12 → 38)",
    );
}

#[test]
fn what_it_refuses_and_why() {
    let kernel = "__global__ void k(float *in, float *out, int rows, int cols) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) out[x * rows + y] = in[y * cols + x];
}
";
    let with = |k: &str, host: &str| format!("{k}{host}");
    let good = with(kernel, HOST);
    // Aliasing: the same allocation read and written.
    check_not_applicable(
        &with(kernel, &HOST.replace("(a, b, 50, 70)", "(a, a, 50, 70)")),
        [16, 16, 1],
        "not staged through a shared tile: `in` and `out` may overlap (at line 11, `a` is passed as both `in` and `out`), and the tile would reorder their reads and writes",
    );
    // No evidence either way.
    check_not_applicable(kernel, [16, 16, 1], "not staged through a shared tile: `in` and `out` may overlap (the file does not launch it, and there is no parameter file), and the tile would reorder their reads and writes");
    // Blocks that the exchange does not map onto themselves.
    check_not_applicable(&good, [32, 8, 1], "not staged through a shared tile: the block (32×8×1) is not square and flat, so exchanging `threadIdx.x` and `threadIdx.y` would not map the block onto itself");
    check_not_applicable(&good, [8, 8, 2], "not staged through a shared tile: the block (8×8×2) is not square and flat, so exchanging `threadIdx.x` and `threadIdx.y` would not map the block onto itself");
    // Not a per-element map.
    let not_a_map = "not staged through a shared tile: its body is not index declarations (and early `return`s) followed by one store `out[f] = g(in[h])` under `if`s";
    let cases = [
        (
            "out[x * rows + y] = in[y * cols + x];",
            "out[x * rows + y] += in[y * cols + x];",
            not_a_map,
        ),
        (
            "out[x * rows + y] = in[y * cols + x];",
            "out[x * rows + y] = out[y * cols + x];",
            "not staged through a shared tile: the stored value reads the array it writes",
        ),
        (
            "out[x * rows + y] = in[y * cols + x];",
            "{ out[x * rows + y] = in[y * cols + x]; out[0] = 1.0f; }",
            not_a_map,
        ),
        (
            "if (x < cols",
            "for (int i = 0; i < 1; i++) if (x < cols",
            not_a_map,
        ),
    ];
    for (from, to, reason) in cases {
        check_not_applicable(&good.replace(from, to), [16, 16, 1], reason);
    }
    check_not_applicable(
        &good.replace("int y = ", "int y = (int)in[0] + "),
        [16, 16, 1],
        "not staged through a shared tile: `y` is not a scalar computed from indices (no memory read, no side effect)",
    );
    check_not_applicable(
        &good.replace(
            "out[x * rows + y] = in[y * cols + x]",
            "out[x * rows + y] = in[(y * cols + x) % 7 * x]",
        ),
        [16, 16, 1],
        "not staged through a shared tile: the index of `in` at line 4 is not affine in the thread index",
    );
    // Shared memory already.
    check_not_applicable(
        &good.replace("int x =", "__shared__ float s[4]; int x ="),
        [16, 16, 1],
        "not staged through a shared tile: it already uses shared memory (`s`)",
    );
    // A 1-D kernel has nothing to exchange: no candidate, no reason.
    let p = propose(
        "__global__ void k(float *in, float *out, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = in[i]; }",
        [16, 16, 1],
    );
    assert!(p.candidates.is_empty() && p.skipped.is_empty());
}

/// Where a random map stores and loads, over a `rows × cols` matrix
/// (`x` < `cols` from `threadIdx.x`, `y` < `rows`).
const STORE: &[&str] = &["x * rows + y", "y * cols + x", "x * rows + (rows - 1 - y)"];
const LOAD: &[&str] = &["y * cols + x", "x * rows + y", "(y * cols + x) / 2"];
/// Guards around the store, early exits among them (all of them keep the
/// indices in bounds).
const GUARDS: &[&str] = &[
    "if (x < cols && y < rows)",
    "if (y < rows) if (x < cols)",
    "if (x < cols && y < rows && x != y)",
    "if (x < cols && y < rows && (x + y) % 3 != 1)",
    "if (x >= cols) return;\n    if (y < rows)",
    "if (x >= cols || y >= rows) { return; }\n    if (x % 2 == 0 || y > 3)",
];
/// The stored value, from `v` (the load).
const VALUE: &[&str] = &["v", "2 * v + 1", "v - in[0]", "v * v"];

/// A random per-element map in `T`, with index declarations written in a
/// few styles.
fn random_map(store: usize, load: usize, guard: usize, value: usize, ty: &str) -> String {
    let v = format!("in[{}]", LOAD[load]);
    let value = VALUE[value].replace('v', &v);
    format!(
        "__global__ void k(const {ty} *in, {ty} *__restrict__ out, int rows, int cols) {{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = threadIdx.y + blockDim.y * blockIdx.y;
    {} {{
        out[{}] = {value};
    }}
}}
",
        GUARDS[guard], STORE[store]
    )
}

#[test]
fn random_maps_keep_their_results() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let cases = common::cases(40);
    let strategy = (
        0..STORE.len(),
        0..LOAD.len(),
        0..GUARDS.len(),
        0..VALUE.len(),
        prop::sample::select(vec!["float", "int", "double", "unsigned char"]),
        prop::sample::select(vec![4u64, 8, 16, 32]),
    );
    let checked = AtomicUsize::new(0);
    let mut runner = TestRunner::new(Config {
        cases,
        ..Config::default()
    });
    runner
        .run(&strategy, |(s, l, g, v, ty, side)| {
            let src = random_map(s, l, g, v, ty);
            // A candidate that computes anything else panics, naming it.
            if let Ok(p) = try_propose(&StagedTranspose, &src, [side, side, 1]) {
                checked.fetch_add(p.candidates.len(), Ordering::Relaxed);
            }
            Ok(())
        })
        .unwrap();
    let checked = checked.into_inner();
    println!("{cases} random maps: {checked} candidates checked");
    assert!(
        checked >= cases as usize / 4,
        "only {checked} candidates in {cases} maps"
    );
}

#[test]
fn an_early_return_becomes_a_guard_before_the_barrier() {
    let before = format!(
        "__global__ void k(const float *in, float *out, int rows, int cols) {{
    // where this thread's element is
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    // threads past the edge have nothing to do
    if (x >= cols || y >= rows)
        return;   /* past the edge */
    out[x * rows + y] = in[y * cols + x];
}}
{HOST}"
    );
    // The loads come before the barrier, which the threads that returned
    // early would never reach: their `return` becomes a guard there. The
    // statements keep their comments, each once.
    let after = before.replace(
        "    // where this thread's element is
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    // threads past the edge have nothing to do
    if (x >= cols || y >= rows)
        return;   /* past the edge */
    out[x * rows + y] = in[y * cols + x];
",
        "    __shared__ float tile[16][16 + 1];
    {
        // where this thread's element is
        int x = blockIdx.x * blockDim.x + threadIdx.x;
        int y = blockIdx.y * blockDim.y + threadIdx.y;
        if (!(x >= cols || y >= rows)) {
            tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
        }
    }
    __syncthreads();
    {
        int x = blockIdx.x * blockDim.x + threadIdx.y;
        int y = blockIdx.y * blockDim.y + threadIdx.x;
        // threads past the edge have nothing to do
        if (x >= cols || y >= rows)
            return;   /* past the edge */
        out[x * rows + y] = tile[threadIdx.x][threadIdx.y];
    }
",
    );
    let desc = check(&before, &after);
    assert!(desc.contains("writes to `out` now coalesced"), "{desc}");
    for c in [
        "// where this thread's element is",
        "// threads past the edge have nothing to do",
        "/* past the edge */",
    ] {
        assert_eq!(after.matches(c).count(), 1, "{c}: {after}");
    }
}

#[test]
fn a_tile_that_does_not_fit_beside_a_launch_s_dynamic_shared_memory_is_refused() {
    let kernel = "__global__ void k(const float *in, float *out, int rows, int cols) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) {
        out[x * rows + y] = in[y * cols + x];
    }
}
";
    let with_dynamic = |bytes: &str| {
        format!(
            "{kernel}{}",
            HOST.replace("dim3(16, 16)>>>", &format!("dim3(16, 16), {bytes}>>>"))
        )
    };
    // 16×17 floats are 1088 bytes: beside 48152 dynamic bytes, 49240.
    let p = propose(&with_dynamic("48 * 1024 - 1000"), [16, 16, 1]);
    assert!(p.candidates.is_empty(), "{:?}", p.candidates[0].description);
    let why: Vec<&str> = p.skipped.iter().map(|s| s.reason.as_str()).collect();
    assert!(
        why.iter().any(|w| w.contains(
            "a 16×17 tile takes 1088 bytes, and with the kernel's 0 bytes of shared memory and the 48152 bytes of dynamic shared memory the launch at line 13 asks for more than 49152"
        )),
        "{why:#?}"
    );
    // Beside 1 KiB it fits.
    assert_eq!(rewrites(&with_dynamic("1024"), [16, 16, 1]).len(), 1);
}
