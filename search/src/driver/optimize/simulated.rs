//! Simulated costs for the report: the original and the best version run
//! on the launch copper tests the kernel on ([`test_launch`]: the parameter
//! file's, the host code's, or the first synthesized one the original runs
//! cleanly on; the best version with x and y exchanged when its rewrite
//! exchanges them in the launch), the worst warp per metric of each.

use copper::cuda::parse::ParsedFile;
use copper::sim::params::LaunchSpec;
use copper::sim::test_launch::LAUNCH_STEPS;
use copper::sim::{inputs_from_spec, simulate_owned, SimOptions};

use crate::launch::test_launch;
use crate::pipeline::{Analyzed, KernelResult, Settings};

/// The worst warp of each metric, before and after, on one launch.
#[derive(Clone, Debug, PartialEq)]
pub struct Simulated {
    /// The launch, in words (`grid 2×1×1, block 256×1×1`).
    pub launch: String,
    /// The original's worst warp per metric, in the settings' order.
    pub before: Vec<f64>,
    /// The best version's (the original's when nothing improved).
    pub after: Vec<f64>,
}

/// [`Simulated`] for a search's result `x`, the kernel's parameter-file
/// launch being `spec`; why there is none otherwise (no launch could be
/// built, or a simulation failed or passed the work limit).
pub(super) fn at_test_launch(
    parsed: &ParsedFile,
    x: &KernelResult,
    spec: Option<&LaunchSpec>,
    s: &Settings,
) -> Result<Simulated, String> {
    let launch = test_launch(parsed, &x.original.kernel, spec);
    let spec = launch
        .spec
        .ok_or("no launch could be built (give a parameter file)")?;
    if let Some(why) = launch.unclean {
        return Err(format!("the original does not run cleanly: {why}"));
    }
    let before = worst_warps(&x.original, &spec, s)?;
    let after = if x.improved() {
        let mut best = spec.clone();
        if let Some(r) = x.best.lineage.reshape() {
            r.lists(&mut best.grid, &mut best.block);
        }
        worst_warps(&x.best, &best, s)?
    } else {
        before.clone()
    };
    let shape = spec.shape().map_err(|e| e.to_string())?;
    Ok(Simulated {
        launch: format!("grid {}, block {}", shape.grid(), shape.block()),
        before,
        after,
    })
}

/// The worst warp per metric of `version` on `spec`.
fn worst_warps(version: &Analyzed, spec: &LaunchSpec, s: &Settings) -> Result<Vec<f64>, String> {
    let inputs = inputs_from_spec(&version.kernel, spec).map_err(|e| e.to_string())?;
    let options = SimOptions {
        hw: s.config.hw,
        metrics: s.metrics.clone(),
        max_steps: Some(LAUNCH_STEPS),
        ..SimOptions::default()
    };
    let result = simulate_owned(&version.kernel, inputs, &options).map_err(|e| e.message)?;
    Ok(result.metrics.iter().map(|m| m.max_warp).collect())
}
