//! The JSON that `copper parse --format json` writes, as typed
//! structures. Keys print in alphabetical order
//! ([`crate::cli::output::json`]).

use std::path::Path;

use copper::cuda::ast::FnKind;
use copper::cuda::launch::Launch;
use copper::diag::Diagnostic;
use serde::Serialize;

/// The document: a file's functions and diagnostics.
#[derive(Serialize)]
pub struct Document<'a> {
    /// The file.
    pub file: &'a Path,
    /// Its functions (and those of its headers).
    pub functions: Vec<Function<'a>>,
    /// What copper could not read outside any function.
    pub diagnostics: &'a [Diagnostic],
}

/// A function copper read, or could not.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Function<'a> {
    /// One copper read.
    Read(Box<ReadFunction<'a>>),
    /// One it could not read.
    Unread {
        /// Its name.
        name: &'a str,
        /// The file it is in.
        file: &'a Path,
        /// Its line.
        line: usize,
        /// Its column.
        col: usize,
        /// Why it could not be read.
        error: &'a Diagnostic,
    },
}

/// A function copper read.
#[derive(Serialize)]
pub struct ReadFunction<'a> {
    /// Its name.
    pub name: &'a str,
    /// `global`, `device` or `host`.
    pub kind: FnKind,
    /// Whether it is a template never instantiated.
    pub template: bool,
    /// A note on it (a template nothing instantiates).
    pub note: Option<String>,
    /// The file it is in.
    pub file: &'a Path,
    /// Its line.
    pub line: usize,
    /// Its column.
    pub col: usize,
    /// Its signature.
    pub signature: String,
    /// Its parameters.
    pub params: Vec<Param<'a>>,
    /// The file's launches of it.
    pub launches: Vec<&'a Launch>,
}

/// A parameter.
#[derive(Serialize)]
pub struct Param<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its type, as copper prints it.
    #[serde(rename = "type")]
    pub ty: String,
}
