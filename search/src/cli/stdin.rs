//! `-` as a file: standard input, read once and named by
//! `--stdin-filename` (as ruff and clang-format do), so that diagnostics
//! carry a file name and headers and a parameter file are found beside it.

use std::path::{Path, PathBuf};

use copper::input::{provide_stdin, InputFileError};

use super::args::Command;

/// Why `-` cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum StdinError {
    /// `--write` would write to standard input.
    #[error("`-` (standard input) cannot be updated in place: use --diff, or name the file")]
    Write,
    /// `bench` writes a program next to the source.
    #[error("`copper bench` needs a file on disk, not `-` (standard input)")]
    Bench,
    /// `-` given twice.
    #[error("`-` (standard input) given more than once")]
    Twice,
    /// Reading failed.
    #[error("standard input: {0}")]
    Read(#[from] InputFileError),
}

/// When a file of `command` is `-`, reads standard input, lets `name`
/// stand for it and puts `name` in the place of `-`.
pub fn read_if_named(command: &mut Command, name: &Path) -> Result<(), StdinError> {
    let paths: Vec<&mut PathBuf> = match command {
        Command::Parse { files, .. } => files.iter_mut().collect(),
        Command::Fmt { file, .. }
        | Command::Params { file, .. }
        | Command::Annotate { file, .. } => vec![file],
        Command::Analyze(a) => vec![&mut a.file],
        Command::Simulate(a) => vec![&mut a.file],
        Command::Optimize(a) => {
            if a.write && a.paths.iter().any(|p| is_dash(p)) {
                return Err(StdinError::Write);
            }
            a.paths.iter_mut().collect()
        }
        Command::Lint(a) => a.files.iter_mut().collect(),
        Command::Bench(a) if is_dash(&a.file) => return Err(StdinError::Bench),
        Command::Bench(_) | Command::Explain { .. } => Vec::new(),
    };
    let mut dashes: Vec<&mut PathBuf> = paths.into_iter().filter(|p| is_dash(p)).collect();
    match dashes.len() {
        0 => Ok(()),
        1 => {
            provide_stdin(name)?;
            *dashes[0] = name.to_path_buf();
            Ok(())
        }
        _ => Err(StdinError::Twice),
    }
}

fn is_dash(p: &Path) -> bool {
    p.as_os_str() == "-"
}
