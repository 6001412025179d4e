//! Simulated costs for the report: the original and the best version run
//! on the launch copper tests the kernel on (the parameter file's, the
//! host code's, or the first synthesized one the original runs cleanly
//! on; the best version with x and y exchanged when its rewrite exchanges
//! them in the launch), the worst warp per metric of each. Beside the
//! bounds, a number measured under the same cost model.

use copper::cost::Metric;
use copper::cuda::parse::ParsedFile;
use copper::sim::params::LaunchSpec;
use copper::sim::test_launch::LAUNCH_STEPS;
use copper::sim::{inputs_from_spec, simulate_owned, SimOptions};
use copper_search::driver::optimize::Simulated;
use copper_search::launch::dims;
use copper_search::pipeline::{Analyzed, KernelResult};
use serde_json::{json, Value};

use super::numbers::ratio;
use crate::cli::params::test_launch;
use crate::cli::settings::Settings;

/// [`Simulated`] for a search's result `x`, the kernel's parameter-file
/// launch being `spec`; why there is none otherwise (no launch could be
/// built, or a simulation failed or passed the work limit).
pub fn at_test_launch(
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
        if x.best.lineage.relaunch.is_some() {
            for d in [&mut best.grid, &mut best.block] {
                d.resize(d.len().max(2), 1);
                d.swap(0, 1);
            }
        }
        worst_warps(&x.best, &best, s)?
    } else {
        before.clone()
    };
    let three = |v: &[u64]| -> [u64; 3] { std::array::from_fn(|i| v.get(i).copied().unwrap_or(1)) };
    Ok(Simulated {
        launch: format!(
            "grid {}, block {}",
            dims(three(&spec.grid)),
            dims(three(&spec.block))
        ),
        before,
        after,
    })
}

/// The worst warp per metric of `version` on `spec`.
fn worst_warps(version: &Analyzed, spec: &LaunchSpec, s: &Settings) -> Result<Vec<f64>, String> {
    let inputs = inputs_from_spec(&version.kernel, spec).map_err(|e| e.to_string())?;
    let options = SimOptions {
        hw: s.analysis.hw,
        metrics: s.metrics.clone(),
        max_steps: Some(LAUNCH_STEPS),
        ..SimOptions::default()
    };
    let result = simulate_owned(&version.kernel, inputs, &options).map_err(|e| e.message)?;
    Ok(result.metrics.iter().map(|m| m.max_warp).collect())
}

/// The report's fields for `simulated` with the ranking metric at index
/// `rank`: an object with every metric, and the ranking metric's before,
/// after and ratio on their own.
pub fn fields(
    simulated: &Result<Simulated, String>,
    metrics: &[Metric],
    rank: usize,
) -> [(&'static str, Value); 4] {
    match simulated {
        Ok(x) => {
            let per_metric = |v: &[f64]| -> Value {
                metrics
                    .iter()
                    .zip(v)
                    .map(|(m, c)| (m.name.clone(), json!(c)))
                    .collect::<serde_json::Map<_, _>>()
                    .into()
            };
            let (b, a) = (x.before.get(rank).copied(), x.after.get(rank).copied());
            [
                (
                    "simulated",
                    json!({ "launch": x.launch, "before": per_metric(&x.before), "after": per_metric(&x.after) }),
                ),
                ("simulated_before", json!(b)),
                ("simulated_after", json!(a)),
                ("simulated_improvement", json!(ratio(b, a))),
            ]
        }
        Err(why) => [
            ("simulated", json!({ "error": why })),
            ("simulated_before", Value::Null),
            ("simulated_after", Value::Null),
            ("simulated_improvement", Value::Null),
        ],
    }
}
