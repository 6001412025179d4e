//! Precision against the published RaCUDA bounds (`000_…` Tables 3–6):
//! for the kernels of the paper that `testdata/` reproduces, copper's
//! per-warp bound is never looser than the published one at any size where
//! the published one is itself sound under copper's cost model (at least
//! the cost the simulator measures), and never below the simulated cost.
//!
//! `cargo test --release --test precision -- --nocapture` prints the table
//! the README shows.

mod common;

use std::collections::BTreeMap;

use common::{measure, testdata_kernel, Measured};
use copper::bound::{prepare, Config, Outcome};
use copper::cost::Metric;
use copper::sim::params::LaunchSpec;

type Inputs = BTreeMap<String, f64>;

/// A published bound: its text and its value (`None`: "no bound").
struct Published {
    metric: &'static str,
    text: &'static str,
    value: fn(&Inputs) -> Option<f64>,
}

/// A kernel of the paper, the sizes to compare at, and how to set them.
struct Case {
    file: &'static str,
    kernel: &'static str,
    sizes: Vec<u64>,
    /// Adapts the parameter file's launch to a size.
    size: fn(&mut LaunchSpec, u64),
    published: Vec<Published>,
}

fn arg(i: &Inputs, n: &str) -> f64 {
    i[n]
}

fn set(spec: &mut LaunchSpec, name: &str, v: f64) {
    spec.args.insert(name.into(), v);
}

fn len(spec: &mut LaunchSpec, array: &str, n: u64) {
    spec.arrays.get_mut(array).expect("array").len = n.max(1);
}

fn cases() -> Vec<Case> {
    let p = |metric, text, value| Published {
        metric,
        text,
        value,
    };
    vec![
        Case {
            file: "addSub0.cu",
            kernel: "addSub0",
            sizes: vec![1, 16, 64, 100],
            size: |s, w| {
                set(s, "w", w as f64);
                len(s, "A", w);
                len(s, "B", w * 1024);
            },
            published: vec![
                p("steps", "7 + 177w", |i| Some(7.0 + 177.0 * arg(i, "w"))),
                p("divwarps", "w", |i| Some(arg(i, "w"))),
                p("sectors", "132w", |i| Some(132.0 * arg(i, "w"))),
                p("conflicts", "0", |_| Some(0.0)),
            ],
        },
        Case {
            file: "addSub1.cu",
            kernel: "addSub1",
            sizes: vec![1, 16, 64, 100],
            size: |s, w| {
                set(s, "w", w as f64);
                len(s, "A", w);
                len(s, "B", w * 1024);
            },
            published: vec![
                p("steps", "7 + 183w", |i| Some(7.0 + 183.0 * arg(i, "w"))),
                p("divwarps", "0", |_| Some(0.0)),
                p("sectors", "132w", |i| Some(132.0 * arg(i, "w"))),
                p("conflicts", "0", |_| Some(0.0)),
            ],
        },
        Case {
            file: "addSub2.cu",
            kernel: "addSub2",
            sizes: vec![2, 16, 64, 101],
            size: |s, h| {
                set(s, "h", h as f64);
                len(s, "B", 1024 * (h + 1));
            },
            published: vec![
                p("steps", "14 + 32(h + 1)", |i| {
                    Some(14.0 + 32.0 * (arg(i, "h") + 1.0))
                }),
                p("divwarps", "0", |_| Some(0.0)),
                p("sectors", "14(h + 1)", |i| Some(14.0 * (arg(i, "h") + 1.0))),
                p("conflicts", "0", |_| Some(0.0)),
            ],
        },
        Case {
            file: "addSub3.cu",
            kernel: "addSub3",
            sizes: vec![2, 16, 64, 101],
            size: |s, h| {
                set(s, "h", h as f64);
                len(s, "B", 1024 * (h + 1));
            },
            published: vec![
                p("steps", "22 + 29(h + 1)", |i| {
                    Some(22.0 + 29.0 * (arg(i, "h") + 1.0))
                }),
                p("divwarps", "0", |_| Some(0.0)),
                p("sectors", "4 + 10(h + 1)", |i| {
                    Some(4.0 + 10.0 * (arg(i, "h") + 1.0))
                }),
                p("conflicts", "0", |_| Some(0.0)),
            ],
        },
        Case {
            file: "vector_add.cu",
            kernel: "vector_add",
            sizes: vec![1, 255, 16384],
            size: |s, n| set(s, "n", n as f64),
            published: vec![
                p("steps", "27", |_| Some(27.0)),
                p("divwarps", "1", |_| Some(1.0)),
                p("sectors", "12", |_| Some(12.0)),
                p("conflicts", "0", |_| Some(0.0)),
            ],
        },
        Case {
            file: "syn_brdis.cu",
            kernel: "syn_brdis",
            sizes: vec![0, 1, 4, 16],
            size: |s, n| {
                set(s, "N", n as f64);
                set(s, "M", 16.0);
                len(s, "A", n * 16);
            },
            published: vec![
                p("steps", "9 + 85MN + 64N", |i| {
                    let (m, n) = (arg(i, "M"), arg(i, "N"));
                    Some(9.0 + 85.0 * m * n + 64.0 * n)
                }),
                p("divwarps", "N", |i| Some(arg(i, "N"))),
            ],
        },
        Case {
            file: "reduce0.cu",
            kernel: "reduce0",
            sizes: vec![1000, 4096],
            size: |s, n| set(s, "n", n as f64),
            published: vec![
                p("steps", "6412", |_| Some(6412.0)),
                p("divwarps", "257", |_| Some(257.0)),
                p("sectors", "5", |_| Some(5.0)),
                p("conflicts", "0", |_| Some(0.0)),
            ],
        },
        Case {
            file: "reduce1.cu",
            kernel: "reduce1",
            sizes: vec![1000, 4096],
            size: |s, n| set(s, "n", n as f64),
            published: vec![
                p("steps", "30892", |_| Some(30892.0)),
                p("divwarps", "257", |_| Some(257.0)),
                p("sectors", "5", |_| Some(5.0)),
                p("conflicts", "23715", |_| Some(23715.0)),
            ],
        },
        Case {
            file: "reduce2.cu",
            kernel: "reduce2",
            sizes: vec![1000, 4096],
            size: |s, n| set(s, "n", n as f64),
            published: vec![
                p("steps", "no bound", |_| None),
                p("divwarps", "no bound", |_| None),
                p("sectors", "5", |_| Some(5.0)),
                p("conflicts", "no bound", |_| None),
            ],
        },
        Case {
            file: "reduce3.cu",
            kernel: "reduce3",
            sizes: vec![1000, 4096],
            size: |s, n| set(s, "n", n as f64),
            published: vec![
                p("steps", "no bound", |_| None),
                p("divwarps", "no bound", |_| None),
                p("sectors", "9", |_| Some(9.0)),
                p("conflicts", "no bound", |_| None),
            ],
        },
        Case {
            file: "mandelbrot.cu",
            kernel: "mandelbrot",
            sizes: vec![0, 16, 64],
            // Every pixel at the origin never escapes: every lane runs all
            // `maxIter` iterations, the worst case.
            size: |s, it| {
                set(s, "maxIter", it as f64);
                set(s, "x0", 0.0);
                set(s, "y0", 0.0);
                set(s, "scale", 0.0);
            },
            published: vec![
                p("steps", "no bound", |_| None),
                p("divwarps", "no bound", |_| None),
            ],
        },
    ]
}

