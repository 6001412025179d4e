//! A rewrite copper offers for a kernel whose launch it does not know
//! must be right for every launch the original handles: the search may
//! steer by the block it assumes, but the code it offers may not depend
//! on it unless it says so in the code (a guard on the block).
//!
//! For every `testdata/` kernel (and the students' files), searched as if
//! its file launched nothing and it had no parameter file, the offered
//! version is simulated against the original on launches of twelve block
//! shapes (one- and two-dimensional, 32 to 1024 threads, odd ones among
//! them), each at the sizes the checker synthesizes around the block (a
//! partial last block, sizes above the block and above any constant of
//! the kernel): wherever the original runs cleanly, the arrays must be
//! the same bit for bit. `COPPER_EVERY_CALLER_FILES=N` takes only the
//! first N files (all by default); `COPPER_EVERY_CALLER_SEEDS=N` also
//! checks each synthesized launch with N other seeds of its random data
//! (and the variants the checker makes of each), for long runs. A second
//! test does the same for kernels generated in the shapes the transforms
//! match (`COPPER_EVERY_CALLER_GENERATED=N` of them, 28 by default). The
//! checker also runs each rewrite with the halves of every warp one after
//! the other, on the launch with the largest blocks. Template kernels are
//! checked by instantiation, on the blocks their launches give them and
//! others (see `every_caller/templates.rs`).

use std::path::{Path, PathBuf};

use copper::bound::Config;
use copper::cost::{Hardware, Metric, BUILTIN_METRICS};
use copper::cuda::ast::Function;
use copper::cuda::parse::{parse_path, parse_source, ParsedFile};
use copper::cuda::relaunch::Reshape;
use copper::ir::lower::lower_kernel;
use copper::ir::Kernel;
use copper::sim::params::{InitKind, LaunchSpec};
use copper::sim::test_launch::synthesized;
use copper::source::SourceFile;
use copper_search::launch::{assume_block, launch_shape, FIT_STEPS};
use copper_search::pipeline::{optimize_target, Cache, Settings, Target};
use copper_search::rank::{Ranking, DEFAULT_EPSILON};
use copper_transforms::check::{Checker, Terms};
use rayon::prelude::*;
use rows::generated_rows;

#[path = "every_caller/big_shared.rs"]
mod big_shared;

#[path = "every_caller/global_tree.rs"]
mod global_tree;

#[path = "every_caller/windows.rs"]
mod windows;

#[path = "every_caller/templates.rs"]
mod templates;

#[path = "every_caller/headers.rs"]
mod headers;

#[path = "every_caller/relaunched.rs"]
mod relaunched;
#[path = "every_caller/rows.rs"]
mod rows;
#[path = "every_caller/written.rs"]
mod written;

/// Block shapes every offered rewrite is checked on.
const SHAPES: [[u64; 3]; 12] = [
    [32, 1, 1],
    [96, 1, 1],
    [128, 1, 1],
    [256, 1, 1],
    [512, 1, 1],
    [1024, 1, 1],
    [1, 32, 1],
    [8, 8, 1],
    [24, 4, 1],
    [16, 16, 1],
    [32, 8, 1],
    [32, 32, 1],
];

fn cu_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    files.sort();
    files
}

/// The search's settings with the built-in metrics, ranked by `wsteps`.
fn settings() -> Settings {
    let metrics: Vec<Metric> = BUILTIN_METRICS
        .iter()
        .filter_map(|m| Metric::builtin(m))
        .collect();
    let rank_metric = metrics.iter().position(|m| m.name == "wsteps").unwrap();
    Settings {
        config: Config::default(),
        metrics,
        rank_metric,
        ranking: Ranking::Asymptotic {
            epsilon: DEFAULT_EPSILON,
        },
        transforms: copper_transforms::all(),
        compiler: None,
        allow_reassociation: false,
        max_check_steps: copper_transforms::check::SEARCH_CHECK_STEPS,
    }
}

/// The file as if it launched nothing.
fn without_launches(path: &Path) -> ParsedFile {
    let mut file = parse_path(path).unwrap();
    file.launches.clear();
    file
}

