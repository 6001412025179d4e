//! Precision against the published RaCUDA bounds (the paper's Tables 3–6):
//! for the kernels of the paper that `testdata/` reproduces, copper's
//! per-warp bound is never looser than the published one at any size where
//! the published one is itself sound under copper's cost model (at least
//! the cost the simulator measures), and never below the simulated cost.
//!
//! `cargo test --release --test precision -- --nocapture` prints the table
//! docs/bounds.md shows, and the test fails when the two differ.

mod common;

use std::collections::BTreeMap;

use common::{measure, testdata_kernel, Measured};
use copper::bound::{prepare, Config, Outcome};
use copper::cost::Metric;
use copper::sim::params::LaunchSpec;

type Inputs = BTreeMap<String, f64>;

/// A published bound of one metric.
struct Published {
    metric: &'static str,
    bound: Bound,
}

/// The value a published bound gives.
enum Bound {
    /// A constant.
    Constant(f64),
    /// A formula, as the paper writes it and as a function of the inputs.
    Formula(&'static str, fn(&Inputs) -> f64),
    /// "no bound".
    None,
}

impl Bound {
    /// The bound as the paper writes it.
    fn text(&self) -> String {
        match self {
            Bound::Constant(c) => c.to_string(),
            Bound::Formula(text, _) => text.to_string(),
            Bound::None => "no bound".into(),
        }
    }

    /// The bound's value at the inputs `i` (`None`: no bound).
    fn at(&self, i: &Inputs) -> Option<f64> {
        match self {
            Bound::Constant(c) => Some(*c),
            Bound::Formula(_, f) => Some(f(i)),
            Bound::None => None,
        }
    }
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

/// `addSub0`/`addSub1`'s size: the row count `w`.
fn rows_w(s: &mut LaunchSpec, w: u64) {
    set(s, "w", w as f64);
    len(s, "A", w);
    len(s, "B", w * 1024);
}

/// `addSub2`/`addSub3`'s size: the row count `h`.
fn rows_h(s: &mut LaunchSpec, h: u64) {
    set(s, "h", h as f64);
    len(s, "B", 1024 * (h + 1));
}

/// A reduction of the paper over `n` elements, with its published
/// `steps`, `divwarps`, `sectors` and `conflicts`.
fn reduction(file: &'static str, kernel: &'static str, bounds: [Bound; 4]) -> Case {
    Case {
        file,
        kernel,
        sizes: vec![1000, 4096],
        size: |s, n| set(s, "n", n as f64),
        published: ["steps", "divwarps", "sectors", "conflicts"]
            .into_iter()
            .zip(bounds)
            .map(|(metric, bound)| Published { metric, bound })
            .collect(),
    }
}

fn cases() -> Vec<Case> {
    use Bound::{Constant, Formula};
    let p = |metric, bound| Published { metric, bound };
    vec![
        Case {
            file: "addSub0.cu",
            kernel: "addSub0",
            sizes: vec![1, 16, 64, 100],
            size: rows_w,
            published: vec![
                p("steps", Formula("7 + 177w", |i| 7.0 + 177.0 * arg(i, "w"))),
                p("divwarps", Formula("w", |i| arg(i, "w"))),
                p("sectors", Formula("132w", |i| 132.0 * arg(i, "w"))),
                p("conflicts", Constant(0.0)),
            ],
        },
        Case {
            file: "addSub1.cu",
            kernel: "addSub1",
            sizes: vec![1, 16, 64, 100],
            size: rows_w,
            published: vec![
                p("steps", Formula("7 + 183w", |i| 7.0 + 183.0 * arg(i, "w"))),
                p("divwarps", Constant(0.0)),
                p("sectors", Formula("132w", |i| 132.0 * arg(i, "w"))),
                p("conflicts", Constant(0.0)),
            ],
        },
        Case {
            file: "addSub2.cu",
            kernel: "addSub2",
            sizes: vec![2, 16, 64, 101],
            size: rows_h,
            published: vec![
                p(
                    "steps",
                    Formula("14 + 32(h + 1)", |i| 14.0 + 32.0 * (arg(i, "h") + 1.0)),
                ),
                p("divwarps", Constant(0.0)),
                p(
                    "sectors",
                    Formula("14(h + 1)", |i| 14.0 * (arg(i, "h") + 1.0)),
                ),
                p("conflicts", Constant(0.0)),
            ],
        },
        Case {
            file: "addSub3.cu",
            kernel: "addSub3",
            sizes: vec![2, 16, 64, 101],
            size: rows_h,
            published: vec![
                p(
                    "steps",
                    Formula("22 + 29(h + 1)", |i| 22.0 + 29.0 * (arg(i, "h") + 1.0)),
                ),
                p("divwarps", Constant(0.0)),
                p(
                    "sectors",
                    Formula("4 + 10(h + 1)", |i| 4.0 + 10.0 * (arg(i, "h") + 1.0)),
                ),
                p("conflicts", Constant(0.0)),
            ],
        },
        Case {
            file: "vector_add.cu",
            kernel: "vector_add",
            sizes: vec![1, 255, 16384],
            size: |s, n| set(s, "n", n as f64),
            published: vec![
                p("steps", Constant(27.0)),
                p("divwarps", Constant(1.0)),
                p("sectors", Constant(12.0)),
                p("conflicts", Constant(0.0)),
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
                p(
                    "steps",
                    Formula("9 + 85MN + 64N", |i| {
                        let (m, n) = (arg(i, "M"), arg(i, "N"));
                        9.0 + 85.0 * m * n + 64.0 * n
                    }),
                ),
                p("divwarps", Formula("N", |i| arg(i, "N"))),
            ],
        },
        reduction(
            "reduce0.cu",
            "reduce0",
            [
                Constant(6412.0),
                Constant(257.0),
                Constant(5.0),
                Constant(0.0),
            ],
        ),
        reduction(
            "reduce1.cu",
            "reduce1",
            [
                Constant(30892.0),
                Constant(257.0),
                Constant(5.0),
                Constant(23715.0),
            ],
        ),
        reduction(
            "reduce2.cu",
            "reduce2",
            [Bound::None, Bound::None, Constant(5.0), Bound::None],
        ),
        reduction(
            "reduce3.cu",
            "reduce3",
            [Bound::None, Bound::None, Constant(9.0), Bound::None],
        ),
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
            published: vec![p("steps", Bound::None), p("divwarps", Bound::None)],
        },
    ]
}

#[test]
fn no_looser_than_published_wherever_published_is_sound() {
    let mut failures = Vec::new();
    let mut table = String::from(
        "| kernel | metric | published (RaCUDA) | copper | simulated / copper / published at each size |\n\
         |---|---|---|---|---|\n",
    );
    for c in cases() {
        let (kernel, base, shape) = testdata_kernel(c.file, c.kernel);
        let prep = prepare(
            &kernel,
            Config {
                block: Some(shape.block()),
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
                let published = p.bound.at(&at);
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
            table.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                c.kernel,
                p.metric,
                p.bound.text(),
                ours,
                cells.join("; ")
            ));
        }
    }
    print!("{table}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The docs show this very table.
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/bounds.md");
    let docs = std::fs::read_to_string(docs).expect("docs/bounds.md");
    assert!(
        docs.contains(&table),
        "docs/bounds.md's precision table differs from what this test prints; \
         replace it with the table printed above (`-- --nocapture`)"
    );
}
