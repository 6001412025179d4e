//! `copper lint` per kernel: the time to lower, prepare the analysis and
//! produce every finding (no `--witness`), for every kernel of `testdata/`
//! (median of several runs, in-process), then `--witness` on the kernels
//! with data-dependent bank conflicts (the built binary, wall time).
//! Run: `cargo bench --bench lint`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use copper::cuda::parse::parse_path;
use copper::ir::lower::lower_kernel;
use copper::lint::lint_kernel;
use copper_search::launch::{launch_shape, read_params};

const RUNS: usize = 9;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut files: Vec<_> = std::fs::read_dir(root().join("testdata"))
        .expect("testdata")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    files.sort();
    println!("{:<24} {:>10} {:>9}", "kernel", "lint (ms)", "findings");
    let mut worst: (f64, String) = (0.0, String::new());
    let mut kernels = 0;
    for path in &files {
        let parsed = parse_path(path).expect("testdata parses");
        let params = read_params(path, None).ok().flatten();
        for f in parsed.kernels() {
            let spec = params.as_ref().and_then(|p| p.kernel.get(&f.name));
            let shape = launch_shape(None, None, &parsed, spec, &f.name);
            let mut times = Vec::new();
            let mut n = 0;
            for _ in 0..RUNS {
                let start = Instant::now();
                let Ok(k) = lower_kernel(&parsed, &f.name) else {
                    break;
                };
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
                times.push(start.elapsed().as_secs_f64());
                n = l.findings.len();
            }
            if times.is_empty() {
                continue;
            }
            let t = median(times);
            kernels += 1;
            if t > worst.0 {
                worst = (t, f.name.clone());
            }
            println!("{:<24} {:>10.2} {:>9}", f.name, t * 1e3, n);
        }
    }
    println!(
        "{kernels} kernels; slowest {} at {:.2} ms (target: under 100 ms)",
        worst.1,
        worst.0 * 1e3
    );
    for file in ["testdata/histogram256.cu", "testdata/lookup_table.cu"] {
        let times: Vec<f64> = (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                Command::new(env!("CARGO_BIN_EXE_copper"))
                    .args(["lint", "--witness", file])
                    .current_dir(root())
                    .output()
                    .expect("copper runs");
                start.elapsed().as_secs_f64()
            })
            .collect();
        println!(
            "copper lint --witness {file}: {:.1} ms (wall, median; target: under 10 s)",
            median(times) * 1e3
        );
    }
}