#[test]
fn a_rewrite_for_an_assumed_block_is_right_for_every_block() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let mut files = cu_files(&root);
    files.extend(cu_files(&root.join("students")));
    let limit = std::env::var("COPPER_EVERY_CALLER_FILES")
        .ok()
        .and_then(|n| n.parse().ok());
    files.truncate(limit.unwrap_or(usize::MAX));
    let rewrites = check_files(&files, "files");
    assert!(
        rewrites >= 10 || limit.is_some(),
        "only {rewrites} rewrites offered"
    );
}

/// Checks every kernel's rewrites in `files` (`what` they are) on every block; the rewrites.
fn check_files(files: &[PathBuf], what: &str) -> usize {
    let (settings, cache) = (settings(), Cache::default());
    let check = |path: &PathBuf| check_file(path, &settings, &cache);
    let found: Vec<Found> = files.par_iter().flat_map_iter(check).collect();
    report(&found, &format!("{} {what}", files.len()))
}

/// The number the environment variable `var` sets (how many generated
/// kernels a family checks), or `default`.
fn count(var: &str, default: u64) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// Prints what `found` checked (of `what`) and fails on anything wrong;
/// returns the number of rewrites.
fn report(found: &[Found], what: &str) -> usize {
    let rewrites = found.len();
    let shapes_run: usize = found.iter().map(|f| f.blocks).sum();
    let triples: usize = found.iter().map(|f| f.launches).sum();
    let wrong: Vec<&str> = found
        .iter()
        .flat_map(|f| &f.wrong)
        .map(|w| w.as_str())
        .collect();
    println!(
        "{rewrites} rewrites of {what} checked on {shapes_run} (rewrite, block) pairs: {triples} (rewrite, shape, size) launches"
    );
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    rewrites
}

/// The same promise over generated kernels in the shapes the transforms
/// match (see [`generated`]): `COPPER_EVERY_CALLER_GENERATED=N` kernels
/// (28 by default), each searched as if nothing launched it.
#[test]
fn rewrites_of_generated_kernels_are_right_for_every_block() {
    let n: u64 = count("COPPER_EVERY_CALLER_GENERATED", 28);
    let settings = settings();
    let cache = Cache::default();
    let found: Vec<Found> = (0..n)
        .into_par_iter()
        .flat_map_iter(|seed| {
            let src = generated(seed);
            let file = parse_source(SourceFile::new(format!("generated-{seed}.cu"), &src));
            check_kernels(&file, &settings, &cache)
        })
        .collect();
    let rewrites = report(&found, &format!("{n} generated kernels"));
    assert!(
        rewrites >= n as usize / 4,
        "only {rewrites} rewrites offered"
    );
    let tiled = found
        .iter()
        .filter(|f| f.applied.contains(&"tiled matrix multiply"))
        .count();
    println!("{tiled} of them tiled matrix multiplies");
    assert!(
        n < 6 || tiled * 6 >= n as usize / 2,
        "only {tiled} of {n} generated kernels (one in six a matrix product) got tiled"
    );
}

/// The same promise over generated kernels that read a whole table in
/// every thread (`COPPER_EVERY_CALLER_TABLES=N` of them, 6 by default;
/// see [`generated_table`]): at least one in two must get the cooperative
/// load, and every rewrite must be right on every block.
#[test]
fn cooperative_loads_of_generated_tables_are_right_for_every_block() {
    let n: u64 = count("COPPER_EVERY_CALLER_TABLES", 6);
    let settings = settings();
    let cache = Cache::default();
    let found: Vec<Found> = (0..n)
        .into_par_iter()
        .flat_map_iter(|seed| {
            let src = generated_table(seed);
            let file = parse_source(SourceFile::new(format!("table-{seed}.cu"), &src));
            check_kernels(&file, &settings, &cache)
        })
        .collect();
    report(&found, &format!("{n} generated table kernels"));
    let coop = found
        .iter()
        .filter(|f| f.applied.contains(&"cooperative load"))
        .count();
    println!("{coop} of them cooperative loads");
    assert!(
        coop * 2 >= n as usize,
        "only {coop} of {n} generated table kernels got a cooperative load"
    );
}

