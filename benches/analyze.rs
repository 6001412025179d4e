//! The bound engine on every `testdata/` kernel: all five built-in metrics
//! at degree 2, for the block shape of the kernel's parameter file, timed
//! from the lowered kernel (jump elimination, facts, bases, LPs) to the
//! bounds. Reports the time per kernel as the median of 7 runs (with the
//! fastest and slowest; `COPPER_BENCH_RUNS=N` for another count) and the
//! largest LP.
//!
//! Run: `cargo bench --bench analyze` (pure-Rust microlp) and
//! `cargo bench --bench analyze --features cbc` (COIN-OR CBC).

mod stats;

use std::path::Path;

use copper::bound::{prepare, Config, Outcome};
use copper::cost::{Metric, BUILTIN_METRICS};
use copper::cuda::parse::parse_path;
use copper::ir::lower::lower_kernel;
use copper::sim::params::ParamFile;

/// Runs per kernel unless `COPPER_BENCH_RUNS` says otherwise.
const RUNS: usize = 7;

fn main() {
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
    let metrics: Vec<Metric> = BUILTIN_METRICS
        .iter()
        .filter_map(|m| Metric::builtin(m))
        .collect();
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
            let vars = bounds.iter().map(|b| b.lp_vars).max().unwrap_or(0);
            let cons = bounds.iter().map(|b| b.lp_constraints).max().unwrap_or(0);
            let bounded = bounds
                .iter()
                .filter(|b| matches!(b.work, Outcome::Bound(_)))
                .count();
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
