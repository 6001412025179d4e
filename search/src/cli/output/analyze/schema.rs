//! The JSON that `copper analyze --format json` writes, as typed
//! structures. Keys print in alphabetical order
//! ([`crate::cli::output::json`]).

use copper::launch::Dims;
use std::collections::BTreeMap;

use copper::bound::AssumptionRecord;
use serde::Serialize;

/// The document: a file's kernels.
#[derive(Serialize)]
pub struct Document {
    /// The file.
    pub file: String,
    /// Its kernels.
    pub kernels: Vec<Kernel>,
}

/// One kernel's analysis.
#[derive(Serialize)]
pub struct Kernel {
    /// Its name.
    pub kernel: String,
    /// Its line.
    pub line: usize,
    /// Its column.
    pub column: usize,
    /// The block it was analyzed for.
    pub block: Option<Dims>,
    /// The grid.
    pub grid: Option<Dims>,
    /// Where the shape came from, in words.
    pub shape_from: String,
    /// The scalar inputs `--check` simulated.
    pub check_inputs: Option<BTreeMap<String, f64>>,
    /// Why `--check` failed.
    pub check_error: Option<String>,
    /// The analysis time.
    pub seconds: f64,
    /// What the bounds assume of the inputs.
    pub input_assumptions: Vec<AssumptionRecord>,
    /// Each metric's bounds.
    pub metrics: Vec<Metric>,
}

/// One metric's bounds.
#[derive(Serialize)]
pub struct Metric {
    /// The metric.
    pub metric: String,
    /// The bound per warp.
    pub per_warp: Bound,
    /// The span bound per warp.
    pub span_per_warp: Bound,
    /// The whole launch's bound, when the launch is known.
    pub launch: Option<Launch>,
    /// The block-time bound `W/P + S`.
    pub block_time: Option<Derived>,
    /// The `--check` comparison.
    pub check: Option<Check>,
    /// The LP's variables.
    pub lp_variables: usize,
    /// … and constraints.
    pub lp_constraints: usize,
    /// The time this metric took.
    pub seconds: f64,
}

/// A bound, or why there is none.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Bound {
    /// The bound.
    Bound {
        /// As copper prints it.
        bound: String,
        /// As a polynomial, when it is one.
        polynomial: Option<String>,
        /// … in ASCII.
        polynomial_ascii: Option<String>,
        /// What it assumes.
        assumptions: Vec<String>,
    },
    /// Why there is none, and where.
    NoBound {
        /// Why.
        no_bound: String,
        /// The line of the cause.
        line: Option<usize>,
        /// Its column.
        column: Option<usize>,
    },
}

/// A derived bound's text, or why there is none.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Derived {
    /// The bound.
    Bound(String),
    /// Why there is none.
    NoBound {
        /// Why.
        no_bound: String,
    },
}

/// The whole launch's bound.
#[derive(Serialize)]
pub struct Launch {
    /// The launch's warps.
    pub warps: u64,
    /// The bound.
    pub bound: Derived,
}

/// The bound and the simulated worst warp at the `--check` inputs.
#[derive(Serialize)]
pub struct Check {
    /// The bound's value there.
    pub bound: Option<f64>,
    /// The worst warp simulated.
    pub simulated_worst_warp: f64,
}