/// The same promise over generated kernels that give each thread a
/// contiguous run of elements (`COPPER_EVERY_CALLER_CHUNKS=N` of them, 8
/// by default; see [`generated_chunks`]): at least one in two must get
/// interleaved, and every rewrite must be right on every block, at sizes
/// that leave the last run or the last block partial.
#[test]
fn interleaved_chunks_of_generated_kernels_are_right_for_every_block() {
    let n: u64 = count("COPPER_EVERY_CALLER_CHUNKS", 8);
    let settings = settings();
    let cache = Cache::default();
    let found: Vec<Found> = (0..n)
        .into_par_iter()
        .flat_map_iter(|seed| {
            let src = generated_chunks(seed);
            let file = parse_source(SourceFile::new(format!("chunks-{seed}.cu"), &src));
            check_kernels(&file, &settings, &cache)
        })
        .collect();
    report(&found, &format!("{n} generated chunk kernels"));
    let interleaved = found
        .iter()
        .filter(|f| f.applied.contains(&"chunk interleaving"))
        .count();
    println!("{interleaved} of them interleaved");
    assert!(
        interleaved * 2 >= n as usize,
        "only {interleaved} of {n} generated chunk kernels got interleaved"
    );
}

/// Kernel `seed` whose threads each handle `C` consecutive elements
/// (`idx * C + k`, `C` a macro or a parameter): unguarded, under `if (idx
/// < m)`, after `if (idx >= m) return;`, or with a per-element guard
/// `if (idx * C + k < n)`; the element index written out, copied into
/// a local, or a start index plus `k`; an array written from another or
/// updated in place.
fn generated_chunks(seed: u64) -> String {
    let mut r = Rng(seed.wrapping_mul(0x6a09_e667_f3bc_c909) ^ 0xc4a1);
    let ty = r.pick(&["int", "float", "unsigned"]);
    let (define, c, cparam) = r.pick(
        &[
            &("#define C 4\n", "C", ""),
            &("#define C 5\n", "C", ""),
            &("", "c", ", int c"),
        ][..],
    );
    let idx = r.pick(&[
        "blockIdx.x * blockDim.x + threadIdx.x",
        "threadIdx.x + blockDim.x * blockIdx.x",
    ]);
    let el = format!("idx * {c} + k");
    let (start, copy, at) = match r.below(3) {
        0 => (
            String::new(),
            format!("int j = {el};\n            "),
            "j".to_string(),
        ),
        1 => (String::new(), String::new(), el.clone()),
        _ => (
            format!("\n    int start = idx * {c};"),
            String::new(),
            "start + k".to_string(),
        ),
    };
    let work = r
        .pick(&[
            "out[{at}] = in[{at}] * 3 + 1;",
            "out[{at}] += in[{at}];",
            "out[{at}] = in[{at}] > 2 ? in[{at}] : 2;",
        ])
        .replace("{at}", &at);
    let (open, close) = r.pick(
        &[
            &("", ""),
            &("if (idx < m) {", "}"),
            &("if (idx >= m) return;", ""),
        ][..],
    );
    let tested = if start.is_empty() { &el } else { &at };
    let guard = r.pick(&["", "if ({el} < n)"]).replace("{el}", tested);
    format!(
        "{define}__global__ void k(const {ty} *in, {ty} *out, int m, int n{cparam}) {{
    int idx = {idx};{start}
    {open}
    for (int k = 0; k < {c}; k++) {{
        {guard} {{
            {copy}{work}
        }}
    }}
    {close}
}}
"
    )
}

