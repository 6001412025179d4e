//! Preprocessing like nvcc: `-D`/`-U` definitions and `#include "…"`.
//!
//! [`load`] reads the headers a file includes (relative to the including
//! file, then the `-I` directories), once each, and attaches them to the
//! [`SourceFile`] as [`Included`] text, together with the command line's
//! definitions as `#define` lines. The parser then takes macros, types,
//! device globals and device functions from them as from the file itself.
//! `#include <…>` names a system header: it is read only when found in an
//! `-I` directory and skipped otherwise (an unknown one is remembered in
//! [`Included::skipped`], for the warning when the file launches kernels
//! it does not define). Problems (a missing header, a
//! cycle, nesting deeper than [`MAX_INCLUDE_DEPTH`], too much text) are
//! diagnostics at the directive; the rest of the file goes on.
//!
//! A header outside the file's tree (the file's directory and the `-I`
//! directories, with everything below them), reached by an absolute name,
//! `../` or a link, is read with a note saying where it was read from,
//! or refused with a warning under [`Preprocess::refuse_outside`]
//! (`--no-outside-includes`), for files from a tree copper does not trust.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::lex::{tokenize, TokKind};
use crate::diag::Severity;
use crate::shown::Shown;
use crate::source::{
    read_text, Included, IncludedFile, IncludedKind, SourceFile, Span, MAX_FILE_BYTES,
};

/// Deepest nesting of `#include`s followed.
pub const MAX_INCLUDE_DEPTH: usize = 64;
/// Most bytes of headers one file may include, in all.
pub const MAX_INCLUDED_BYTES: usize = MAX_FILE_BYTES as usize;

/// Why a `-D`, `-U` or `-I` option is refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PreprocessError {
    /// An `-I` naming a file.
    #[error("-I {}: is a file; -I takes a directory of headers", .0.display())]
    IncludeDirIsFile(PathBuf),
    /// An `-I` that cannot be read.
    #[error("-I {}: {source}", .dir.display())]
    IncludeDir {
        /// The directory given.
        dir: PathBuf,
        /// Why it cannot be read.
        source: std::io::Error,
    },
    /// A `-D` value with a line break.
    #[error("-D {0}: the value must be on one line")]
    MultiLineValue(String),
    /// A `-D` or `-U` of something that is not an identifier.
    #[error("`{0}` is not a macro name")]
    NotMacroName(String),
}

error_message!(PreprocessError);

/// One `-D` or `-U` option, applied in command-line order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Define {
    /// `-D NAME[=VALUE]` (`NAME` may be `F(x)`; no value means `1`).
    Set(String, String),
    /// `-U NAME`.
    Unset(String),
}

/// How a file is preprocessed: definitions and include directories.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Preprocess {
    /// `-D`/`-U` options in order (`copper.toml`'s `defines` first).
    pub defines: Vec<Define>,
    /// `-I` directories, searched in order after the including file's own.
    pub include_dirs: Vec<PathBuf>,
    /// Template instantiations to analyze besides those the file launches
    /// (`--instantiate 'reduce<256>'`, `instantiate` in `copper.toml`).
    pub instantiate: Vec<String>,
    /// Refuse to read a header outside the file's tree
    /// (`--no-outside-includes`) instead of reading it with a note.
    pub refuse_outside: bool,
}

