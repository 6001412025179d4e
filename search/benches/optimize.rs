//! `copper optimize` end to end (the built binary: reading, analysis,
//! candidates, checks, output), on
//!
//! - the evaluation set of COpPER Table 1 as reproduced in `testdata/`:
//!   each kernel alone (what was found, the bound before and after, wall
//!   time), then all eight in one run;
//! - all of `testdata/` as a batch, with 1 and 2 worker threads: kernels/s.
//!
//! Every time is the median of 5 runs, with the fastest and slowest
//! (`COPPER_BENCH_RUNS=N` for another count). Run: `cargo bench --bench
//! optimize`.

#[path = "../../benches/stats/mod.rs"]
mod stats;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

/// Runs per figure unless `COPPER_BENCH_RUNS` says otherwise.
const RUNS: usize = 5;

#[path = "../tests/shared/table_1.rs"]
mod table_1;
use table_1::TABLE_1;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `copper optimize ARGS`; the JSON document and the wall time.
fn optimize(args: &[String]) -> (Value, f64) {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_copper"))
        .arg("optimize")
        .args(["--format", "json"])
        .args(args)
        .current_dir(root())
        .output()
        .expect("copper runs");
    let seconds = start.elapsed().as_secs_f64();
    let doc = serde_json::from_slice(&out.stdout).expect("JSON output");
    (doc, seconds)
}

/// The spread of `runs` runs' wall times, and the last run's output.
fn median_run(runs: usize, args: &[String]) -> (Value, stats::Spread) {
    let mut times = Vec::new();
    let mut doc = Value::Null;
    for _ in 0..runs.max(1) {
        let (d, t) = optimize(args);
        doc = d;
        times.push(t);
    }
    (doc, stats::Spread::of(times).expect("one run at least"))
}

fn main() {
    let runs = stats::runs(RUNS);
    println!(
        "copper optimize, Table 1 of 002 (wall time of the whole command, ms: median (min–max) of {runs} runs):"
    );
    println!(
        "{:<16} {:<46} {:<22} {:<32} {:>16}",
        "benchmark", "applied", "wsteps before", "after", "time (ms)"
    );
    let mut all = Vec::new();
    for (name, file) in TABLE_1 {
        let path = format!("testdata/{file}.cu");
        let (doc, t) = median_run(runs, std::slice::from_ref(&path));
        all.push(path);
        let k = &doc["kernels"][0];
        let applied: Vec<&str> = k["applied"]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x["transform"].as_str()).collect())
            .unwrap_or_default();
        let wsteps = &k["bounds"][0];
        let after = if applied.is_empty() {
            "-"
        } else {
            wsteps["after"].as_str().unwrap_or("?")
        };
        println!(
            "{:<16} {:<46} {:<22} {:<32} {:>16}",
            name,
            if applied.is_empty() {
                "none".to_string()
            } else {
                applied.join(", ")
            },
            wsteps["before"].as_str().unwrap_or("?"),
            after,
            t.ms(0)
        );
    }
    let (_, t) = median_run(runs, &all);
    println!("all eight in one run: {} s", t.s(2));
    println!();
    println!(
        "batch: all of testdata/ (s: median (min–max) of {runs} runs; kernels/s at the median):"
    );
    for jobs in [1, 2] {
        let args = vec!["testdata".to_string(), "--jobs".into(), jobs.to_string()];
        let (doc, t) = median_run(runs, &args);
        let kernels = doc["kernels"].as_array().cloned().unwrap_or_default();
        let searched = kernels.iter().filter(|k| k["status"] != "error").count();
        println!(
            "  {jobs} thread(s): {} kernels ({searched} searched, {} unreadable) in {} s, {:.1} kernels/s",
            kernels.len(),
            kernels.len() - searched,
            t.s(2),
            kernels.len() as f64 / t.median
        );
    }
}
