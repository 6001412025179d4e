//! The bound of a kernel's first metric as a function of one size, beside
//! the worst warp simulated at several values of that size: the launch
//! annotated, with one integer argument (or define) scaled from a quarter
//! to four times its value, arrays grown as the checks grow them until
//! the original runs in bounds. The size is the argument the bound grows
//! with most; every other argument keeps its value.

use std::collections::BTreeMap;

use copper::bound::BoundExpr;
use copper::cost::{Hardware, Metric};
use copper::ir::Kernel;
use copper::sim::params::LaunchSpec;
use copper::sim::test_launch::{run_original, Fail};
use copper::sim::SimOptions;

use super::MetricLine;

/// Most instructions of all warps of one simulated size together: the
/// plot's deterministic work limit per point.
const STEPS_PER_POINT: u64 = 50_000_000;

/// Points of the bound's curve between the smallest and largest size.
const CURVE_POINTS: usize = 48;

/// The bound against simulated costs at several sizes.
pub struct Plot {
    /// The metric plotted.
    pub metric: String,
    /// The size that varies.
    pub size: String,
    /// The bound per warp.
    pub bound: BoundExpr,
    /// `(size, bound per warp)`, sizes increasing.
    pub curve: Vec<(f64, f64)>,
    /// `(size, worst warp simulated)`, sizes increasing.
    pub simulated: Vec<(f64, f64)>,
    /// Values of the size that could not be simulated, and why.
    pub skipped: Vec<(f64, String)>,
}

/// Why there is no plot.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlotError {
    /// No metric is annotated, or it is not among the metrics.
    #[error("no metric")]
    NoMetric,
    /// The metric has no bound.
    #[error("`{0}` has no bound")]
    NoBound(String),
    /// Nothing to vary.
    #[error("the kernel has no integer argument or define to vary")]
    NoSize,
}

/// The plot of `metric`'s bound for `kernel` around the launch `spec`, or
/// why there is none.
pub fn sweep(
    kernel: &Kernel,
    spec: &LaunchSpec,
    metric: Option<&MetricLine>,
    metrics: &[Metric],
    hw: Hardware,
) -> Result<Plot, PlotError> {
    let line = metric.ok_or(PlotError::NoMetric)?;
    let m = metrics
        .iter()
        .find(|m| m.name == line.name)
        .ok_or(PlotError::NoMetric)?;
    let expr = line
        .bound
        .as_ref()
        .map_err(|_| PlotError::NoBound(line.name.clone()))?;
    let mut base = spec.defines.clone();
    base.extend(spec.args.iter().map(|(k, v)| (k.clone(), *v)));
    for (d, n) in ["x", "y", "z"].iter().enumerate() {
        base.insert(format!("gridDim.{n}"), dim(&spec.grid, d));
        base.insert(format!("blockDim.{n}"), dim(&spec.block, d));
    }
    let size = size_to_vary(kernel, spec, expr, &base).ok_or(PlotError::NoSize)?;
    let at = base.get(&size).copied().unwrap_or(1.0).max(1.0);
    let mut sizes: Vec<f64> = [0.25, 0.5, 1.0, 2.0, 4.0]
        .iter()
        .map(|f| (at * f).round().max(1.0))
        .collect();
    sizes.dedup();
    let options = SimOptions {
        hw,
        metrics: vec![m.clone()],
        max_steps: Some(STEPS_PER_POINT),
        ..SimOptions::default()
    };
    let mut simulated = Vec::new();
    let mut skipped = Vec::new();
    for &x in &sizes {
        let mut launch = spec.clone();
        for map in [&mut launch.args, &mut launch.defines] {
            if let Some(v) = map.get_mut(&size) {
                *v = x;
            }
        }
        match run_original(kernel, launch, true, &options) {
            Ok(run) => {
                let worst = run.result.metrics.first().map_or(0.0, |r| r.max_warp);
                simulated.push((x, worst));
            }
            Err(Fail::Setup(why)) => skipped.push((x, why.to_string())),
            Err(Fail::Sim(e)) => skipped.push((x, e.message)),
        }
    }
    let (lo, hi) = match (simulated.first(), simulated.last()) {
        (Some(a), Some(b)) => (a.0, b.0),
        _ => (sizes[0], sizes[sizes.len() - 1]),
    };
    let curve = (0..CURVE_POINTS)
        .filter_map(|i| {
            let x = lo + (hi - lo) * i as f64 / (CURVE_POINTS - 1) as f64;
            let mut values = base.clone();
            values.insert(size.clone(), x);
            expr.eval(&values).map(|y| (x, y))
        })
        .collect();
    Ok(Plot {
        metric: line.name.clone(),
        size,
        bound: expr.clone(),
        curve,
        simulated,
        skipped,
    })
}

/// Dimension `d` of a launch's `grid` or `block` (missing ones are 1).
fn dim(v: &[u64], d: usize) -> f64 {
    v.get(d).copied().unwrap_or(1) as f64
}

/// The integer argument or define of `spec` the bound `expr` grows with
/// most when it doubles (the first in name order on a tie; the first
/// integer argument when the bound grows with none).
fn size_to_vary(
    kernel: &Kernel,
    spec: &LaunchSpec,
    expr: &BoundExpr,
    base: &BTreeMap<String, f64>,
) -> Option<String> {
    let integer = |name: &String| {
        kernel
            .scalar_params()
            .map(|v| &kernel.vars[v])
            .find(|v| &v.name == name)
            .is_none_or(|v| !v.ty.is_float())
    };
    let candidates: Vec<&String> = spec
        .args
        .keys()
        .chain(spec.defines.keys())
        .filter(|n| integer(n))
        .collect();
    let at_base = expr.eval(base)?;
    let growth = |name: &String| {
        let mut values = base.clone();
        let v = values.get(name).copied().unwrap_or(1.0).max(1.0);
        values.insert(name.clone(), 2.0 * v);
        expr.eval(&values).map_or(0.0, |y| y - at_base)
    };
    let mut best: Option<(&String, f64)> = None;
    for c in &candidates {
        let g = growth(c);
        if best.is_none_or(|(_, b)| g > b) {
            best = Some((c, g));
        }
    }
    best.map(|(n, _)| n.clone())
}
