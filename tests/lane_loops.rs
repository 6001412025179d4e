//! Warp-per-row kernels (`for (c = lane; c < cols; c += 32)`): the bound
//! copper gives with the parameter file's block, against the simulated
//! worst warp at several row lengths. The bound must never be below the
//! simulation and stay within a stated factor of it: for the whole-warp
//! kernels, one iteration per loop for the worst lane (`⌈cols/32⌉`) and
//! coalesced row accesses.
//!
//! `cargo test --release --test lane_loops -- --nocapture` prints the
//! table.

mod common;

use common::{measure, testdata_kernel, Measured};
use copper::bound::{prepare, Config, Outcome};
use copper::cost::Metric;

/// A kernel, the arrays sized `rows·cols`, and the most the bound may be
/// above the simulated worst warp from 100 columns on, per metric (below,
/// the rounding up to a whole iteration and an unknown alignment of the
/// row, one sector more per access, weigh more).
struct Case {
    file: &'static str,
    kernel: &'static str,
    matrices: &'static [&'static str],
    limits: &'static [(&'static str, f64)],
}

const CASES: [Case; 3] = [
    Case {
        file: "warp_softmax.cu",
        kernel: "warp_softmax",
        matrices: &["x", "y"],
        limits: &[("steps", 1.1), ("sectors", 1.35)],
    },
    Case {
        file: "row_sum_lanes.cu",
        kernel: "row_sum_warp",
        matrices: &["a"],
        limits: &[("steps", 1.1), ("sectors", 1.35)],
    },
    // Groups of 8 lanes: not affine in the lane, so each access is charged
    // as uncoalesced (up to 32 sectors where 8 are read).
    Case {
        file: "row_sum_lanes.cu",
        kernel: "row_sum_group<8>",
        matrices: &["a"],
        limits: &[("steps", 2.5), ("sectors", 8.5)],
    },
];

#[test]
fn lane_loops_are_bounded_by_their_worst_lane() {
    let mut failures = Vec::new();
    println!("| kernel | metric | bound | simulated / bound at cols = |");
    println!("|---|---|---|---|");
    for c in &CASES {
        let (kernel, base, shape) = testdata_kernel(c.file, c.kernel);
        let prep = prepare(
            &kernel,
            Config {
                block: Some(shape.block()),
                grid: Some(shape.grid()),
                ..Config::default()
            },
        );
        for &(name, limit) in c.limits {
            let metric = Metric::builtin(name).unwrap();
            let Outcome::Bound(bound) = prep.bound(&metric).work else {
                failures.push(format!("{} {name}: no bound", c.kernel));
                continue;
            };
            let mut cells = Vec::new();
            for cols in [1u64, 31, 32, 33, 100, 1000] {
                let mut spec = base.clone();
                spec.args.insert("cols".into(), cols as f64);
                let rows = spec.args["rows"] as u64;
                for m in c.matrices {
                    spec.arrays.get_mut(*m).unwrap().len = rows * cols;
                }
                let Measured {
                    simulated: sim,
                    bound: b,
                    ..
                } = measure(&kernel, &spec, &metric, &bound);
                if sim > b + 1e-6 {
                    failures.push(format!(
                        "{} {name} at cols = {cols}: simulated {sim} above the bound {b}",
                        c.kernel
                    ));
                }
                if cols >= 100 && b > limit * sim {
                    failures.push(format!(
                        "{} {name} at cols = {cols}: bound {b} more than {limit}× the simulated {sim}",
                        c.kernel
                    ));
                }
                cells.push(format!("{cols}: {sim} / {b:.0}"));
            }
            println!("| {} | {name} | {bound} | {} |", c.kernel, cells.join("; "));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
