//! The bound engine on every `testdata/` kernel: all five built-in metrics
//! at degree 2, for the block shape of the kernel's parameter file, timed
//! from the lowered kernel (jump elimination, facts, bases, LPs) to the
//! bounds. Reports the time per kernel as the median of 7 runs (with the
//! fastest and slowest; `COPPER_BENCH_RUNS=N` for another count) and the
//! largest LP.
//!
//! Then the scaling with the number of sequential loops: generated
//! kernels of 10 to 160 grid-stride loops up to `n` (`seq`), and the same
//! with every eighth loop holding a nested counted loop and every eighth
//! a shared-memory read between barriers (`mix`), at block 256 and grid 4
//! as `copper analyze FILE --block 256 --grid 4` does: the time per kernel
//! and per loop, split into preparing (the abstract interpretation, bases)
//! and the five metrics' LPs (built and solved), with the largest LP.
//!
//! Run: `cargo bench --bench analyze` (pure-Rust microlp) and
//! `cargo bench --bench analyze --features cbc` (COIN-OR CBC);
//! `cargo bench --bench analyze -- loops` for the loop scaling alone
//! (`COPPER_BENCH_LOOPS=10,20,40` for other loop counts).

mod stats;

use std::path::Path;

use copper::bound::{prepare, Config, MetricBound, Outcome};
use copper::cost::{Metric, BUILTIN_METRICS};
use copper::cuda::parse::{parse_path, parse_source};
use copper::ir::lower::lower_kernel;
use copper::launch;
use copper::sim::params::ParamFile;
use copper::source::SourceFile;

/// Runs per kernel unless `COPPER_BENCH_RUNS` says otherwise.
const RUNS: usize = 7;

/// Runs per generated kernel of many loops unless `COPPER_BENCH_RUNS`
/// says otherwise.
const LOOP_RUNS: usize = 3;

/// Loop counts of the generated kernels unless `COPPER_BENCH_LOOPS` says
/// otherwise.
const LOOPS: [usize; 5] = [10, 20, 40, 80, 160];

fn main() {
    let metrics: Vec<Metric> = BUILTIN_METRICS
        .iter()
        .filter_map(|m| Metric::builtin(m))
        .collect();
    if !std::env::args().any(|a| a == "loops") {
        testdata(&metrics);
    }
    loops(&metrics);
}

/// A kernel of `n` sequential grid-stride loops up to `n`; with `mix`,
/// every eighth (from the fourth) holds a counted inner loop and every
/// eighth (from the sixth) reads shared memory between barriers.
fn generated(n: usize, mix: bool) -> String {
    let mut s = String::from(
        "__global__ void k(float *a, const float *b, int n) {\n  __shared__ float s[256];\n  \
         int i0 = blockIdx.x * blockDim.x + threadIdx.x;\n  int st = blockDim.x * gridDim.x;\n  \
         float acc = 0.0f;\n",
    );
    for j in 0..n {
        let body = match j % 8 {
            3 if mix => format!(
                "  for (int i = i0; i < n; i += st) {{ for (int t = 0; t < 8; t++) {{ acc += b[i] * {j}.0f; }} }}\n"
            ),
            5 if mix => format!(
                "  s[threadIdx.x] = b[i0 % n]; __syncthreads();\n  \
                 for (int i = i0; i < n; i += st) {{ acc += s[(threadIdx.x + {j}) % 256]; }}\n  __syncthreads();\n"
            ),
            _ => format!("  for (int i = i0; i < n; i += st) {{ a[i] = a[i] + b[i] * {j}.0f; }}\n"),
        };
        s.push_str(&body);
    }
    s.push_str("  if (i0 < n) a[i0] = acc;\n}\n");
    s
}