impl Preprocess {
    /// Checks that every include directory is a directory.
    pub fn check(&self) -> Result<(), PreprocessError> {
        for d in &self.include_dirs {
            match std::fs::metadata(d) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => return Err(PreprocessError::IncludeDirIsFile(d.clone())),
                Err(source) => {
                    return Err(PreprocessError::IncludeDir {
                        dir: d.clone(),
                        source,
                    })
                }
            }
        }
        Ok(())
    }

    /// The same definitions and directories as compiler flags (`-DN=1024`,
    /// `-UDEBUG`, `-I/abs/inc`), for checking rewrites with nvcc.
    pub fn compiler_flags(&self) -> Vec<String> {
        let mut flags: Vec<String> = self
            .defines
            .iter()
            .map(|d| match d {
                Define::Set(n, v) => format!("-D{n}={v}"),
                Define::Unset(n) => format!("-U{n}"),
            })
            .collect();
        flags.extend(self.include_dirs.iter().map(|d| {
            let d = std::fs::canonicalize(d).unwrap_or_else(|_| d.clone());
            format!("-I{}", d.display())
        }));
        flags
    }

    /// The `#define` lines of the definitions in force after every `-D`
    /// and `-U`.
    pub fn command_line_text(&self) -> String {
        let mut live: Vec<(&str, &str)> = Vec::new();
        for d in &self.defines {
            match d {
                Define::Set(name, value) => {
                    live.retain(|(n, _)| macro_name(n) != macro_name(name));
                    live.push((name, value));
                }
                Define::Unset(name) => live.retain(|(n, _)| macro_name(n) != name),
            }
        }
        live.iter()
            .map(|(n, v)| format!("#define {n} {v}\n"))
            .collect()
    }
}

/// The name of a macro definition `NAME` or `NAME(params)`.
fn macro_name(s: &str) -> &str {
    s.split('(').next().unwrap_or(s)
}

/// What to do about `name`, an identifier nothing defines, where copper
/// needs its value: define it as the build does.
pub fn define_hint(name: &str) -> String {
    format!(
        "`{name}` is not defined in the file or its headers; pass -D{name}=… as to nvcc (or set it in copper.toml's `defines`)"
    )
}

/// Whether `name` looks like a macro (no lowercase letters), so that an
/// unknown identifier of that name is probably a missing `-D`.
pub fn looks_like_macro(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
        && !name.chars().any(|c| c.is_ascii_lowercase())
}

/// Reads a `-D` value: `NAME`, `NAME=VALUE` or `F(x)=VALUE`.
pub fn parse_define(s: &str) -> Result<Define, PreprocessError> {
    let (name, value) = match s.split_once('=') {
        Some((n, v)) => (n, v),
        None => (s, "1"),
    };
    check_macro_name(macro_name(name))?;
    if value.contains(['\n', '\r']) {
        return Err(PreprocessError::MultiLineValue(name.to_string()));
    }
    Ok(Define::Set(name.to_string(), value.to_string()))
}

/// Reads a `-U` value: a macro name.
pub fn parse_undef(s: &str) -> Result<Define, PreprocessError> {
    check_macro_name(s)?;
    Ok(Define::Unset(s.to_string()))
}

fn check_macro_name(n: &str) -> Result<(), PreprocessError> {
    let ok = n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(PreprocessError::NotMacroName(n.to_string()))
    }
}

/// Headers of the CUDA toolkit and the C and C++ libraries: never read,
/// even when an `-I` directory (the toolkit's `include/`) holds them; what
/// copper needs of them (builtin types, `threadIdx`, math functions) it
/// knows already.
const SYSTEM_HEADERS: &[&str] = &[
    "assert.h",
    "float.h",
    "limits.h",
    "math.h",
    "stdbool.h",
    "stddef.h",
    "stdint.h",
    "stdio.h",
    "stdlib.h",
    "string.h",
    "time.h",
    "cassert",
    "cfloat",
    "climits",
    "cmath",
    "cstddef",
    "cstdint",
    "cstdio",
    "cstdlib",
    "cstring",
    "ctime",
    "algorithm",
    "chrono",
    "iostream",
    "fstream",
    "sstream",
    "string",
    "vector",
    "array",
    "memory",
    "random",
    "cuda.h",
    "cuda_runtime.h",
    "cuda_runtime_api.h",
    "device_launch_parameters.h",
    "device_functions.h",
    "cuda_fp16.h",
    "cuda_bf16.h",
    "cuda_texture_types.h",
    "texture_fetch_functions.h",
    "math_functions.h",
    "math_constants.h",
    "vector_types.h",
    "vector_functions.h",
    "sm_20_atomic_functions.h",
    "cooperative_groups.h",
    "curand.h",
    "curand_kernel.h",
    "cublas_v2.h",
    "cufft.h",
    "helper_cuda.h",
    "helper_functions.h",
];

