//! Source files: their text, path, and byte-offset to line/column mapping.
//!
//! A file may pull in text from elsewhere: headers named by `#include`
//! directives and definitions from the command line (`-D`). That text is
//! [`Included`] in the file and addressed by offsets at or past
//! [`INCLUDED_BASE`], so a [`Span`] stays a plain byte range: spans below
//! it are in the user's file (the only text rewrites ever change), spans
//! above it are in an included file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diag::{Diagnostic, Severity};
use crate::input::{read_input, InputFileError, MAX_INPUT_BYTES};

/// Largest source file copper reads (bytes). Larger files are rejected with a
/// diagnostic instead of being parsed.
pub const MAX_FILE_BYTES: u64 = MAX_INPUT_BYTES;

/// First offset of included text: every offset from here on is in a header
/// or the command line's definitions, never in the user's file.
pub const INCLUDED_BASE: usize = usize::MAX / 4;

/// A byte range `[start, end)` into a source file's text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// The span `[start, end)`.
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    /// The span of a node that copper made up (no place in the user's file).
    pub const SYNTHETIC: Span = Span {
        start: usize::MAX,
        end: usize::MAX,
    };

    /// Whether this span points nowhere (a synthesized node).
    pub fn is_synthetic(&self) -> bool {
        self.start == usize::MAX
    }

    /// Whether this span is in included text (a header or the command
    /// line), not in the user's file.
    pub fn is_included(&self) -> bool {
        self.start >= INCLUDED_BASE && !self.is_synthetic()
    }
}

/// Start offsets of the lines of a text.
#[derive(Clone, Debug, Default)]
struct Lines(Vec<usize>);

impl Lines {
    fn of(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines(starts)
    }

    /// 1-based line and column (in characters) of `offset` in `text`; a
    /// byte-order mark at the start of the file is not a column.
    fn line_col(&self, text: &str, offset: usize) -> (usize, usize) {
        let offset = offset.min(text.len());
        let line = match self.0.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.0[line];
        let chars = &text[start..floor_char_boundary(text, offset)];
        let bom = usize::from(line == 0 && chars.starts_with('\u{feff}'));
        (line + 1, chars.chars().count() - bom + 1)
    }

    fn line_text<'a>(&self, text: &'a str, line: usize) -> &'a str {
        let Some(&start) = self.0.get(line.wrapping_sub(1)) else {
            return "";
        };
        let end = self.0.get(line).map(|&e| e - 1).unwrap_or(text.len());
        text[start..end]
            .trim_end_matches('\r')
            .trim_start_matches('\u{feff}')
    }
}

/// What an included file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IncludedKind {
    /// A header named by an `#include` directive.
    Header,
    /// The definitions given on the command line or in `copper.toml`
    /// (`-D NAME=VALUE`), as `#define` lines.
    CommandLine,
    /// The expansion of a file-scope macro invocation that defines
    /// functions (`UNARY(neg, -x[i])`): its text is the expanded tokens,
    /// and every position in it is reported at the invocation.
    Expansion,
}

/// One included file: its text and where it sits.
#[derive(Clone, Debug)]
pub struct IncludedFile {
    /// The path as it was found (`<command line>` for definitions).
    pub path: PathBuf,
    /// Header or command-line definitions.
    pub kind: IncludedKind,
    /// Its text.
    pub text: String,
    /// Offset of its first byte (at or past [`INCLUDED_BASE`]).
    pub base: usize,
    /// Offset in the user's file of the `#include` that brought it in
    /// (directly or through other headers); 0 for the command line; for
    /// an expansion, the offset of the macro's invocation (in the user's
    /// file or a header).
    pub directive: usize,
    /// The header whose `#include` brought it in (an index in
    /// [`Included::files`]); `None` for the user's file or the command line.
    pub parent: Option<usize>,
    /// The name as the `#include` wrote it (empty for the command line;
    /// the macro's name for an expansion).
    pub name: String,
    lines: Lines,
}

impl IncludedFile {
    /// An included file at `base`.
    pub fn new(
        path: PathBuf,
        kind: IncludedKind,
        text: String,
        base: usize,
        directive: usize,
    ) -> IncludedFile {
        let lines = Lines::of(&text);
        IncludedFile {
            path,
            kind,
            text,
            base,
            directive,
            parent: None,
            name: String::new(),
            lines,
        }
    }

    /// The span its text occupies.
    pub fn span(&self) -> Span {
        Span::new(self.base, self.base + self.text.len())
    }
}

