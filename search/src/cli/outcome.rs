//! What `copper optimize` found, file by file and kernel by kernel, and
//! the patch of a file; the command fills it, the report prints it.

use std::path::PathBuf;

use copper::cuda::diff::unified;
use copper::cuda::parse::ParsedFile;
use copper::diag::Diagnostic;
use copper_search::launch::{KnownShape, ParamsError};
use copper_search::pipeline::{KernelResult, SearchError};

use super::patch::PatchBase;
use super::report::simulated::Simulated;

/// Why a file of the run could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// It cannot be read or preprocessed (the diagnostic, rendered).
    #[error("{}", .0.render())]
    Parse(Diagnostic),
    /// Its parameter file cannot be used.
    #[error(transparent)]
    Params(#[from] ParamsError),
}

/// Why a kernel of the run has no result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KernelError {
    /// The kernel cannot be read: its diagnostic, at `line:col`.
    #[error("{line}:{col}: {message}")]
    Unreadable {
        /// Line.
        line: usize,
        /// Column.
        col: usize,
        /// The diagnostic's message.
        message: String,
    },
    /// The search could not run.
    #[error(transparent)]
    Search(#[from] SearchError),
}

/// One file of the run.
pub struct FileRun {
    /// Its path as given.
    pub path: PathBuf,
    /// The file, parsed; or why it could not be read.
    pub parsed: Result<ParsedFile, FileError>,
    /// Its kernels' results, in file order.
    pub kernels: Vec<KernelRun>,
    /// Diagnostics of functions copper could not read.
    pub diagnostics: Vec<String>,
    /// The whole file with the improved kernels, when any improved.
    pub rewritten: Option<String>,
    /// `--write` could not replace the file (an I/O error, reported).
    pub write_failed: bool,
}

/// One kernel of the run.
pub struct KernelRun {
    /// The kernel.
    pub name: String,
    /// Where it starts (line, column).
    pub at: (usize, usize),
    /// Its launch shape.
    pub shape: KnownShape,
    /// The search's outcome, or why there was none.
    pub result: Result<KernelResult, KernelError>,
    /// False when the kernel itself could not be read (its diagnostic is
    /// among the file's).
    pub readable: bool,
    /// With `--report`: the original and the best version simulated on
    /// the test launch, or why they could not be.
    pub simulated: Option<Result<Simulated, String>>,
}

/// The unified diff of a file's rewrite (empty when nothing improved),
/// the file named relative to `base`.
pub fn file_diff(f: &FileRun, base: &PatchBase) -> String {
    match (&f.parsed, &f.rewritten) {
        (Ok(p), Some(new)) => unified(&base.name(&p.source.path), &p.source.text, new),
        _ => String::new(),
    }
}

/// Where the patch of a batch applies from: what the rewritten files have
/// in common.
pub fn patch_base(runs: &[FileRun]) -> PatchBase {
    PatchBase::of(
        runs.iter()
            .filter(|f| f.rewritten.is_some())
            .map(|f| f.path.as_path()),
    )
}
