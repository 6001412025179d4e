//! The bounds' self-check: bounds compared with a simulation of the kernel
//! they bound. `copper analyze --check`, the search's candidate checks and
//! the soundness tests all compare through here, so a bound below a
//! simulated cost is caught the same way everywhere.

use std::collections::BTreeMap;

use super::{BoundExpr, InputAssumption, MetricBound, Outcome};
use crate::launch::{Dims, Shape};
use crate::poly::Rational;
use crate::sim::SimResult;

/// Whether a simulated cost exceeds a bound by more than the float
/// rounding of evaluating the bound.
pub fn exceeds(simulated: f64, bound: f64) -> bool {
    simulated > bound + 1e-6 * (1.0 + bound.abs())
}

/// Warps in a launch of `shape` with warps of `warp_size` threads (each
/// block rounded up to whole warps).
pub fn launch_warps(block: Dims, grid: Dims, warp_size: u64) -> u64 {
    block
        .count()
        .div_ceil(warp_size.max(1))
        .saturating_mul(grid.count())
}

/// The whole-launch bound: the per-warp bound times the launch's warps
/// (`None` when that overflows 128-bit rational arithmetic).
pub fn launch_bound(per_warp: &BoundExpr, warps: u64) -> Option<BoundExpr> {
    per_warp.scaled(Rational::int(warps as i128))
}

/// A bound below what the simulator measured: an internal error of the
/// analysis.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// The metric.
    pub metric: String,
    /// Which bound: `"per-warp"` (against the worst warp) or `"launch"`
    /// (against the sum over the warps simulated).
    pub scope: &'static str,
    /// The bound's value at the launch.
    pub bound: f64,
    /// What the simulator measured.
    pub simulated: f64,
}

impl Violation {
    /// The internal-error message for kernel `kernel`.
    pub fn message(&self, kernel: &str) -> String {
        format!(
            "internal error: the {} {} bound of `{kernel}` is {} but the simulator measured {}; please report this",
            self.scope, self.metric, self.bound, self.simulated
        )
    }
}

/// Compares `bounds` with the simulation `sim` of a launch of `shape`
/// whose bound point (arguments and launch builtins) is `at`: each metric's
/// per-warp work bound with the worst warp, and the launch bound (per warp
/// times the launch's warps) with the total over the warps simulated.
/// Metrics are matched by name; a metric without a bound, or with one
/// assuming of the inputs what `at` breaks, is not compared.
pub fn violations(
    bounds: &[MetricBound],
    sim: &SimResult,
    at: &BTreeMap<String, f64>,
    shape: &Shape,
    warp_size: u64,
) -> Vec<Violation> {
    let warps = launch_warps(shape.block(), shape.grid(), warp_size);
    let mut found = Vec::new();
    for b in bounds {
        let Outcome::Bound(e) = &b.work else {
            continue;
        };
        // A bound found under an assumption the inputs break claims
        // nothing about them.
        if !InputAssumption::all_hold(&b.assumes, at) {
            continue;
        }
        let Some(m) = sim.metrics.iter().find(|m| m.metric == b.metric) else {
            continue;
        };
        let checks = [
            ("per-warp", e.eval(at), m.max_warp),
            (
                "launch",
                launch_bound(e, warps).and_then(|b| b.eval(at)),
                m.total,
            ),
        ];
        for (scope, bound, simulated) in checks {
            if let Some(bound) = bound.filter(|&v| exceeds(simulated, v)) {
                found.push(Violation {
                    metric: b.metric.clone(),
                    scope,
                    bound,
                    simulated,
                });
            }
        }
    }
    found
}