#[test]
fn no_looser_than_published_wherever_published_is_sound() {
    let mut failures = Vec::new();
    println!("| kernel | metric | published (RaCUDA) | copper | simulated / copper / published at each size |");
    println!("|---|---|---|---|---|");
    for c in cases() {
        let (kernel, base, shape) = testdata_kernel(c.file, c.kernel);
        let prep = prepare(
            &kernel,
            Config {
                block: Some(shape.block),
                ..Config::default()
            },
        );
        for p in &c.published {
            let metric = Metric::builtin(p.metric).unwrap();
            let bound = prep.bound(&metric);
            let Outcome::Bound(ours) = &bound.work else {
                failures.push(format!("{} {}: copper has no bound", c.kernel, p.metric));
                continue;
            };
            let mut cells = Vec::new();
            for &size in &c.sizes {
                let mut spec = base.clone();
                (c.size)(&mut spec, size);
                let Measured {
                    at,
                    simulated: sim,
                    bound: b,
                } = measure(&kernel, &spec, &metric, ours);
                let published = (p.value)(&at);
                if sim > b + 1e-6 {
                    failures.push(format!(
                        "{} {} at {size}: simulated {sim} above copper's bound {b}",
                        c.kernel, p.metric
                    ));
                }
                if let Some(pb) = published {
                    if pb >= sim && b > pb + 1e-6 {
                        failures.push(format!(
                            "{} {} at {size}: copper {b} looser than the published {pb} (simulated {sim})",
                            c.kernel, p.metric
                        ));
                    }
                }
                let pub_cell = match published {
                    Some(pb) if pb < sim => format!("{pb} (below: unsound here)"),
                    Some(pb) => format!("{pb}"),
                    None => "–".into(),
                };
                cells.push(format!("{size}: {sim} / {b:.0} / {pub_cell}"));
            }
            println!(
                "| {} | {} | {} | {} | {} |",
                c.kernel,
                p.metric,
                p.text,
                ours,
                cells.join("; ")
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