/// Everything a file includes, and what went wrong including it.
#[derive(Clone, Debug, Default)]
pub struct Included {
    /// Included files, in increasing `base` order.
    pub files: Vec<IncludedFile>,
    /// Problems with `#include` directives (missing headers, cycles, …),
    /// each with the offset of its directive.
    pub diagnostics: Vec<(usize, Diagnostic)>,
    /// Template instantiations asked for besides the file's launches
    /// (`--instantiate 'reduce<256>'`).
    pub instantiate: Vec<String>,
    /// `#include <…>` directives that were skipped: headers not known to
    /// be the toolkit's or the C/C++ libraries' and not found in the `-I`
    /// directories (the directive's offset, the name). Harmless unless the
    /// file uses what they define (see `cuda::undefined_kernels`).
    pub skipped: Vec<(usize, String)>,
}

impl Included {
    /// The offset where the next included file would go.
    pub fn next_base(&self) -> usize {
        self.files
            .last()
            .map_or(INCLUDED_BASE, |f| f.base + f.text.len() + 1)
    }

    fn file_at(&self, offset: usize) -> Option<&IncludedFile> {
        let i = self.files.partition_point(|f| f.base <= offset);
        self.files.get(i.checked_sub(1)?)
    }
}

/// A source file held in memory, with an index of line starts, and the
/// text it includes.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// Path as the user gave it (used in diagnostics).
    pub path: PathBuf,
    /// The whole text of the user's file (exactly its bytes when they are
    /// UTF-8).
    pub text: String,
    /// Offsets of characters that replace bytes that were not UTF-8.
    pub invalid_utf8: Vec<usize>,
    lines: Lines,
    included: Arc<Included>,
    /// For an excerpt of a file (see [`SourceFile::excerpt`]): each
    /// region's first line here and in the original file (0-based), in
    /// order. Empty when the text is the whole file.
    line_map: Vec<(usize, usize)>,
}

impl SourceFile {
    /// A source file from text already in memory.
    pub fn new(path: impl Into<PathBuf>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        SourceFile {
            path: path.into(),
            lines: Lines::of(&text),
            text,
            invalid_utf8: Vec::new(),
            included: Arc::default(),
            line_map: Vec::new(),
        }
    }

    /// An excerpt of a file: `text` is whole lines of the original, region
    /// after region, and `line_map` gives each region's first line in
    /// `text` and in the original (0-based, in order). Positions in it are
    /// reported as lines of the original file.
    pub fn excerpt(&self, text: impl Into<String>, line_map: Vec<(usize, usize)>) -> SourceFile {
        SourceFile {
            line_map,
            ..self.with_text(text)
        }
    }

    /// The same file with other text (a rewrite of it), keeping what it
    /// includes and, for an excerpt, its line numbering.
    pub fn with_text(&self, text: impl Into<String>) -> SourceFile {
        SourceFile {
            included: Arc::clone(&self.included),
            line_map: self.line_map.clone(),
            ..SourceFile::new(self.path.clone(), text)
        }
    }

    /// The original file's line (0-based) of this text's line `line`.
    fn original_line(&self, line: usize) -> usize {
        let i = self.line_map.partition_point(|&(here, _)| here <= line);
        match i.checked_sub(1).map(|i| self.line_map[i]) {
            Some((here, there)) => there + (line - here),
            None => line,
        }
    }

    /// This text's line (0-based) of the original file's line `line`, if
    /// the excerpt has it.
    fn excerpt_line(&self, line: usize) -> Option<usize> {
        if self.line_map.is_empty() {
            return Some(line);
        }
        self.line_map
            .iter()
            .enumerate()
            .find_map(|(i, &(here, there))| {
                let lines = self
                    .line_map
                    .get(i + 1)
                    .map_or(usize::MAX, |&(next, _)| next - here);
                (line >= there && line - there < lines).then(|| here + (line - there))
            })
    }

    /// The file with `included` as what it includes.
    pub fn with_included(mut self, included: Included) -> SourceFile {
        self.included = Arc::new(included);
        self
    }

    /// What the file includes.
    pub fn included(&self) -> &Included {
        &self.included
    }

    /// Adds the expansion of the invocation of the macro `name` at
    /// `invocation` (see [`IncludedKind::Expansion`]), after every
    /// included file; returns its base offset.
    pub fn push_expansion(&mut self, name: &str, invocation: usize, text: String) -> usize {
        let included = Arc::make_mut(&mut self.included);
        let base = included.next_base();
        let mut file = IncludedFile::new(
            PathBuf::from(format!("<expansion of {name}>")),
            IncludedKind::Expansion,
            text,
            base,
            invocation,
        );
        file.name = name.to_string();
        included.files.push(file);
        base
    }

    /// The file without the expansions [`SourceFile::push_expansion`]
    /// added (a reparse makes its own).
    pub fn without_expansions(mut self) -> SourceFile {
        if self
            .included
            .files
            .iter()
            .any(|f| f.kind == IncludedKind::Expansion)
        {
            Arc::make_mut(&mut self.included)
                .files
                .retain(|f| f.kind != IncludedKind::Expansion);
        }
        self
    }

