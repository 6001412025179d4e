//! The annotation driver of `copper annotate`, per kernel: the test
//! launch, a simulation that counts each statement's costs, the bound per
//! warp at that launch, and the costs gathered per source line. It
//! returns what it found ([`Annotation`]); [`rewrite`] searches for the
//! kernel's rewrite and annotates it the same way, [`plot`] simulates it
//! at several sizes beside its bound. The text and HTML views and the
//! lint's findings are the command's.

use copper::launch::Dims;
use std::collections::BTreeMap;

use copper::bound::{prepare, BoundExpr, Config, NoBound, Outcome};
use copper::cost::{Counts, Metric, COUNTERS};
use copper::cuda::parse::ParsedFile;
use copper::ir::Kernel;
use copper::shown::Shown;
use copper::sim::params::LaunchSpec;
use copper::sim::{inputs_from_spec, simulate_by_statement, InputError, SimOptions};

use crate::launch::test_launch;

pub mod plot;
pub mod rewrite;

/// One kernel's annotation: what both views print.
pub struct Annotation {
    /// The kernel's name.
    pub kernel: String,
    /// `file:line` of its definition, as shown.
    pub place: String,
    /// The test launch.
    pub grid: Dims,
    /// The test launch's block.
    pub block: Dims,
    /// Where the launch came from, and what was assumed.
    pub assumptions: Vec<String>,
    /// Per metric: the bound per warp and the simulation's figures.
    pub metrics: Vec<MetricLine>,
    /// Every line of the kernel, with its costs.
    pub lines: Vec<Line>,
    /// Costs of statements placed outside the kernel's lines (a header, a
    /// macro's definition), when there are any.
    pub elsewhere: Option<Vec<f64>>,
}

/// A metric's bound and simulated figures.
pub struct MetricLine {
    /// The metric's name.
    pub name: String,
    /// The bound per warp, or why there is none.
    pub bound: Result<BoundExpr, NoBound>,
    /// The bound's value at the launch, when it evaluates there.
    pub at_launch: Option<f64>,
    /// The most any one warp cost.
    pub worst_warp: f64,
    /// All warps together.
    pub total: f64,
}

/// One source line of a kernel.
pub struct Line {
    /// Its number in its file.
    pub number: usize,
    /// Its text, control characters escaped.
    pub text: String,
    /// What its statements cost, per metric (`None`: no statement).
    pub costs: Option<Vec<f64>>,
}

impl Annotation {
    /// The share of the first metric's total that `costs` are, in percent.
    pub fn share(&self, costs: &[f64]) -> Option<f64> {
        let total = self.metrics.first()?.total;
        let c = costs.first()?;
        (total > 0.0).then(|| 100.0 * c / total)
    }
}

/// Why a kernel could not be annotated.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnnotateError {
    /// Neither the parameter file nor the kernel gave a launch.
    #[error("no launch could be built (give a parameter file)")]
    NoLaunch,
    /// The original kernel fails on the test launch.
    #[error("the original does not run cleanly on a test launch: {0}")]
    Unclean(String),
    /// The launch's arguments or arrays do not fit the kernel.
    #[error(transparent)]
    Inputs(#[from] InputError),
    /// The simulation failed.
    #[error("{0}")]
    Simulation(String),
    /// The kernel is not among the file's functions.
    #[error("not listed")]
    NotListed,
}

/// The annotation of `kernel` (of `parsed`) on the test launch built from
/// `spec` (its parameter file entry, if any), under `analysis` for
/// `metrics`, and the launch it was simulated on.
pub fn annotate(
    parsed: &ParsedFile,
    kernel: &Kernel,
    spec: Option<&LaunchSpec>,
    analysis: Config,
    metrics: &[Metric],
) -> Result<(Annotation, LaunchSpec), AnnotateError> {
    let launch = test_launch(parsed, kernel, spec);
    let spec = launch.spec.ok_or(AnnotateError::NoLaunch)?;
    if let Some(why) = launch.unclean {
        return Err(AnnotateError::Unclean(why));
    }
    let inputs = inputs_from_spec(kernel, &spec)?;
    let opts = SimOptions {
        hw: analysis.hw,
        metrics: metrics.to_vec(),
        ..SimOptions::default()
    };
    let (result, statements) = simulate_by_statement(kernel, &inputs, &opts)
        .map_err(|e| AnnotateError::Simulation(e.message))?;
    let mut values = spec.defines.clone();
    values.extend(spec.args.iter().map(|(k, v)| (k.clone(), *v)));
    let shape = spec.shape().map_err(InputError::from)?;
    let (grid, block) = (shape.grid(), shape.block());
    let prep = prepare(
        kernel,
        Config {
            block: Some(block),
            grid: Some(grid),
            ..analysis
        },
    );
    let source = &parsed.source;
    let f = parsed
        .function(&kernel.name)
        .ok_or(AnnotateError::NotListed)?;
    let (path, first, _) = source.locate(f.meta.span.start);
    let (_, last, _) = source.locate(f.meta.span.end.saturating_sub(1).max(f.meta.span.start));
    let metric_lines = metrics
        .iter()
        .zip(&result.metrics)
        .map(|(m, r)| {
            let (bound, at_launch) = match prep.bound(m).work {
                Outcome::Bound(e) => {
                    let at = e.eval(&values);
                    (Ok(e), at)
                }
                Outcome::NoBound(why, _) => (Err(why), None),
            };
            MetricLine {
                name: m.name.clone(),
                bound,
                at_launch,
                worst_warp: r.max_warp,
                total: r.total,
            }
        })
        .collect();
    // Costs per line of the kernel; statements placed elsewhere (a
    // header, a macro's definition) are summed apart.
    let mut by_line: BTreeMap<usize, Counts> = BTreeMap::new();
    let mut elsewhere: Counts = [0; COUNTERS];
    for (at, counts) in &statements {
        let (p, line, _) = source.locate(*at);
        let into = if p == path && (first..=last).contains(&line) {
            by_line.entry(line).or_insert([0; COUNTERS])
        } else {
            &mut elsewhere
        };
        for (s, c) in into.iter_mut().zip(counts) {
            *s += c;
        }
    }
    let costs = |c: &Counts| -> Vec<f64> { metrics.iter().map(|m| m.work.cost(c)).collect() };
    let lines = (first..=last)
        .map(|number| Line {
            number,
            text: copper::shown::escaped_controls(source.line_text(number)),
            costs: by_line.get(&number).map(costs),
        })
        .collect();
    let annotation = Annotation {
        kernel: kernel.name.clone(),
        place: format!("{}:{first}", path.shown()),
        grid,
        block,
        assumptions: launch.assumptions,
        metrics: metric_lines,
        lines,
        elsewhere: elsewhere.iter().any(|&c| c > 0).then(|| costs(&elsewhere)),
    };
    Ok((annotation, spec))
}