/// Kernel `seed` reading a `#define`-sized table (`w[j]` or `w[j + off]`,
/// from 0 or 3) whole in every thread, in a Horner step or a weighted
/// sum, under `if (i < n)`, after `if (i >= n) return;`, or unguarded.
fn generated_table(seed: u64) -> String {
    let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x7ab1e);
    let ty = r.pick(&["int", "float", "unsigned"]);
    let taps = r.pick(&["32", "48", "100"]);
    let start = r.pick(&["0", "3"]);
    let (param, off) = r.pick(&[&("", ""), &(", int off", " + off")][..]);
    let step = r
        .pick(&["acc = acc * v + w[j{off}];", "acc += w[j{off}] * v;"])
        .replace("{off}", off);
    let (open, close) = r.pick(
        &[
            &("if (i < n) {", "}"),
            &("if (i >= n) return;\n    {", "}"),
            &("{", "}"),
        ][..],
    );
    format!(
        "#define TAPS {taps}
__global__ void k(const {ty} *w, const {ty} *x, {ty} *y, int n{param}) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    {open}
        {ty} v = x[i];
        {ty} acc = 0;
        for (int j = {start}; j < {start} + TAPS; j++) {{
            {step}
        }}
        y[i] = acc;
    {close}
}}
"
    )
}