    /// The macro whose expansion holds `offset`, and the offset of its
    /// invocation, if `offset` is in an expansion.
    pub fn expansion_at(&self, offset: usize) -> Option<(&str, usize)> {
        match self.included.file_at(offset) {
            Some(f) if offset >= INCLUDED_BASE && f.kind == IncludedKind::Expansion => {
                Some((f.name.as_str(), f.directive))
            }
            _ => None,
        }
    }

    /// `offset`, or the invocation's offset when it is in an expansion
    /// (an expansion has no lines of its own).
    fn outside_expansions(&self, offset: usize) -> usize {
        self.expansion_at(offset).map_or(offset, |(_, at)| at)
    }

    /// Records the problems found including files (made with
    /// [`SourceFile::diagnostic`] once the files are attached), each with
    /// the offset of the directive it is about.
    pub fn set_include_diagnostics(&mut self, diagnostics: Vec<(usize, Diagnostic)>) {
        Arc::make_mut(&mut self.included).diagnostics = diagnostics;
    }

    /// Reads a file from disk, refusing directories, files larger than
    /// [`MAX_FILE_BYTES`] and binary files. Bytes that are not UTF-8 are
    /// replaced by U+FFFD and their offsets kept in
    /// [`SourceFile::invalid_utf8`] (the front end complains only when
    /// one is in code, not in a comment or string).
    pub fn read(path: &Path) -> Result<SourceFile, Diagnostic> {
        let (text, invalid_utf8) =
            read_text(path).map_err(|msg| Diagnostic::file_error(path, msg))?;
        Ok(SourceFile {
            invalid_utf8,
            ..SourceFile::new(path, text)
        })
    }

    /// A source file from bytes in memory, decoded as [`SourceFile::read`]
    /// decodes a file.
    pub fn from_bytes(path: impl Into<PathBuf>, bytes: &[u8]) -> SourceFile {
        let (text, invalid_utf8) = decode_lossy(bytes);
        SourceFile {
            invalid_utf8,
            ..SourceFile::new(path, text)
        }
    }

    /// The text of `span`: in the user's file or in included text (empty
    /// when it is neither).
    pub fn slice(&self, span: Span) -> &str {
        let (text, base) = match self.included.file_at(span.start) {
            Some(f) if span.start >= INCLUDED_BASE => (f.text.as_str(), f.base),
            _ => (self.text.as_str(), 0),
        };
        let (s, e) = (span.start.wrapping_sub(base), span.end.wrapping_sub(base));
        text.get(s..e.min(text.len())).unwrap_or("")
    }

    /// The text from `offset` to the end of its file.
    pub fn slice_from(&self, offset: usize) -> &str {
        self.slice(Span::new(offset, usize::MAX - 1))
    }

    /// 1-based line and column (in characters) of a byte offset in the
    /// user's file. An offset in included text gives the place of the
    /// `#include` that brought it in (see [`SourceFile::locate`]).
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = self.outside_expansions(offset);
        let offset = match self.included.file_at(offset) {
            Some(f) if offset >= INCLUDED_BASE => f.directive,
            _ => offset,
        };
        let (line, col) = self.lines.line_col(&self.text, offset);
        (self.original_line(line - 1) + 1, col)
    }

    /// The file, 1-based line and column of an offset, in the user's file or
    /// in the header it belongs to.
    pub fn locate(&self, offset: usize) -> (&Path, usize, usize) {
        let offset = self.outside_expansions(offset);
        match self.included.file_at(offset) {
            Some(f) if offset >= INCLUDED_BASE => {
                let (l, c) = f.lines.line_col(&f.text, offset - f.base);
                (&f.path, l, c)
            }
            _ => {
                let (l, c) = self.line_col(offset);
                (&self.path, l, c)
            }
        }
    }

    /// The text of the 1-based line `line`, without its newline.
    pub fn line_text(&self, line: usize) -> &str {
        match line.checked_sub(1).and_then(|l| self.excerpt_line(l)) {
            Some(here) => self.lines.line_text(&self.text, here + 1),
            None => "",
        }
    }

    /// A diagnostic located at `offset` in this file, or in the header it
    /// belongs to (then the message says where the header was included).
    pub fn diagnostic(
        &self,
        severity: Severity,
        code: &'static str,
        offset: usize,
        message: impl Into<String>,
    ) -> Diagnostic {
        let mut message = message.into();
        if let Some((name, _)) = self.expansion_at(offset) {
            message.push_str(&format!(" (in the expansion of `{name}`)"));
        }
        let offset = self.outside_expansions(offset);
        let (file, line, col, source_line) = match self.included.file_at(offset) {
            Some(f) if offset >= INCLUDED_BASE => {
                let (l, c) = f.lines.line_col(&f.text, offset - f.base);
                if f.kind == IncludedKind::Header {
                    let (dl, _) = self.line_col(f.directive);
                    message.push_str(&format!(
                        " (in a header included at {}:{dl})",
                        self.path.display()
                    ));
                }
                (f.path.clone(), l, c, f.lines.line_text(&f.text, l))
            }
            _ => {
                let (l, c) = self.line_col(offset);
                (self.path.clone(), l, c, self.line_text(l))
            }
        };
        Diagnostic {
            severity,
            code,
            message,
            file,
            line,
            col,
            source_line: Some(source_line.to_string()),
        }
    }
}

