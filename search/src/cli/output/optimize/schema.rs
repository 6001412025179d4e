//! The JSON that `copper optimize` writes (`--format json`, and the
//! `--report` lines, one [`Kernel`] each), as typed structures: one
//! schema for both, checked by the compiler. Keys print in alphabetical
//! order ([`crate::cli::output::json`]).

use copper::launch::Dims;
use std::collections::BTreeMap;

use copper::bound::AssumptionRecord;
use serde::Serialize;

/// The document of `--format json`.
#[derive(Serialize)]
pub struct Document {
    /// Every kernel of every file.
    pub kernels: Vec<Kernel>,
    /// The diff of each file that was rewritten.
    pub diffs: Vec<FileDiff>,
    /// The run's time.
    pub seconds: f64,
}

/// The diff of one rewritten file.
#[derive(Serialize)]
pub struct FileDiff {
    /// The file.
    pub file: String,
    /// Its unified diff.
    pub diff: String,
}

/// One kernel's object, or a file's that could not be read.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Kernel {
    /// A file that could not be read.
    Unread(Unread),
    /// A kernel of a file that was read.
    Read(Box<ReadKernel>),
}

/// A file that could not be read.
#[derive(Serialize)]
pub struct Unread {
    /// The file.
    pub file: String,
    /// Always `error`.
    pub status: &'static str,
    /// Why.
    pub error: String,
}

/// A kernel: where it is, its launch shape, and its search's outcome.
#[derive(Serialize)]
pub struct ReadKernel {
    /// The file.
    pub file: String,
    /// The kernel's name.
    pub kernel: String,
    /// Its line.
    pub line: usize,
    /// Its column.
    pub column: usize,
    /// `improved`, `rewritten`, `unchanged`, `unchecked`, `no bound` or
    /// `error`.
    pub status: &'static str,
    /// The block it was analyzed for.
    pub block: Option<Dims>,
    /// The grid.
    pub grid: Option<Dims>,
    /// Where the shape came from, in words.
    pub shape_from: String,
    /// Whether the block was assumed.
    pub block_assumed: bool,
    /// The ranking metric.
    pub metric: String,
    /// The search's outcome.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// What the search of a kernel gave.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Outcome {
    /// The search failed.
    Failed {
        /// Why.
        error: String,
    },
    /// The search ran.
    Searched(Box<Searched>),
}

/// A search's result.
#[derive(Serialize)]
pub struct Searched {
    /// Every metric's bound before and after.
    pub bounds: Vec<BoundPair>,
    /// The ranking metric's bound before.
    pub bound_before: String,
    /// … and after.
    pub bound_after: String,
    /// Its value at the ranking sizes before.
    pub value_before: Option<f64>,
    /// … and after.
    pub value_after: Option<f64>,
    /// Their ratio.
    pub improvement: Option<f64>,
    /// The simulated costs, when the parameter file gives a launch.
    #[serde(flatten)]
    pub simulated: Option<SimulatedFields>,
    /// The sizes the values are at.
    pub sizes: Option<Sizes>,
    /// The sizes in words.
    pub sizes_text: Option<String>,
    /// How the candidates were ranked, in words.
    pub ranked: Option<String>,
    /// A candidate whose bound is lower only at larger sizes.
    pub wins_later: Option<WinsLater>,
    /// The transforms applied, joined by commas.
    pub transforms_text: String,
    /// What the bounds assume of the inputs.
    pub input_assumptions: Vec<AssumptionRecord>,
    /// The kernel whose search rewrote the template this one instantiates.
    pub through: Option<String>,
    /// What the rewrite assumes of its callers.
    pub preconditions: Vec<String>,
    /// The transforms applied.
    pub applied: Vec<AppliedTransform>,
    /// Suggestions beside the rewrite.
    pub suggestions: Vec<Suggestion>,
    /// On how many launches the candidates were checked.
    pub checked_launches: Option<usize>,
    /// Why no candidate could be checked.
    pub check_error: Option<String>,
    /// Why the kernel was not rewritten.
    pub not_rewritten: Option<String>,
    /// The test launches, in words.
    pub test_launch: Vec<String>,
    /// Whether candidates were compiled with nvcc.
    pub nvcc_checked: bool,
    /// Why the original failed with nvcc.
    pub nvcc_error: Option<String>,
    /// How many candidates were considered.
    pub candidates: usize,
    /// Why the search stopped early.
    pub search_stopped: Option<String>,
    /// The search's time.
    pub seconds: f64,
    /// The improved kernel's text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_after: Option<String>,
    /// The edits that put it in the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edits: Option<Vec<Edit>>,
}

/// One metric's bound before and after.
#[derive(Serialize)]
pub struct BoundPair {
    /// The metric.
    pub metric: String,
    /// The bound before, in words.
    pub before: String,
    /// … after.
    pub after: String,
    /// Its value at the ranking sizes before.
    pub before_value: Option<f64>,
    /// … after.
    pub after_value: Option<f64>,
}

/// The simulated costs of the parameter file's launch.
#[derive(Serialize)]
pub struct SimulatedFields {
    /// Every metric's, or why there are none.
    pub simulated: SimulatedCosts,
    /// The ranking metric's before.
    pub simulated_before: Option<f64>,
    /// … after.
    pub simulated_after: Option<f64>,
    /// Their ratio.
    pub simulated_improvement: Option<f64>,
}

/// Every metric's simulated worst warp, or why there is none.
#[derive(Serialize)]
#[serde(untagged)]
pub enum SimulatedCosts {
    /// The costs.
    Costs {
        /// The launch, in words.
        launch: String,
        /// Before, per metric.
        before: BTreeMap<String, f64>,
        /// After, per metric.
        after: BTreeMap<String, f64>,
    },
    /// Why there are none.
    Error {
        /// Why.
        error: String,
    },
}

/// The sizes the bounds' values are at.
#[derive(Serialize)]
pub struct Sizes {
    /// Where they came from.
    pub from: String,
    /// Each size by name.
    pub values: BTreeMap<String, f64>,
}

/// A candidate that wins at larger sizes.
#[derive(Serialize)]
pub struct WinsLater {
    /// Its transform.
    pub transform: &'static str,
    /// The sizes from which it wins.
    pub from: BTreeMap<String, f64>,
    /// In words.
    pub text: String,
}

/// A transform applied.
#[derive(Serialize)]
pub struct AppliedTransform {
    /// Its name.
    pub transform: &'static str,
    /// What it did.
    pub description: String,
    /// Why it was chosen.
    pub why: String,
}

/// A suggestion beside the rewrite.
#[derive(Serialize)]
pub struct Suggestion {
    /// Always `read-only data path`.
    pub kind: &'static str,
    /// What it does.
    pub description: String,
    /// The kernel with it.
    pub kernel_after: String,
}

/// One edit of the file as read.
#[derive(Serialize)]
pub struct Edit {
    /// Where the replaced region starts.
    pub start: Position,
    /// Where it ends (exclusive).
    pub end: Position,
    /// The text put there.
    pub text: String,
}

/// A place in a file: 1-based line and column, and byte offset.
#[derive(Serialize)]
pub struct Position {
    /// The line.
    pub line: usize,
    /// The column.
    pub column: usize,
    /// The byte offset.
    pub byte: usize,
}