/// The same promise over generated kernels that give each thread a row
/// to reduce (`COPPER_EVERY_CALLER_ROWS=N` of them, 8 by default; see
/// [`generated_rows`]): at least one in two must get one warp per row,
/// and every rewrite must be right on every block (block x not a multiple
/// of 32, 2-D blocks, grids smaller and larger than the rows), integers
/// and maxima bit for bit, floating-point sums within the reassociation
/// tolerance.
#[test]
fn warp_per_row_of_generated_kernels_is_right_for_every_block() {
    let n: u64 = count("COPPER_EVERY_CALLER_ROWS", 8);
    let settings = Settings {
        allow_reassociation: true,
        ..settings()
    };
    let cache = Cache::default();
    let found: Vec<Found> = (0..n)
        .into_par_iter()
        .flat_map_iter(|seed| {
            let src = generated_rows(seed);
            let file = parse_source(SourceFile::new(format!("rows-{seed}.cu"), &src));
            check_kernels(&file, &settings, &cache)
        })
        .collect();
    report(&found, &format!("{n} generated row kernels"));
    let rewritten = found
        .iter()
        .filter(|f| f.applied.contains(&"one warp per row"))
        .count();
    println!("{rewritten} of them got one warp per row");
    assert!(
        rewritten * 2 >= n as usize,
        "only {rewritten} of {n} generated row kernels got one warp per row"
    );
}

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn pick<'a, T: ?Sized>(&mut self, xs: &[&'a T]) -> &'a T {
        xs[(self.next() % xs.len() as u64) as usize]
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Kernel `seed` of eight families in the shapes the transforms match,
/// with their block-dependent constants, types, operators and guards
/// drawn at random: divergent branches with a common loop (branch
/// distribution, thread remapping), tree reductions (warp shuffle; also
/// written as `while` loops, the barrier first or last), every thread's
/// `atomicAdd` on one counter (warp-aggregated atomics),
/// tiles read across their rows (padding, staged transposes), loops
/// re-reading a per-thread value (load hoisting), and row/column splits
/// of a flat index (split exchange), and matrix products whose reduction
/// loop reads a row of one matrix and a column of another (tiled matrix
/// multiply).
fn generated(seed: u64) -> String {
    let mut r = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0xc0ffee);
    match seed % 8 {
        0 => {
            let m = 2 + r.below(3);
            let (op1, op2) = (r.pick(&["+=", "-=", "^="]), r.pick(&["+=", "-=", "|="]));
            let index = r.pick(&["j * w + i", "i * h + j"]);
            let guard = r.pick(&["", "if (j >= h) return;"]);
            format!(
                "__global__ void k(int *A, int *B, int w, int h) {{
    for (int i = 0; i < w; i++) {{
        int j = blockIdx.x * blockDim.x + threadIdx.x;
        {guard}
        if (j % {m} == {}) {{
            B[{index}] {op1} A[i];
        }} else {{
            B[{index}] {op2} A[i] * 3;
        }}
    }}
}}
",
                r.below(m)
            )
        }
        1 => {
            let block = 64 << r.below(4);
            let ty = r.pick(&["int", "unsigned", "float"]);
            let start = r.pick(&["blockDim.x / 2", "BLOCK / 2"]);
            let step = r.pick(&[
                "if (tid < s) sdata[tid] += sdata[tid + s];",
                "if (tid < s) sdata[tid] = max(sdata[tid], sdata[tid + s]);",
            ]);
            format!(
                "#define BLOCK {block}
__global__ void k(const {ty} *in, {ty} *out, int n) {{
    __shared__ {ty} sdata[BLOCK];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + tid;
    sdata[tid] = i < n ? in[i] : ({ty})0;
    __syncthreads();
    for (unsigned s = {start}; s > 0; s >>= 1) {{
        {step}
        __syncthreads();
    }}
    if (tid == 0) out[blockIdx.x] = sdata[0];
}}
"
            )
        }
        2 => {
            let tile = 8 << r.below(3);
            let scale = r.pick(&["", " * 2.0f", " + 1.0f"]);
            let guard = r.pick(&["x < n && y < n", "y < n && x < n"]);
            format!(
                "#define TILE {tile}
__global__ void k(float *out, const float *in, int n) {{
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if ({guard}) tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    if ({guard}) out[y * n + x] = tile[threadIdx.x][threadIdx.y]{scale};
}}
"
            )
        }
        3 => {
            let extra = r.pick(&["", " + bias[r]", " - bias[r] * 2.0f"]);
            let guard = r.pick(&["if (r < rows)", "if (r >= rows) return;"]);
            format!(
                "__global__ void k(float *out, const float *in, const float *factor, const float *bias, int rows, int cols) {{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    {guard} {{
        for (int c = 0; c < cols; c++) {{
            out[r * cols + c] = in[r * cols + c] * factor[r]{extra};
        }}
    }}
}}
"
            )
        }
        5 => {
            let ty = r.pick(&["int", "float", "double"]);
            let (m, n, kk) = r.pick(&[&("M", "N", "K"), &("n", "n", "n")][..]);
            let params = if *m == "n" {
                "int n".to_string()
            } else {
                "int M, int N, int K".into()
            };
            let row = r.pick(&[
                "blockIdx.y * blockDim.y + threadIdx.y",
                "threadIdx.y + blockIdx.y * TILE",
            ]);
            let col = r.pick(&[
                "blockIdx.x * blockDim.x + threadIdx.x",
                "blockIdx.x * TILE + threadIdx.x",
            ]);
            let a = r
                .pick(&["A[row * {K} + k]", "A[k + row * {K}]"])
                .replace("{K}", kk);
            let b = r
                .pick(&["B[k * {N} + col]", "B[col * {K} + k]"])
                .replace("{N}", n)
                .replace("{K}", kk);
            let guard = r
                .pick(&["row < {M} && col < {N}", "col < {N} && row < {M}"])
                .replace("{M}", m)
                .replace("{N}", n);
            let body = if r.below(2) == 0 {
                format!("{ty} sum = 0;\n        for (int k = 0; k < {kk}; k++)\n            sum += {a} * {b};\n        C[row * {n} + col] = sum;")
            } else {
                format!(
                    "for (int k = 0; k < {kk}; ++k)\n            C[row * {n} + col] += {a} * {b};"
                )
            };
            format!(
                "#define TILE {}
__global__ void k(const {ty} *A, const {ty} *B, {ty} *C, {params}) {{
    int row = {row};
    int col = {col};
    if ({guard}) {{
        {body}
    }}
}}
",
                8 << r.below(2)
            )
        }
        6 => {
            let block = 64 << r.below(4);
            let ty = r.pick(&["int", "unsigned", "float"]);
            let cond = r.pick(&["i != 0", "i > 0"]);
            let step = r.pick(&["i /= 2;", "i >>= 1;"]);
            let update = "if (tid < i) cache[tid] += cache[tid + i];";
            let body = match r.below(2) {
                0 => format!("{update}\n        __syncthreads();\n        {step}"),
                _ => format!("__syncthreads();\n        {update}\n        {step}"),
            };
            format!(
                "#define N {block}
__global__ void k(const {ty} *a, {ty} *out, int n) {{
    __shared__ {ty} cache[N];
    int tid = threadIdx.x;
    int g = blockIdx.x * blockDim.x + tid;
    cache[tid] = g < n ? a[g] : ({ty})0;
    __syncthreads();
    int i = blockDim.x / 2;
    while ({cond}) {{
        {body}
    }}
    if (tid == 0) out[blockIdx.x] = cache[0];
}}
"
            )
        }
        7 => {
            let ty = r.pick(&["int", "unsigned", "unsigned long long"]);
            let term = r.pick(&["1", "in[i]", "in[i] % 7"]);
            let guard = r.pick(&["i < n", "i < n && in[i] > 3", "i < n && (in[i] & 1)"]);
            let address = r.pick(&["total", "&total[blockIdx.x % 4]", "total + 1"]);
            format!(
                "__global__ void k(const {ty} *in, {ty} *total, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if ({guard}) {{
        atomicAdd({address}, ({ty})({term}));
    }}
}}
"
            )
        }
        _ => {
            let op = r.pick(&["* 2.0f", "+ 1.0f", "* a[col * H + row]"]);
            format!(
                "__global__ void k(float *a, float *b, int W, int H) {{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int row = idx / W;
    int col = idx % W;
    if (idx < W * H) {{
        b[col * H + row] = a[col * H + row] {op};
    }}
}}
"
            )
        }
    }
}