/// The analysis of the generated kernels of many sequential loops.
fn loops(metrics: &[Metric]) {
    let runs = stats::runs(LOOP_RUNS);
    let counts: Vec<usize> = match std::env::var("COPPER_BENCH_LOOPS") {
        Ok(v) => v.split(',').filter_map(|c| c.trim().parse().ok()).collect(),
        Err(_) => LOOPS.to_vec(),
    };
    let config = Config {
        block: Some(launch::block([256, 1, 1]).expect("block")),
        grid: Some(launch::grid([4, 1, 1]).expect("grid")),
        ..Config::default()
    };
    println!("sequential loops (block 256, grid 4, {runs} runs: medians in ms):");
    println!(
        "{:<9} {:>10} {:>9} {:>9} {:>9} {:>9} {:>11} {:>8}",
        "kernel", "total", "per loop", "prepare", "LPs", "LP vars", "LP constr", "bounded"
    );
    for mix in [false, true] {
        for &n in &counts {
            let name = format!("{}{n}", if mix { "mix" } else { "seq" });
            let parsed = parse_source(SourceFile::new(format!("{name}.cu"), generated(n, mix)));
            let kernel = lower_kernel(&parsed, "k").expect("lowers");
            let (prep, p) = stats::time(runs, || prepare(&kernel, config));
            let (lps, bounds) = stats::time(runs, || {
                metrics.iter().map(|m| p.bound(m)).collect::<Vec<_>>()
            });
            let total = (prep.median + lps.median) * 1e3;
            let (vars, cons, bounded) = sizes(&bounds);
            println!(
                "{name:<9} {total:>10.1} {:>9.2} {:>9.1} {:>9.1} {vars:>9} {cons:>11} {bounded:>6}/5",
                total / n as f64,
                prep.median * 1e3,
                lps.median * 1e3,
            );
        }
    }
}

/// The bound engine on every `testdata/` kernel with a parameter file.
/// The largest LP's variables and constraints over the metrics' bounds,
/// and how many metrics got a bound.
fn sizes(bounds: &[MetricBound]) -> (usize, usize, usize) {
    let vars = bounds.iter().map(|b| b.lp_vars).max().unwrap_or(0);
    let cons = bounds.iter().map(|b| b.lp_constraints).max().unwrap_or(0);
    let bounded = (bounds.iter())
        .filter(|b| matches!(b.work, Outcome::Bound(_)))
        .count();
    (vars, cons, bounded)
}

fn testdata(metrics: &[Metric]) {
    let runs = stats::runs(RUNS);
    let solver = if cfg!(feature = "cbc") {
        "cbc"
    } else {
        "microlp"
    };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("testdata/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    files.sort();
    println!("analyze ({solver}, degree 2, {runs} runs per kernel: median (min–max)):");
    println!(
        "{:<24} {:>24} {:>7} {:>9} {:>11} {:>8}",
        "kernel", "ms", "bases", "LP vars", "LP constr", "bounded"
    );
    let (mut total, mut worst, mut count) = (0.0, 0.0f64, 0);
    for cu in files {
        let Ok(text) = std::fs::read_to_string(cu.with_extension("toml")) else {
            continue;
        };
        let params = ParamFile::from_toml(&text).expect("parameter file");
        let parsed = parse_path(&cu).expect("readable");
        for (name, spec) in &params.kernel {
            let kernel = lower_kernel(&parsed, name).expect("lowers");
            let config = Config {
                block: Some(spec.shape().expect("shape").block()),
                ..Config::default()
            };
            let (spread, (bases, bounds)) = stats::time(runs, || {
                let p = prepare(&kernel, config);
                let bounds: Vec<_> = metrics.iter().map(|m| p.bound(m)).collect();
                (p.num_bases(), bounds)
            });
            let ms = spread.median * 1e3;
            let (vars, cons, bounded) = sizes(&bounds);
            println!(
                "{name:<24} {:>24} {bases:>7} {vars:>9} {cons:>11} {bounded:>6}/5",
                spread.ms(1)
            );
            total += ms;
            worst = worst.max(ms);
            count += 1;
        }
    }
    println!(
        "{count} kernels: mean {:.1} ms, slowest {worst:.1} ms per kernel (medians, all five metrics)",
        total / count as f64
    );
}
