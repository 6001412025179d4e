//! The JSON that `copper lint` writes (`--format json`, and the
//! `--report` lines, one [`File`] each), as typed structures: one schema
//! for both, checked by the compiler. Keys print in alphabetical order
//! ([`crate::cli::output::json`]).

use copper::diag::Severity;
use copper::lint::{BlockSize, Code};
use serde::Serialize;

/// The document of `--format json`: every file's results.
#[derive(Serialize)]
pub struct Document<'a> {
    /// The files.
    pub files: Vec<File<'a>>,
}

/// One file's results.
#[derive(Serialize)]
pub struct File<'a> {
    /// The file, as given.
    pub file: String,
    /// How many findings and errors are errors.
    pub error_count: usize,
    /// … and warnings.
    pub warning_count: usize,
    /// What could not be read.
    pub errors: Vec<Error>,
    /// Suppressions that suppress nothing.
    pub unused_suppressions: Vec<Error>,
    /// The findings.
    pub findings: Vec<Finding<'a>>,
    /// Every kernel linted.
    pub kernels: Vec<Kernel<'a>>,
}

/// An error or warning about the file rather than a finding.
#[derive(Serialize)]
pub struct Error {
    /// The file.
    pub file: String,
    /// Its line (none for a whole file).
    pub line: Option<usize>,
    /// Its column (none for a whole file).
    pub column: Option<usize>,
    /// How serious it is.
    pub severity: Severity,
    /// Its code.
    pub code: &'static str,
    /// What it says.
    pub message: String,
}

/// A finding.
#[derive(Serialize)]
pub struct Finding<'a> {
    /// The kernel it is in.
    pub kernel: &'a str,
    /// The file it is in (the user's or a header).
    pub file: String,
    /// Its code.
    pub code: Code,
    /// Its line.
    pub line: usize,
    /// Its column.
    pub column: usize,
    /// What it says.
    pub message: &'a str,
    /// Why it costs.
    pub why: &'a str,
    /// How to fix it.
    pub help: Option<&'a str>,
    /// The worst case, in the finding's unit.
    pub worst: Option<f64>,
    /// The inlined calls that reach it.
    pub calls: Vec<Call>,
    /// The bank-conflict witness, under `--witness`.
    pub witness: Option<Witness>,
    /// Its severity.
    pub severity: Severity,
    /// Whether it depends on the block copper assumed.
    pub depends_on_assumed_block: bool,
}

/// An inlined call reaching a finding.
#[derive(Serialize)]
pub struct Call {
    /// Its line.
    pub line: usize,
    /// Its column.
    pub column: usize,
}

/// A bank-conflict witness, or why there is none.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Witness {
    /// Inputs that make the conflict happen.
    Found {
        /// Always true.
        found: bool,
        /// The array the inputs fill.
        array: String,
        /// Its values.
        values: Vec<WitnessValue>,
        /// The transactions simulated.
        simulated: u64,
        /// The largest collision proved possible.
        largest: Option<u64>,
        /// What proves it (`bound` or `milp`).
        proof: Option<&'static str>,
    },
    /// The degree is impossible.
    Impossible {
        /// Always false.
        found: bool,
        /// The degree proved impossible.
        impossible: u64,
        /// The largest collision.
        largest: u64,
        /// What proves it.
        proof: &'static str,
    },
    /// None was found.
    NotFound {
        /// Always false.
        found: bool,
        /// Why.
        why: String,
    },
}

/// A witness value as the array's type writes it: integers without a
/// fraction.
#[derive(Serialize)]
#[serde(untagged)]
pub enum WitnessValue {
    /// An integer.
    Integer(i64),
    /// A floating-point value.
    Float(f64),
}

/// A kernel linted.
#[derive(Serialize)]
pub struct Kernel<'a> {
    /// Its name.
    pub kernel: &'a str,
    /// The file it is defined in.
    pub file: String,
    /// Its line.
    pub line: usize,
    /// Its column.
    pub column: usize,
    /// The block-size verdict.
    pub block_size: &'a BlockSize,
    /// The block copper assumed, and why.
    pub assumed_block: Option<&'a str>,
    /// What the work limit stopped.
    pub work_limit_stopped: Option<&'a str>,
    /// The kernel's lint time.
    pub seconds: f64,
}