/// Why a source or header file is not read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// Not a regular file, too large, or unreadable.
    #[error("cannot read file: {0}")]
    Input(#[from] InputFileError),
    /// A NUL byte at this offset.
    #[error("binary file (NUL byte at offset {0}), expected CUDA source text")]
    Binary(usize),
}

error_message!(ReadError);

/// Reads a source or header file ([`read_input`]: a regular file of at
/// most [`MAX_FILE_BYTES`]) with no NUL byte. Returns the text (bytes that
/// are not UTF-8 replaced by U+FFFD) and the offsets of the replacements.
pub fn read_text(path: &Path) -> Result<(String, Vec<usize>), ReadError> {
    let bytes = read_input(path)?;
    if let Some(pos) = bytes.iter().position(|&b| b == 0) {
        return Err(ReadError::Binary(pos));
    }
    Ok(decode_lossy(&bytes))
}

/// UTF-8 text of `bytes`, each invalid sequence replaced by U+FFFD, and
/// the offsets (in the text) of the replacements.
pub fn decode_lossy(bytes: &[u8]) -> (String, Vec<usize>) {
    let mut text = String::with_capacity(bytes.len());
    let mut invalid = Vec::new();
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        if !chunk.invalid().is_empty() {
            invalid.push(text.len());
            text.push(char::REPLACEMENT_CHARACTER);
        }
    }
    (text, invalid)
}

/// The largest char boundary at or below `i`.
fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based() {
        let f = SourceFile::new("a.cu", "ab\ncd\n\nxé");
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(1), (1, 2));
        assert_eq!(f.line_col(3), (2, 1));
        assert_eq!(f.line_col(6), (3, 1));
        assert_eq!(f.line_col(8), (4, 2));
        assert_eq!(f.line_text(2), "cd");
        assert_eq!(f.line_text(4), "xé");
        assert_eq!(f.line_text(9), "");
    }

    #[test]
    fn an_excerpt_reports_the_original_lines() {
        // Lines 3–4 and 10 of some file.
        let f = SourceFile::new("a.cu", "").excerpt("c\nd\nj\n", vec![(0, 2), (2, 9)]);
        assert_eq!(f.line_col(0), (3, 1));
        assert_eq!(f.line_col(2), (4, 1));
        assert_eq!(f.line_col(4), (10, 1));
        assert_eq!(f.line_text(4), "d");
        assert_eq!(f.line_text(10), "j");
        assert_eq!(f.line_text(5), "");
        assert_eq!(f.with_text("c\nd\nk\n").line_col(4), (10, 1));
    }

    #[test]
    fn a_byte_order_mark_is_not_a_column() {
        let f = SourceFile::new("a.cu", "\u{feff}ab\ncd");
        assert_eq!(f.line_col(3), (1, 1));
        assert_eq!(f.line_col(4), (1, 2));
        assert_eq!(f.line_text(1), "ab");
    }

    #[test]
    fn latin1_bytes_are_replaced_and_remembered() {
        let (text, bad) = decode_lossy(b"// caf\xe9\nint x;");
        assert_eq!(text, "// caf\u{fffd}\nint x;");
        assert_eq!(bad, [6]);
    }

    #[test]
    fn included_offsets_locate_in_their_header() {
        let user = SourceFile::new("a.cu", "#include \"h.h\"\nint y;\n");
        let h = IncludedFile::new(
            "h.h".into(),
            IncludedKind::Header,
            "int a;\nint b;\n".into(),
            INCLUDED_BASE,
            0,
        );
        let f = user.with_included(Included {
            files: vec![h],
            ..Included::default()
        });
        let b = INCLUDED_BASE + 11;
        assert_eq!(f.slice(Span::new(b, b + 1)), "b");
        assert_eq!(f.locate(b), (Path::new("h.h"), 2, 5));
        assert_eq!(f.line_col(b), (1, 1));
        let d = f.diagnostic(Severity::Error, "x", b, "bad");
        assert_eq!((d.line, d.col), (2, 5));
        assert!(d.message.contains("included at a.cu:1"), "{}", d.message);
        assert_eq!(f.with_text("int z;").slice(Span::new(b, b + 1)), "b");
        assert_eq!(f.slice(Span::new(2, 8)), "nclude");
        assert_eq!(f.slice(Span::SYNTHETIC), "");
    }
}
