//! The source files a batch command reads: files as given, directories
//! searched for `.cu` and `.cuh` files the way ripgrep and ruff search
//! (`.gitignore`, `.ignore` and hidden directories respected unless
//! `--no-ignore`), following symbolic links without looping (or, with
//! `--no-follow`, skipping them), each file once, and never opening what
//! is not a regular file.

use copper::shown::Shown;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignores::Ignores;

mod ignores;

/// The files found, and notes about what was left out.
#[derive(Debug, Default)]
pub struct Found {
    /// The files, sorted by path.
    pub files: Vec<PathBuf>,
    /// One line per thing skipped (`PATH: why`), for stderr.
    pub notes: Vec<String>,
}

/// The extensions searched for in directories.
pub const EXTENSIONS: [&str; 2] = ["cu", "cuh"];

/// Why the paths given name no source files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WalkError {
    /// A path that cannot be read.
    #[error("{}: {source}", path.shown())]
    Missing {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A directory without a source file.
    #[error(
        "{}: no .cu or .cuh files in this directory{}",
        dir.shown(),
        if *no_ignore { "" } else { " (ignored files and hidden directories are skipped; --no-ignore searches them)" }
    )]
    Empty {
        /// The directory.
        dir: PathBuf,
        /// Whether ignored files were searched too.
        no_ignore: bool,
    },
}

/// Stack of each worker thread (address space; only what is used is
/// memory), as large as the main thread's: workers recurse over kernel
/// syntax as the main thread does (a chain of thousands of unary minuses).
const WORKER_STACK_BYTES: usize = 256 * 1024 * 1024;

/// Starts the worker threads files are spread over: `jobs` of them
/// (default: one per core), each with the main thread's stack.
pub fn start_workers(jobs: Option<u64>) {
    let mut pool = rayon::ThreadPoolBuilder::new().stack_size(WORKER_STACK_BYTES);
    if let Some(j) = jobs {
        pool = pool.num_threads(j as usize);
    }
    // Only fails when the global pool exists already; then it is used.
    let _ = pool.build_global();
}

/// The source files named by `paths`, following the links in the
/// directories searched when `follow`. A path that does not exist, or a
/// directory without a source file, is an error.
pub fn collect_files(paths: &[PathBuf], no_ignore: bool, follow: bool) -> Result<Found, WalkError> {
    let mut found = Found::default();
    let mut seen = HashSet::new();
    for p in paths {
        if copper::input::is_stdin(p) {
            found.files.push(p.clone());
            continue;
        }
        let meta = std::fs::metadata(p).map_err(|source| WalkError::Missing {
            path: p.clone(),
            source,
        })?;
        if !meta.is_dir() {
            // Reading it reports what is wrong (a FIFO is refused unopened).
            if seen.insert(identity(&meta).unwrap_or_else(|| path_identity(p))) {
                found.files.push(p.clone());
            }
            continue;
        }
        let before = found.files.len();
        walk(p, no_ignore, follow, &mut seen, &mut found);
        if found.files.len() == before {
            return Err(WalkError::Empty {
                dir: p.clone(),
                no_ignore,
            });
        }
    }
    found.files.sort();
    Ok(found)
}

/// The file `path` resolves to, when it lies outside every one of
/// `roots` (a link led there).
pub fn outside_roots(path: &Path, roots: &[PathBuf]) -> Option<PathBuf> {
    let target = std::fs::canonicalize(path).ok()?;
    let inside = roots
        .iter()
        .any(|r| std::fs::canonicalize(r).is_ok_and(|r| target.starts_with(&r) || target == r));
    (!inside).then_some(target)
}

/// A file's device and inode (the same file through two links is one).
#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// A stand-in identity from the path, where the platform has no inodes.
fn path_identity(p: &Path) -> (u64, u64) {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::fs::canonicalize(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .hash(&mut h);
    (u64::MAX, h.finish())
}

fn walk(
    dir: &Path,
    no_ignore: bool,
    follow: bool,
    seen: &mut HashSet<(u64, u64)>,
    found: &mut Found,
) {
    let ignores = Arc::new(Ignores::new(dir));
    let mut builder = ignore::WalkBuilder::new(dir);
    // The crate's own reading of ignore files is off: copper reads them.
    builder
        .standard_filters(false)
        .hidden(!no_ignore)
        .follow_links(follow)
        .sort_by_file_name(|a, b| a.cmp(b));
    if !no_ignore {
        let ignores = ignores.clone();
        builder.filter_entry(move |e| {
            !ignores.ignored(e.path(), e.file_type().is_some_and(|t| t.is_dir()))
        });
    }
    let walker = builder.build();
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                found.notes.push(format!("skipped: {e}"));
                continue;
            }
        };
        let path = entry.path();
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            continue;
        }
        if !follow && entry.path_is_symlink() {
            found.notes.push(format!(
                "{}: skipped: a symbolic link (--no-follow)",
                path.shown()
            ));
            continue;
        }
        if !path
            .extension()
            .is_some_and(|x| EXTENSIONS.iter().any(|e| x == *e))
        {
            continue;
        }
        // Following the link: what it points to must be a regular file.
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_file() => {
                if seen.insert(identity(&meta).unwrap_or_else(|| path_identity(path))) {
                    found.files.push(path.to_path_buf());
                }
            }
            Ok(_) => found.notes.push(format!(
                "{}: skipped: not a regular file (a FIFO, socket or device)",
                path.shown()
            )),
            Err(e) => found.notes.push(format!("{}: skipped: {e}", path.shown())),
        }
    }
    found.notes.extend(ignores.take_notes());
}
