//! The JSON that `copper simulate` writes (`--format json`, and the
//! `--dump` file), as typed structures. Keys print in alphabetical order
//! ([`crate::cli::output::json`]).

use std::collections::BTreeMap;

use copper::diag::Diagnostic;
use copper::sim::{MetricResult, SiteStats};
use serde::Serialize;

/// The document of `--format json`: a file's kernels.
#[derive(Serialize)]
pub struct Document {
    /// The file.
    pub file: String,
    /// Each kernel simulated.
    pub kernels: Vec<Kernel>,
}

/// A kernel's simulation, or why it failed.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Kernel {
    /// The kernel ran.
    Ran(Box<Run>),
    /// It failed.
    Failed {
        /// Its name.
        kernel: String,
        /// Why.
        error: Diagnostic,
    },
}

/// What a kernel's launch cost.
#[derive(Serialize)]
pub struct Run {
    /// Its name.
    pub kernel: String,
    /// The blocks run.
    pub blocks: u64,
    /// The warps run.
    pub warps: u64,
    /// The warp-instructions run.
    pub instructions: u64,
    /// The simulator's work units.
    pub work_units: u64,
    /// The simulation's time.
    pub seconds: f64,
    /// Each metric's costs.
    pub metrics: Vec<MetricResult>,
    /// Each access site's statistics.
    pub sites: Vec<Site>,
}

/// An access site's statistics.
#[derive(Serialize)]
pub struct Site {
    /// `file:line:col`.
    pub location: String,
    /// The access, in words.
    pub access: String,
    /// Its requests, transactions and conflicts.
    pub stats: SiteStats,
}

/// The `--dump` file: per kernel, each array's final values.
pub type Dump = BTreeMap<String, BTreeMap<String, Vec<DumpValue>>>;

/// A value of a dumped array.
#[derive(Serialize)]
#[serde(untagged)]
pub enum DumpValue {
    /// An integer.
    Integer(i64),
    /// A finite floating-point value.
    Float(f64),
    /// A value JSON has no number for (`inf`, `NaN`), as text.
    Text(String),
}