/// One offered rewrite, checked on every block of [`SHAPES`].
struct Found {
    /// Blocks the original runs cleanly on.
    blocks: usize,
    /// Launches of those blocks the rewrite was compared on.
    launches: usize,
    /// What differed, one line each.
    wrong: Vec<String>,
    /// The transforms of the rewrite.
    applied: Vec<&'static str>,
    /// Whether it sums floating-point values in another order (compared
    /// within a tolerance; otherwise bit for bit).
    reassociated: bool,
    /// How it changes the launch, if it does (it runs on each launch so
    /// changed, the original on the launch as it is).
    reshape: Option<Reshape>,
    /// The rewritten file, as copper prints it.
    text: String,
}

/// Every rewrite copper offers for the non-template kernels of `path`,
/// searched as if the file launched nothing, checked on every block.
fn check_file(path: &Path, settings: &Settings, cache: &Cache) -> Vec<Found> {
    check_kernels(&without_launches(path), settings, cache)
}

/// Every rewrite copper offers for the non-template kernels of `file`
/// (which launches nothing), checked on every block.
fn check_kernels(file: &ParsedFile, settings: &Settings, cache: &Cache) -> Vec<Found> {
    check_kernels_on(file, settings, cache, &SHAPES)
}

/// [`check_kernels`] on the blocks `shapes`.
fn check_kernels_on(
    file: &ParsedFile,
    settings: &Settings,
    cache: &Cache,
    shapes: &[[u64; 3]],
) -> Vec<Found> {
    check_kernels_varied(file, settings, cache, shapes, &|_| Vec::new())
}

/// [`check_kernels_on`], each block also on the launches `more` makes of
/// the synthesized ones.
fn check_kernels_varied(
    file: &ParsedFile,
    settings: &Settings,
    cache: &Cache,
    shapes: &[[u64; 3]],
    more: &(dyn Fn(LaunchSpec) -> Vec<LaunchSpec> + Sync),
) -> Vec<Found> {
    let names: Vec<(String, Vec<[u64; 3]>)> = file
        .kernels()
        .filter(|f| f.template.is_none())
        .map(|f| (f.name.clone(), shapes.to_vec()))
        .collect();
    check_named(file, settings, cache, &names, more)
}

/// The other instantiations in `file` of the template that kernel `name`
/// instantiates (none for a kernel that is no instantiation).
fn siblings(file: &ParsedFile, name: &str) -> Vec<String> {
    let template = |f: &Function| {
        f.template
            .as_ref()
            .filter(|t| !t.args.is_empty())
            .map(|t| t.name.clone())
    };
    let Some(mine) = file.function(name).and_then(template) else {
        return Vec::new();
    };
    file.kernels()
        .filter(|f| f.name != name && template(f).as_ref() == Some(&mine))
        .map(|f| f.name.clone())
        .collect()
}

