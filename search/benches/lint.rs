//! `copper lint` per kernel: the time to lower, prepare the analysis and
//! produce every finding (no `--witness`), for every kernel of `testdata/`
//! (in-process), then `--witness` on the kernels with data-dependent bank
//! conflicts (the built binary, wall time). Each figure is the median of 9
//! runs with the fastest and slowest (`COPPER_BENCH_RUNS=N` for another
//! count).
//! Run: `cargo bench --bench lint`.

#[path = "../../benches/stats/mod.rs"]
mod stats;

use std::path::{Path, PathBuf};
use std::process::Command;

use copper::cuda::parse::parse_path;
use copper::ir::lower::lower_kernel;
use copper::lint::lint_kernel;
use copper_search::launch::{launch_shape, read_params};

/// Runs per figure unless `COPPER_BENCH_RUNS` says otherwise.
const RUNS: usize = 9;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn main() {
    let runs = stats::runs(RUNS);
    let mut files: Vec<_> = std::fs::read_dir(root().join("testdata"))
        .expect("testdata")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    files.sort();
    println!("lint, {runs} runs per kernel: median (min–max)");
    println!("{:<24} {:>22} {:>9}", "kernel", "lint (ms)", "findings");
    let mut worst: (f64, String) = (0.0, String::new());
    let mut kernels = 0;
    for path in &files {
        let parsed = parse_path(path).expect("testdata parses");
        let params = read_params(path, None).ok().flatten();
        for f in parsed.kernels() {
            let spec = params.as_ref().and_then(|p| p.kernel.get(&f.name));
            let shape = launch_shape(None, None, &parsed, spec, &f.name);
            if lower_kernel(&parsed, &f.name).is_err() {
                continue;
            }
            let (spread, n) = stats::time(runs, || {
                let k = lower_kernel(&parsed, &f.name).expect("lowered once already");
                let l = lint_kernel(
                    &k,
                    copper::bound::Config {
                        hw: Default::default(),
                        block: shape.block,
                        grid: shape.grid,
                        ..Default::default()
                    },
                    None,
                );
                l.findings.len()
            });
            let t = spread.median;
            kernels += 1;
            if t > worst.0 {
                worst = (t, f.name.clone());
            }
            println!("{:<24} {:>22} {:>9}", f.name, spread.ms(2), n);
        }
    }
    println!(
        "{kernels} kernels; slowest {} at {:.2} ms median (target: under 100 ms)",
        worst.1,
        worst.0 * 1e3
    );
    for file in ["testdata/histogram256.cu", "testdata/lookup_table.cu"] {
        let (spread, ()) = stats::time(runs, || {
            Command::new(env!("CARGO_BIN_EXE_copper"))
                .args(["lint", "--witness", file])
                .current_dir(root())
                .output()
                .expect("copper runs");
        });
        println!(
            "copper lint --witness {file}: {} ms (wall, median (min–max); target: under 10 s)",
            spread.ms(1)
        );
    }
}