/// Directories of system headers (`<thrust/…>`, `<cub/…>`, …).
const SYSTEM_PREFIXES: &[&str] = &[
    "cuda/",
    "thrust/",
    "cub/",
    "cooperative_groups/",
    "sys/",
    "bits/",
];

/// Whether `name` is a header of the CUDA toolkit or the C/C++ libraries.
pub fn is_system_header(name: &str) -> bool {
    SYSTEM_HEADERS.contains(&name) || SYSTEM_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// What an `#include` directive names.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Target<'a> {
    /// `"name"`.
    Quoted(&'a str),
    /// `<name>`.
    System(&'a str),
    /// Anything else (`#include MACRO`).
    Computed,
}

/// The target of a directive's text, if it is an `#include`.
pub(crate) fn include_target(directive: &str) -> Option<Target<'_>> {
    let body = directive.strip_prefix('#')?.trim_start();
    let rest = body.strip_prefix("include")?;
    if rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let rest = rest.trim_start();
    let quoted = |open: char, close: char| {
        let r = rest.strip_prefix(open)?;
        r.find(close).map(|e| &r[..e])
    };
    Some(if let Some(n) = quoted('"', '"') {
        Target::Quoted(n)
    } else if let Some(n) = quoted('<', '>') {
        Target::System(n)
    } else {
        Target::Computed
    })
}

/// Whether a header guards itself (`#pragma once`, or `#ifndef X` then
/// `#define X` as its first directives), so that including it again is
/// harmless.
fn has_guard(text: &str) -> bool {
    let dirs: Vec<String> = tokenize(text)
        .iter()
        .filter(|t| t.kind == TokKind::Directive)
        .take(2)
        .map(|t| {
            t.text(text)[1..]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    match dirs.as_slice() {
        [first, ..] if first == "pragma once" => true,
        [a, b] => a.strip_prefix("ifndef ").is_some_and(|x| {
            b.strip_prefix("define ")
                .is_some_and(|y| y.split(' ').next() == Some(x))
        }),
        _ => false,
    }
}

/// A problem found while loading, located at an offset.
struct Problem {
    offset: usize,
    severity: Severity,
    message: String,
}

/// The state of one file's loading.
struct Loader<'a> {
    opts: &'a Preprocess,
    included: Included,
    problems: Vec<Problem>,
    /// Canonical paths of the headers being read (innermost last).
    stack: Vec<PathBuf>,
    /// Canonical paths of every header read or being read.
    seen: HashSet<PathBuf>,
    bytes: usize,
    /// The file's tree: its directory and the `-I` directories, canonical.
    trees: Vec<PathBuf>,
}

/// Reads everything `source` includes and the definitions of `opts`, and
/// returns the file with them attached. Never fails: problems become
/// diagnostics in [`Included::diagnostics`].
pub fn load(source: SourceFile, opts: &Preprocess) -> SourceFile {
    let mut loader = Loader {
        opts,
        included: Included::default(),
        problems: Vec::new(),
        stack: Vec::new(),
        seen: HashSet::new(),
        bytes: 0,
        trees: std::iter::once(parent_dir(&source.path))
            .chain(opts.include_dirs.iter().cloned())
            .filter_map(|d| {
                std::fs::canonicalize(if d.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    &d
                })
                .ok()
            })
            .collect(),
    };
    let defines = opts.command_line_text();
    if !defines.is_empty() {
        let base = loader.included.next_base();
        loader.included.files.push(IncludedFile::new(
            "<command line>".into(),
            IncludedKind::CommandLine,
            defines,
            base,
            0,
        ));
    }
    // The user's file is on the stack, so a header including it is a cycle.
    let own = std::fs::canonicalize(&source.path).unwrap_or_else(|_| source.path.clone());
    loader.seen.insert(own.clone());
    loader.stack.push(own);
    let dir = parent_dir(&source.path);
    loader.scan(&source.text, 0, &dir, None, None);
    let problems = std::mem::take(&mut loader.problems);
    loader.included.instantiate = opts.instantiate.clone();
    let mut out = source.with_included(loader.included);
    let diagnostics = problems
        .into_iter()
        .map(|p| {
            (
                p.offset,
                out.diagnostic(p.severity, "include", p.offset, p.message),
            )
        })
        .collect();
    out.set_include_diagnostics(diagnostics);
    out
}

/// The directory of `path` (empty for a bare name: the current directory,
/// so that headers beside it are named `h.h`, not `./h.h`).
fn parent_dir(path: &Path) -> PathBuf {
    path.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// A directory as it is shown (`.` for the current directory).
fn show_dir(d: &Path) -> String {
    if d.as_os_str().is_empty() {
        ".".into()
    } else {
        d.display().to_string()
    }
}

impl Loader<'_> {
    /// Follows the `#include`s of `text`, whose first byte is at `base`, in
    /// directory `dir`; `directive` is the user-file offset of the
    /// `#include` that brought `text` in and `header` its index in the
    /// included files (`None` for the user's file).
    fn scan(
        &mut self,
        text: &str,
        base: usize,
        dir: &Path,
        directive: Option<usize>,
        header: Option<usize>,
    ) {
        for t in tokenize(text) {
            if t.kind != TokKind::Directive {
                continue;
            }
            let at = base + t.start;
            match include_target(t.text(text)) {
                None => {}
                Some(Target::Quoted(name) | Target::System(name)) if is_system_header(name) => {}
                Some(Target::Computed) => self.problem(
                    at,
                    Severity::Warning,
                    "`#include` of a macro is not followed".into(),
                ),
                Some(Target::Quoted(name)) => {
                    let mut dirs = vec![dir.to_path_buf()];
                    dirs.extend(self.opts.include_dirs.iter().cloned());
                    match find(name, &dirs) {
                        Some(p) => self.include(&p, name, at, directive.unwrap_or(at), header),
                        None => {
                            // Each directory once: `-I` may name the
                            // file's own.
                            let mut searched: Vec<String> = Vec::new();
                            for (i, d) in dirs.iter().enumerate() {
                                let shown = show_dir(d);
                                if !dirs[..i].contains(d) && !searched.contains(&shown) {
                                    searched.push(shown);
                                }
                            }
                            self.problem(
                                at,
                                Severity::Warning,
                                format!(
                                    "header `{name}` not found (searched {}); pass -I DIR to say where it is",
                                    searched.join(", ")
                                ),
                            );
                        }
                    }
                }
                Some(Target::System(name)) => match find(name, &self.opts.include_dirs) {
                    Some(p) => self.include(&p, name, at, directive.unwrap_or(at), header),
                    None => self.included.skipped.push((at, name.to_string())),
                },
            }
        }
    }

    fn problem(&mut self, offset: usize, severity: Severity, message: String) {
        self.problems.push(Problem {
            offset,
            severity,
            message,
        });
    }

    /// Reads the header at `path` (named `name` by the directive at `at`,
    /// in the header `parent` or the user's file) and what it includes.
    fn include(
        &mut self,
        path: &Path,
        name: &str,
        at: usize,
        directive: usize,
        parent: Option<usize>,
    ) {
        let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if self.stack.contains(&canon) {
            let (text, _) = read_text(path).unwrap_or_default();
            if !has_guard(&text) {
                let from = self.stack.iter().position(|p| *p == canon).unwrap_or(0);
                let chain: Vec<String> = self.stack[from..]
                    .iter()
                    .chain(std::iter::once(&canon))
                    .map(|p| {
                        p.file_name()
                            .map_or("?".into(), |f| f.to_string_lossy().into_owned())
                    })
                    .collect();
                self.problem(
                    at,
                    Severity::Error,
                    format!(
                        "include cycle: {}; `{name}` is not included again",
                        chain.join(" → ")
                    ),
                );
            }
            return;
        }
        if self.seen.contains(&canon) {
            return;
        }
        let outside = !self.trees.iter().any(|t| canon.starts_with(t));
        if outside && self.opts.refuse_outside {
            self.problem(
                at,
                Severity::Warning,
                format!(
                    "header `{name}` is outside this file's directory and the -I directories ({}); not read (--no-outside-includes)",
                    canon.shown()
                ),
            );
            return;
        }
        if self.stack.len() > MAX_INCLUDE_DEPTH {
            self.problem(
                at,
                Severity::Error,
                format!(
                    "`#include` nested more than {MAX_INCLUDE_DEPTH} deep; `{name}` is not read"
                ),
            );
            return;
        }
        let text = match read_text(path) {
            Ok((t, _)) => t,
            Err(e) => {
                self.problem(
                    at,
                    Severity::Error,
                    format!("cannot read header `{name}` ({}): {e}", path.display()),
                );
                return;
            }
        };
        if self.bytes + text.len() > MAX_INCLUDED_BYTES {
            self.problem(
                at,
                Severity::Error,
                format!(
                    "headers of more than {MAX_INCLUDED_BYTES} bytes in all; `{name}` is not read"
                ),
            );
            return;
        }
        if outside {
            self.problem(
                at,
                Severity::Note,
                format!(
                    "header `{name}` read from {}, outside this file's directory and the -I directories (--no-outside-includes refuses it)",
                    canon.shown()
                ),
            );
        }
        self.bytes += text.len();
        self.seen.insert(canon.clone());
        let base = self.included.next_base();
        let mut file = IncludedFile::new(
            path.to_path_buf(),
            IncludedKind::Header,
            text.clone(),
            base,
            directive,
        );
        file.parent = parent;
        file.name = name.to_string();
        let index = self.included.files.len();
        self.included.files.push(file);
        self.stack.push(canon);
        self.scan(&text, base, &parent_dir(path), Some(directive), Some(index));
        self.stack.pop();
    }
}

/// The first `dir/name` that is a file.
fn find(name: &str, dirs: &[PathBuf]) -> Option<PathBuf> {
    if name.is_empty() {
        return None;
    }
    dirs.iter().map(|d| d.join(name)).find(|p| p.is_file())
}

/// Whether `span` is in the user's file (not in a header or the command
/// line).
pub fn in_user_file(span: Span) -> bool {
    !span.is_included() && !span.is_synthetic()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_name_their_targets() {
        assert_eq!(
            include_target("#include \"a.h\""),
            Some(Target::Quoted("a.h"))
        );
        assert_eq!(
            include_target("#  include <cstdio> // x"),
            Some(Target::System("cstdio"))
        );
        assert_eq!(include_target("#include HDR"), Some(Target::Computed));
        assert_eq!(include_target("#include_next <a>"), None);
        assert_eq!(include_target("#define X"), None);
    }

    #[test]
    fn defines_apply_in_order() {
        let p = Preprocess {
            defines: vec![
                parse_define("N=1024").unwrap(),
                parse_define("DEBUG").unwrap(),
                parse_define("F(x)=((x)+1)").unwrap(),
                parse_define("N=2048").unwrap(),
                parse_undef("DEBUG").unwrap(),
            ],
            include_dirs: Vec::new(),
            ..Preprocess::default()
        };
        assert_eq!(
            p.command_line_text(),
            "#define F(x) ((x)+1)\n#define N 2048\n"
        );
        assert!(parse_define("1N=2").is_err());
        assert!(parse_define("N=a\nb").is_err());
        assert!(parse_undef("a-b").is_err());
    }

    #[test]
    fn system_headers_are_known() {
        assert!(is_system_header("cuda_runtime.h") && is_system_header("thrust/sort.h"));
        assert!(!is_system_header("stencil.h"));
    }

    #[test]
    fn guards_are_recognised() {
        assert!(has_guard("// c\n#pragma once\nint x;"));
        assert!(has_guard("#ifndef A_H\n#define A_H\n#endif"));
        assert!(!has_guard("#include \"b.h\"\n"));
    }
}
