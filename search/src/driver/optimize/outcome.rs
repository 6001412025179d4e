//! What the search driver found, file by file and kernel by kernel: the
//! driver fills it, the `copper optimize` command prints it.

use std::path::PathBuf;

use copper::cuda::parse::ParsedFile;
use copper::diag::Diagnostic;

use super::simulated::Simulated;
use crate::launch::{KnownShape, ParamsError};
use crate::pipeline::{KernelResult, SearchError};

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
    /// The file's diagnostics, then notes on its kernels' undefined
    /// identifiers and on the template kernels it never instantiates.
    pub diagnostics: Vec<Diagnostic>,
    /// The whole file with the improved kernels, when any improved.
    pub rewritten: Option<String>,
    /// The caller could not write the rewritten file (an I/O error, which
    /// the caller reported).
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
    /// With [`super::Request::simulate`]: the original and the best version
    /// simulated on the test launch (the search's own best, before a
    /// template instantiation adopts its lead's rewrite), or why not.
    pub simulated: Option<Result<Simulated, String>>,
}
