//! Helpers the engine's tests share: a `testdata/` kernel with the launch
//! of its parameter file, a bound measured against the simulation, and a
//! kernel's source simulated with the results looked up by name.

// Each test crate uses only some of these.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;

use copper::bound::BoundExpr;
use copper::cost::Metric;
use copper::cuda::parse::{parse_path, parse_source};
use copper::ir::lower::lower_kernel;
use copper::ir::{Kernel, Value};
use copper::launch::Shape;
use copper::sim::params::{LaunchSpec, ParamFile};
use copper::sim::{inputs_from_spec, simulate, simulate_owned, SimError, SimOptions, SimResult};
use copper::source::SourceFile;

/// Kernel `kernel` of `testdata/FILE`, lowered, its launch in the
/// parameter file beside it (`FILE.toml`), and that launch's shape.
pub fn testdata_kernel(file: &str, kernel: &str) -> (Kernel, LaunchSpec, Shape) {
    let cu = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(file);
    let parsed = parse_path(&cu).unwrap();
    let lowered = lower_kernel(&parsed, kernel).unwrap();
    let params =
        ParamFile::from_toml(&std::fs::read_to_string(cu.with_extension("toml")).unwrap()).unwrap();
    let spec = params.kernel[kernel].clone();
    let shape = spec.shape().unwrap();
    (lowered, spec, shape)
}

/// A bound against the simulation of one launch.
pub struct Measured {
    /// The inputs the bound is evaluated at: the scalar arguments and the
    /// launch's `gridDim` and `blockDim`.
    pub at: BTreeMap<String, f64>,
    /// The simulated cost of the worst warp.
    pub simulated: f64,
    /// The bound's value at `at`.
    pub bound: f64,
}

/// Simulates `kernel` on the launch `spec` for `metric` and evaluates
/// `bound` (a bound of `metric` per warp) at its inputs.
pub fn measure(kernel: &Kernel, spec: &LaunchSpec, metric: &Metric, bound: &BoundExpr) -> Measured {
    let inputs = inputs_from_spec(kernel, spec).unwrap();
    let at = inputs.bound_point();
    let opts = SimOptions {
        metrics: vec![metric.clone()],
        ..SimOptions::default()
    };
    let simulated = simulate_owned(kernel, inputs, &opts).unwrap().metrics[0].max_warp;
    let bound = bound.eval(&at).unwrap();
    Measured {
        at,
        simulated,
        bound,
    }
}

/// Simulates the first kernel of `src` on the launch that the parameter
/// file `params` (TOML) gives it.
pub fn simulate_source(src: &str, params: &str) -> Result<SimResult, SimError> {
    let parsed = parse_source(SourceFile::new("t.cu", src));
    let name = parsed.kernels().next().expect("a kernel").name.clone();
    let kernel = lower_kernel(&parsed, &name).unwrap_or_else(|d| panic!("{}", d.render()));
    let p = ParamFile::from_toml(params).unwrap();
    let inputs = inputs_from_spec(&kernel, &p.kernel[&name]).unwrap();
    simulate(&kernel, &inputs, &SimOptions::default())
}

/// The cost of the worst warp under metric `name`.
pub fn metric(r: &SimResult, name: &str) -> f64 {
    r.metrics
        .iter()
        .find(|m| m.metric == name)
        .unwrap()
        .max_warp
}

/// The final contents of global array `name`.
pub fn array(r: &SimResult, name: &str) -> Vec<Value> {
    r.arrays
        .iter()
        .find(|(n, _)| n == name)
        .unwrap()
        .1
        .values()
        .collect()
}