/// Kernel `name` of `file`, lowered, and as the search's target: its
/// launch's shape from the file, or an assumed block.
fn searched(file: &ParsedFile, name: &str) -> Option<(Kernel, Target)> {
    let kernel = lower_kernel(file, name).ok()?;
    let shape = assume_block(
        file,
        &kernel,
        launch_shape(None, None, file, None, name),
        &std::sync::Arc::new(copper::sim::work::Work::new(FIT_STEPS)),
    );
    Some((kernel, Target::new(name, None, shape)))
}

/// Every rewrite copper offers for the kernels `names` of `file` (each
/// with the blocks it is checked on), searched with the launch shape the
/// file gives each (none: an assumed block), checked on each of its
/// blocks at the synthesized launches and those `more` makes of them.
fn check_named(
    file: &ParsedFile,
    settings: &Settings,
    cache: &Cache,
    names: &[(String, Vec<[u64; 3]>)],
    more: &(dyn Fn(LaunchSpec) -> Vec<LaunchSpec> + Sync),
) -> Vec<Found> {
    let file = file.clone();
    let path = file.source.path.clone();
    let mut out = Vec::new();
    let target = |name: &str| searched(&file, name);
    for (name, shapes) in names {
        let name = name.clone();
        let Some((kernel, searched)) = target(&name) else {
            continue;
        };
        let shape = searched.shape.clone();
        // A template's rewrite holds for its other instantiations too.
        let others: Vec<Target> = siblings(&file, &name)
            .iter()
            .filter_map(|n| Some(target(n)?.1))
            .collect();
        let Ok(result) = optimize_target(&file, &file, &searched, Ok(&others), settings, cache)
        else {
            continue;
        };
        if !result.improved() {
            continue;
        }
        let applied: Vec<&'static str> = result.applied.iter().map(|a| a.transform).collect();
        let mut found = Found {
            blocks: 0,
            launches: 0,
            wrong: Vec::new(),
            applied: applied.clone(),
            reassociated: result.best.lineage.reassociated,
            reshape: result.best.lineage.reshape(),
            text: result.best.file.source.text.clone(),
        };
        let seeds: u64 = count("COPPER_EVERY_CALLER_SEEDS", 0);
        for &block in shapes {
            let block = copper::launch::block(block).expect("a block CUDA runs");
            let measure = |base: Option<&LaunchSpec>| {
                Checker::measuring(
                    &file,
                    &name,
                    base,
                    Some(block),
                    None,
                    Hardware::default(),
                    vec![],
                )
            };
            // The synthesized launches, then each with other random data.
            let mut checkers = vec![measure(None)];
            for spec in synthesized(&kernel, block).into_iter().flat_map(more) {
                checkers.push(measure(Some(&spec)));
            }
            for seed in 1..=seeds {
                for mut spec in synthesized(&kernel, block) {
                    for a in spec
                        .arrays
                        .values_mut()
                        .filter(|a| a.init == InitKind::Random)
                    {
                        a.seed = a.seed.wrapping_mul(1_000_003).wrapping_add(seed);
                    }
                    checkers.push(measure(Some(&spec)));
                }
            }
            // Where the original does not run cleanly there is nothing to
            // compare.
            let checkers: Vec<Checker> = checkers.into_iter().flatten().collect();
            if !checkers.is_empty() {
                found.blocks += 1;
            }
            for checker in checkers {
                found.launches += checker.launches();
                let terms = Terms {
                    reassociated: result.best.lineage.reassociated,
                    reshape: result.best.lineage.reshape(),
                    ..Terms::default()
                };
                if let Err(e) = checker.check_kernel(&result.best.kernel, terms) {
                    found.wrong.push(format!(
                        "{}: `{name}` rewritten for {:?} ({}): block {block:?}: {e}",
                        path.display(),
                        shape.block,
                        applied.join(", ")
                    ));
                }
            }
        }
        out.push(found);
    }
    out
}
