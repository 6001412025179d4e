//! `copper analyze`: sound per-warp cost bounds, whole-launch bounds, and
//! block-time bounds `W/P + S`.

use copper::shown::Shown;
use std::collections::BTreeMap;
use std::time::Instant;

use copper::bound::check::{self, launch_warps, violations, Violation};
use copper::bound::{prepare, BoundExpr, Config, InputAssumption, MetricBound, NoBound, Outcome};
use copper::cuda::parse::ParsedFile;
use copper::diag::Severity;
use copper::ir::lower::symbol_notes;
use copper::ir::Kernel;
use copper::poly::{Poly, Rational};
use copper::sim::params::{LaunchSpec, ShapeError};
use copper::sim::{inputs_from_spec, simulate_owned, InputError, SimOptions};
use serde_json::json;

use copper_search::launch::{dims, launch_shape, KnownShape};
use copper_search::rank::fmt_num;

use super::args::{AnalyzeArgs, Format};
use super::output::{self, lower_or_report};
use super::params::parse_with_params;
use super::settings::Settings;

/// The analysis of one kernel, ready to print.
struct Report {
    name: String,
    /// The file the kernel is written in (a header's kernel: the header).
    path: String,
    line: usize,
    column: usize,
    shape: KnownShape,
    bounds: Vec<MetricBound>,
    /// Per metric: bound and simulated worst warp at the parameter file's
    /// inputs, and the inputs.
    check: Option<Result<Check, CheckFailure>>,
    seconds: f64,
}

struct Check {
    inputs: BTreeMap<String, f64>,
    rows: Vec<(Option<f64>, f64)>,
    /// Bounds below the simulated costs (internal errors).
    violations: Vec<Violation>,
}

/// Runs `copper analyze`.
pub fn run(a: &AnalyzeArgs, s: &Settings) -> u8 {
    let metrics = &s.metrics;
    let hw = s.analysis.hw;
    let (parsed, params) = match parse_with_params(&a.file, s) {
        Ok(x) => x,
        Err(status) => return status,
    };
    let mut status = 0;
    for d in parsed.all_diagnostics() {
        output::diagnostic(&d);
        status = 1;
    }
    if a.launch.kernel.is_none() {
        for t in parsed.uninstantiated() {
            let at = parsed
                .item(&t.name)
                .map_or(t.meta.span.start, |i| i.name_offset);
            let d = parsed.source.diagnostic(
                Severity::Warning,
                "template",
                at,
                format!(
                    "template `{}` not analyzed: no instantiation seen; use `--instantiate '{}'`",
                    t.name,
                    example_instance(t)
                ),
            );
            output::diagnostic(&d);
            status = 1;
        }
    }
    let names: Vec<String> = match &a.launch.kernel {
        Some(k) => {
            let k = &parsed.kernel_name(k);
            if parsed.kernels().all(|f| &f.name != k) {
                eprintln!(
                    "copper: error: {}: no kernel named `{k}` (kernels: {})",
                    a.file.shown(),
                    parsed
                        .kernels()
                        .map(|f| f.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                return 2;
            }
            vec![k.clone()]
        }
        None => parsed.kernels().map(|k| k.name.clone()).collect(),
    };
    let mut reports = Vec::new();
    for name in names {
        let start = Instant::now();
        let Some(kernel) = lower_or_report(&parsed, &name) else {
            status = 1;
            continue;
        };
        for d in symbol_notes(&parsed, &kernel) {
            output::diagnostic(&d);
        }
        let spec = params.as_ref().and_then(|p| p.kernel.get(&name));
        let shape = launch_shape(s.block, s.grid, &parsed, spec, &name);
        let config = Config {
            block: shape.block,
            grid: shape.grid,
            ..s.analysis
        };
        let prep = prepare(&kernel, config);
        let bounds: Vec<MetricBound> = metrics.iter().map(|m| prep.bound(m)).collect();
        let seconds = start.elapsed().as_secs_f64();
        let check = a.check.then(|| match spec {
            Some(spec) => check(&kernel, spec, &shape, &bounds, metrics, hw),
            None => Err(CheckFailure::NoEntry(name.clone())),
        });
        if matches!(check, Some(Err(_))) {
            status = 1;
        }
        if let Some(Ok(c)) = &check {
            for v in &c.violations {
                eprintln!("copper: {}", v.message(&name));
                status = 1;
            }
        }
        let f = parsed.function(&name).expect("listed kernel");
        let (path, line, column) = parsed.source.locate(f.meta.span.start);
        reports.push(Report {
            path: path.shown().to_string(),
            name,
            line,
            column,
            shape,
            bounds,
            check,
            seconds,
        });
    }
    match a.format {
        Format::Text => {
            for r in &reports {
                print_text(&parsed, r, a.issue, hw.warp_size as u64);
            }
        }
        Format::Json => {
            let ks: Vec<_> = reports
                .iter()
                .map(|r| report_json(&parsed, r, a.issue, hw.warp_size as u64))
                .collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&json!({ "file": a.file, "kernels": ks }))
                    .unwrap_or_default()
            );
        }
    }
    status
}

