//! What `copper optimize` found, file by file and kernel by kernel, and
//! the patch of a file; the command fills it, the report prints it.

use std::path::PathBuf;

use copper::cuda::diff::unified;
use copper::cuda::parse::ParsedFile;
use copper_search::launch::KnownShape;
use copper_search::pipeline::KernelResult;

use super::patch::PatchBase;

/// One file of the run.
pub struct FileRun {
    /// Its path as given.
    pub path: PathBuf,
    /// The file, parsed; or why it could not be read.
    pub parsed: Result<ParsedFile, String>,
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
    pub result: Result<KernelResult, String>,
    /// False when the kernel itself could not be read (its diagnostic is
    /// among the file's).
    pub readable: bool,
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
