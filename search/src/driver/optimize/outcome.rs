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
    /// A header searched for the kernels a file given uses, not a file
    /// given itself (summaries count it apart).
    pub header: bool,
}

impl FileRun {
    /// A file read (or not), its kernels not searched yet.
    pub(super) fn new(
        path: PathBuf,
        parsed: Result<ParsedFile, FileError>,
        diagnostics: Vec<Diagnostic>,
    ) -> FileRun {
        FileRun {
            path,
            parsed,
            kernels: Vec::new(),
            diagnostics,
            rewritten: None,
            write_failed: false,
            header: false,
        }
    }
}

/// Where a kernel is defined, as messages about it point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Defined {
    /// The file given, or the header the kernel is defined in.
    pub file: PathBuf,
    /// 1-based line in it.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
}

impl Defined {
    /// Where the text at `offset` of `parsed` (in the file or a header) is.
    pub fn at(parsed: &ParsedFile, offset: usize) -> Defined {
        let (file, line, col) = parsed.source.locate(offset);
        Defined {
            file: file.to_path_buf(),
            line,
            col,
        }
    }
}

/// One kernel of the run.
pub struct KernelRun {
    /// The kernel.
    pub name: String,
    /// Where it starts in the file given (line, column): for a kernel of
    /// a header, the `#include` that brought it in (the order of kernels).
    pub at: (usize, usize),
    /// Where it is defined: the file given or a header (the path as found),
    /// line and column there.
    pub defined: Defined,
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