/// An instantiation of template kernel `t` to suggest: each parameter's
/// default, else `float` for a type and `256` for a value.
fn example_instance(t: &copper::cuda::ast::Function) -> String {
    let args: Vec<String> = (t.template.iter().flat_map(|t| &t.params))
        .map(|p| {
            p.default.clone().unwrap_or_else(|| {
                if p.value_type.is_none() {
                    "float"
                } else {
                    "256"
                }
                .to_string()
            })
        })
        .collect();
    copper::cuda::template::instance_name(&t.name, &args)
}

/// Why `--check` could not compare a kernel's bounds with a simulation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
enum CheckFailure {
    /// The parameter file does not launch the kernel.
    #[error("no parameter file entry [kernel.{}] to simulate (see `copper simulate`)", copper::sim::params::kernel_key(.0))]
    NoEntry(String),
    /// Its launch shape is refused.
    #[error(transparent)]
    Shape(#[from] ShapeError),
    /// It launches another shape than the one analyzed.
    #[error("the parameter file launches {} blocks of {}, not the shape analyzed", dims(*grid), dims(*block))]
    OtherShape {
        /// Its grid.
        grid: [u64; 3],
        /// Its block.
        block: [u64; 3],
    },
    /// Its arguments or arrays do not fit the kernel.
    #[error(transparent)]
    Inputs(#[from] InputError),
    /// The simulation fails.
    #[error("simulation failed: {0}")]
    Simulation(String),
    /// Its inputs break an assumption the bounds were found under.
    #[error("the parameter file's {} = {value} breaks the bounds' assumption {assumption}: not compared", assumption.param)]
    OutsideAssumption {
        /// The input's value there.
        value: String,
        /// The assumption it breaks.
        assumption: Box<InputAssumption>,
    },
}

/// Simulates the parameter file's launch and evaluates the bounds there.
fn check(
    kernel: &Kernel,
    spec: &LaunchSpec,
    shape: &KnownShape,
    bounds: &[MetricBound],
    metrics: &[copper::cost::Metric],
    hw: copper::cost::Hardware,
) -> Result<Check, CheckFailure> {
    let s = spec.shape()?;
    if shape.block.is_some_and(|b| b != s.block) || shape.grid.is_some_and(|g| g != s.grid) {
        return Err(CheckFailure::OtherShape {
            grid: s.grid,
            block: s.block,
        });
    }
    let inputs = inputs_from_spec(kernel, spec)?;
    let shown: BTreeMap<String, f64> = inputs
        .scalars
        .iter()
        .map(|(k, x)| (k.clone(), x.as_f64()))
        .collect();
    let at = inputs.bound_point();
    let assumes = bounds.first().map_or(&[][..], |b| &b.assumes[..]);
    if let Some(broken) = assumes
        .iter()
        .find(|a| !InputAssumption::all_hold(std::slice::from_ref(a), &at))
    {
        return Err(CheckFailure::OutsideAssumption {
            value: at.get(&broken.param).map_or(String::new(), |v| fmt_num(*v)),
            assumption: Box::new(broken.clone()),
        });
    }
    let launch = inputs.shape;
    // The whole launch's work limit, as `simulate`'s default: a kernel
    // that does not end stops after it on every machine, where a limit
    // per warp alone multiplies with the warps.
    let opts = SimOptions {
        hw,
        metrics: metrics.to_vec(),
        max_steps: Some(super::args::DEFAULT_LAUNCH_STEPS),
        ..SimOptions::default()
    };
    let r =
        simulate_owned(kernel, inputs, &opts).map_err(|e| CheckFailure::Simulation(e.message))?;
    let rows = bounds
        .iter()
        .zip(&r.metrics)
        .map(|(b, m)| {
            let bound = match &b.work {
                Outcome::Bound(e) => e.eval(&at),
                Outcome::NoBound(..) => None,
            };
            (bound, m.max_warp)
        })
        .collect();
    Ok(Check {
        inputs: shown,
        rows,
        violations: violations(bounds, &r, &at, &launch, hw.warp_size as u64),
    })
}

/// Built-in metrics that count events rather than time: no block-time
/// bound for them.
const COUNTING: [&str; 3] = ["sectors", "conflicts", "divwarps"];

/// The whole-launch bound when the shape is known: per warp times the
/// number of warps (or why there is none: it overflows).
fn launch_bound(
    b: &BoundExpr,
    shape: &KnownShape,
    warp: u64,
) -> Option<(u64, Result<BoundExpr, NoBound>)> {
    let warps = launch_warps(shape.block?, shape.grid?, warp);
    Some((
        warps,
        check::launch_bound(b, warps).ok_or(NoBound::Overflow),
    ))
}

/// The block-time bound `W/P + S` (RaCUDA Thm 2) when the block is
/// known: W is the work of the block's warps, S the span (or why there is
/// none: it overflows).
fn block_time(
    work: &BoundExpr,
    span: &BoundExpr,
    shape: &KnownShape,
    issue: u64,
    warp: u64,
) -> Option<Result<Poly, NoBound>> {
    let block: u64 = shape.block?.iter().product();
    let warps = block.div_ceil(warp) as i128;
    let time = || {
        let share = Rational::checked_new(warps, issue as i128)?;
        work.to_poly()?
            .checked_scale(share)?
            .checked_add(&span.to_poly()?)
    };
    Some(time().ok_or(NoBound::Overflow))
}

/// A derived bound as text: ` ≤ bound`, or `: no bound (why)`.
fn bounded<T: std::fmt::Display>(r: &Result<T, NoBound>) -> String {
    match r {
        Ok(b) => format!(" ≤ {b}"),
        Err(why) => format!(": no bound ({why})"),
    }
}

/// A derived bound in JSON: its text, or `{"no_bound": why}`.
fn bounded_json<T: std::fmt::Display>(r: &Result<T, NoBound>) -> serde_json::Value {
    match r {
        Ok(b) => json!(b.to_string()),
        Err(why) => json!({ "no_bound": why.to_string() }),
    }
}

fn location(parsed: &ParsedFile, span: Option<copper::source::Span>) -> Option<(usize, usize)> {
    span.filter(|s| !s.is_synthetic())
        .map(|s| parsed.source.line_col(s.start))
}

fn print_text(parsed: &ParsedFile, r: &Report, issue: u64, warp: u64) {
    let path = parsed.source.path.shown();
    let shape = match (r.shape.block, r.shape.grid) {
        (Some(b), Some(g)) => format!("block {}, grid {}", dims(b), dims(g)),
        (Some(b), None) => format!("block {}, any grid", dims(b)),
        (None, Some(g)) => format!("any block, grid {}", dims(g)),
        (None, None) => "any block and grid".into(),
    };
    println!(
        "{}:{}:{}: kernel {}: {shape} (from {})",
        r.path, r.line, r.column, r.name, r.shape.source
    );
    let width = r
        .bounds
        .iter()
        .map(|b| b.metric.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let mut assumptions = Vec::new();
    for b in &r.bounds {
        match &b.work {
            Outcome::Bound(e) => {
                println!("  {:<width$}  per warp ≤ {e}", b.metric);
                if e.to_poly().is_some_and(|p| p.is_zero()) {
                    continue;
                }
                if let Some((warps, l)) = launch_bound(e, &r.shape, warp) {
                    println!("  {:<width$}  launch ({warps} warps){}", "", bounded(&l));
                }
                if let Outcome::Bound(s) = &b.span {
                    if b.span != b.work {
                        println!("  {:<width$}  span per warp ≤ {s}", "");
                    }
                    let timed = !COUNTING.contains(&b.metric.as_str());
                    if let Some(t) = block_time(e, s, &r.shape, issue, warp).filter(|_| timed) {
                        let warps = r
                            .shape
                            .block
                            .map_or(0, |b| b.iter().product::<u64>().div_ceil(warp));
                        match t {
                            Ok(t) => println!(
                                "  {:<width$}  block time ≤ W/{issue} + S = {t}  (W: work of its {warps} warps, S: span)",
                                ""
                            ),
                            Err(why) => println!("  {:<width$}  block time: no bound ({why})", ""),
                        }
                    }
                }
                assumptions.extend(e.assumptions());
            }
            Outcome::NoBound(why, span) => {
                let at = location(parsed, *span)
                    .map(|(l, c)| format!("\n  {:<width$}  at {path}:{l}:{c}", ""))
                    .unwrap_or_default();
                println!("  {:<width$}  no bound: {why}{at}", b.metric);
            }
        }
    }
    for a in r.bounds.first().map_or(&[][..], |b| &b.assumes[..]) {
        println!("  {}", a.report_line());
    }
    assumptions.sort();
    assumptions.dedup();
    if !assumptions.is_empty() {
        println!(
            "  (each parenthesized factor counts as 0 where it is negative; the polynomial form assumes {})",
            assumptions.join(", ")
        );
    }
    match &r.check {
        Some(Ok(c)) => {
            let at: Vec<String> = c.inputs.iter().map(|(k, v)| format!("{k} = {v}")).collect();
            println!(
                "  check against the simulator at {}:",
                if at.is_empty() {
                    "the parameter file's launch".into()
                } else {
                    at.join(", ")
                }
            );
            for (b, (bound, sim)) in r.bounds.iter().zip(&c.rows) {
                let ratio = match bound {
                    Some(x) if *sim > 0.0 => format!("  ({:.2}×)", x / sim),
                    _ => String::new(),
                };
                let bound = bound.map_or("no bound".into(), fmt_num);
                println!(
                    "  {:<width$}  bound {bound}, simulated worst warp {}{ratio}",
                    b.metric,
                    fmt_num(*sim)
                );
            }
        }
        Some(Err(e)) => println!("  check: {e}"),
        None => {}
    }
    let (vars, cons) = r
        .bounds
        .iter()
        .map(|b| (b.lp_vars, b.lp_constraints))
        .max()
        .unwrap_or((0, 0));
    println!(
        "  analyzed in {:.1} ms (largest LP: {vars} variables, {cons} constraints)",
        r.seconds * 1e3
    );
}

fn outcome_json(parsed: &ParsedFile, o: &Outcome) -> serde_json::Value {
    match o {
        Outcome::Bound(e) => json!({
            "bound": e.to_string(),
            "polynomial": e.to_poly().map(|p| p.to_string()),
            "polynomial_ascii": e.to_poly().map(|p| p.to_plain()),
            "assumptions": e.assumptions(),
        }),
        Outcome::NoBound(why, span) => {
            let at = location(parsed, *span);
            json!({
                "no_bound": why.to_string(),
                "line": at.map(|x| x.0),
                "column": at.map(|x| x.1),
            })
        }
    }
}

fn report_json(parsed: &ParsedFile, r: &Report, issue: u64, warp: u64) -> serde_json::Value {
    let metrics: Vec<_> = r
        .bounds
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let (launch, time) = match (&b.work, &b.span) {
                (Outcome::Bound(w), Outcome::Bound(s)) => (
                    launch_bound(w, &r.shape, warp)
                        .map(|(n, l)| json!({ "warps": n, "bound": bounded_json(&l) })),
                    block_time(w, s, &r.shape, issue, warp)
                        .filter(|_| !COUNTING.contains(&b.metric.as_str()))
                        .map(|t| bounded_json(&t)),
                ),
                _ => (None, None),
            };
            let check = match &r.check {
                Some(Ok(c)) => json!({ "bound": c.rows[i].0, "simulated_worst_warp": c.rows[i].1 }),
                _ => serde_json::Value::Null,
            };
            json!({
                "metric": b.metric,
                "per_warp": outcome_json(parsed, &b.work),
                "span_per_warp": outcome_json(parsed, &b.span),
                "launch": launch,
                "block_time": time,
                "check": check,
                "lp_variables": b.lp_vars,
                "lp_constraints": b.lp_constraints,
                "seconds": b.seconds,
            })
        })
        .collect();
    json!({
        "kernel": r.name,
        "line": r.line,
        "column": r.column,
        "block": r.shape.block,
        "grid": r.shape.grid,
        "shape_from": r.shape.source,
        "check_inputs": match &r.check { Some(Ok(c)) => json!(c.inputs), _ => serde_json::Value::Null },
        "check_error": match &r.check { Some(Err(e)) => json!(e.to_string()), _ => serde_json::Value::Null },
        "seconds": r.seconds,
        "input_assumptions": r.bounds.first().map_or(Vec::new(), |b| b.assumes.iter().map(InputAssumption::to_json).collect()),
        "metrics": metrics,
    })
}
