//! The analysis driver of `copper analyze`, per kernel: its launch shape,
//! the sound per-warp bounds of each metric, the whole-launch bound and
//! the block-time bound `W/P + S` derived from them, and with `--check`
//! the bounds compared with a simulation of the parameter file's launch.
//! It returns what it found ([`Analysis`]); printing is the command's.

use copper::launch::Dims;
use std::collections::BTreeMap;
use std::time::Instant;

use copper::bound::check::{self, launch_warps, violations, Violation};
use copper::bound::{prepare, BoundExpr, Config, InputAssumption, MetricBound, NoBound, Outcome};
use copper::cost::{Hardware, Metric};
use copper::cuda::parse::ParsedFile;
use copper::diag::Diagnostic;
use copper::ir::lower::{lower_kernel, symbol_notes};
use copper::ir::Kernel;
use copper::launch::ShapeError;
use copper::poly::{Poly, Rational};
use copper::shown::Shown;
use copper::sim::params::LaunchSpec;
use copper::sim::{inputs_from_spec, simulate_owned, InputError, SimOptions};

use crate::launch::{launch_shape, KnownShape};
use crate::rank::fmt_num;

/// What to analyze each kernel with.
pub struct Request<'a> {
    /// The metrics bounded, in order.
    pub metrics: &'a [Metric],
    /// The analysis (its launch shape is each kernel's own).
    pub analysis: Config,
    /// The block given for every kernel, if any (over the host code's).
    pub block: Option<Dims>,
    /// The grid given, as the block.
    pub grid: Option<Dims>,
    /// Instructions an SM issues per cycle (P in `W/P + S`).
    pub issue: u64,
    /// With `--check`: the whole launch's work limit of the simulation
    /// the bounds are compared with.
    pub check: Option<u64>,
}

/// One kernel's analysis.
pub struct Analysis {
    /// Notes on the symbols its lowering met.
    pub notes: Vec<Diagnostic>,
    /// The kernel.
    pub name: String,
    /// The file the kernel is written in (a header's kernel: the header).
    pub path: String,
    /// The line of its definition.
    pub line: usize,
    /// Its column.
    pub column: usize,
    /// The launch shape analyzed, and where it came from.
    pub shape: KnownShape,
    /// Per metric, in the order asked for.
    pub metrics: Vec<MetricAnalysis>,
    /// With [`Request::check`]: the bounds against a simulation, or why
    /// they could not be compared.
    pub check: Option<Result<Check, CheckFailure>>,
    /// Seconds its lowering and bounds took.
    pub seconds: f64,
}

/// One metric's bounds.
pub struct MetricAnalysis {
    /// The per-warp work and span bounds.
    pub bound: MetricBound,
    /// With a work bound and a known shape: the number of warps launched
    /// and the whole launch's bound (or why there is none: it overflows).
    pub launch: Option<(u64, Result<BoundExpr, NoBound>)>,
    /// With work and span bounds, a known block and a metric of time: the
    /// block's warps and its time bound `W/P + S` (or why there is none).
    pub block_time: Option<(u64, Result<Poly, NoBound>)>,
}

/// The bounds compared with a simulation of the parameter file's launch.
pub struct Check {
    /// The scalar inputs simulated.
    pub inputs: BTreeMap<String, f64>,
    /// Per metric: the bound there (if any) and the simulated worst warp.
    pub rows: Vec<(Option<f64>, f64)>,
    /// Bounds below the simulated costs (internal errors).
    pub violations: Vec<Violation>,
}

/// Why `--check` could not compare a kernel's bounds with a simulation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckFailure {
    /// The parameter file does not launch the kernel.
    #[error("no parameter file entry [kernel.{}] to simulate (see `copper simulate`)", copper::sim::params::kernel_key(.0))]
    NoEntry(String),
    /// Its launch shape is refused.
    #[error(transparent)]
    Shape(#[from] ShapeError),
    /// It launches another shape than the one analyzed.
    #[error("the parameter file launches {grid} blocks of {block}, not the shape analyzed")]
    OtherShape {
        /// Its grid.
        grid: Dims,
        /// Its block.
        block: Dims,
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

/// Built-in metrics that count events rather than time: no block-time
/// bound for them.
const COUNTING: [&str; 3] = ["sectors", "conflicts", "divwarps"];

/// Analyzes kernel `name` of `parsed`, launched as `spec` says in the
/// parameter file (if it has an entry); the diagnostic that stops its
/// lowering, if one does.
pub fn analyze_kernel(
    parsed: &ParsedFile,
    name: &str,
    spec: Option<&LaunchSpec>,
    r: &Request,
) -> Result<Analysis, Diagnostic> {
    let start = Instant::now();
    let kernel = &lower_kernel(parsed, name)?;
    let notes = symbol_notes(parsed, kernel);
    let hw = r.analysis.hw;
    let warp = hw.warp_size as u64;
    let shape = launch_shape(r.block, r.grid, parsed, spec, name);
    let config = Config {
        block: shape.block,
        grid: shape.grid,
        ..r.analysis
    };
    let prep = prepare(kernel, config);
    let bounds: Vec<MetricBound> = r.metrics.iter().map(|m| prep.bound(m)).collect();
    let seconds = start.elapsed().as_secs_f64();
    let check = r.check.map(|steps| match spec {
        Some(spec) => check(kernel, spec, &shape, &bounds, r.metrics, hw, steps),
        None => Err(CheckFailure::NoEntry(name.to_string())),
    });
    let metrics = bounds
        .into_iter()
        .map(|bound| {
            let (launch, block_time) = match &bound.work {
                Outcome::Bound(w) => (
                    launch_bound(w, &shape, warp),
                    match &bound.span {
                        Outcome::Bound(s) if !COUNTING.contains(&bound.metric.as_str()) => {
                            block_time(w, s, &shape, r.issue, warp)
                        }
                        _ => None,
                    },
                ),
                Outcome::NoBound(..) => (None, None),
            };
            MetricAnalysis {
                bound,
                launch,
                block_time,
            }
        })
        .collect();
    let f = parsed.function(name).expect("listed kernel");
    let (path, line, column) = parsed.source.locate(f.meta.span.start);
    Ok(Analysis {
        notes,
        name: name.to_string(),
        path: path.shown().to_string(),
        line,
        column,
        shape,
        metrics,
        check,
        seconds,
    })
}

/// Simulates the parameter file's launch (at most `steps` of work in
/// all) and evaluates the bounds there.
fn check(
    kernel: &Kernel,
    spec: &LaunchSpec,
    shape: &KnownShape,
    bounds: &[MetricBound],
    metrics: &[Metric],
    hw: Hardware,
    steps: u64,
) -> Result<Check, CheckFailure> {
    let s = spec.shape()?;
    if shape.block.is_some_and(|b| b != s.block()) || shape.grid.is_some_and(|g| g != s.grid()) {
        return Err(CheckFailure::OtherShape {
            grid: s.grid(),
            block: s.block(),
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
        max_steps: Some(steps),
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
/// known, with the block's warps: W is the work of those warps, S the
/// span (or why there is none: it overflows).
fn block_time(
    work: &BoundExpr,
    span: &BoundExpr,
    shape: &KnownShape,
    issue: u64,
    warp: u64,
) -> Option<(u64, Result<Poly, NoBound>)> {
    let block: u64 = shape.block?.count();
    let warps = block.div_ceil(warp);
    let time = || {
        let share = Rational::checked_new(warps as i128, issue as i128)?;
        work.to_poly()?
            .checked_scale(share)?
            .checked_add(&span.to_poly()?)
    };
    Some((warps, time().ok_or(NoBound::Overflow)))
}
