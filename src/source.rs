//! Source files: their text, path, and byte-offset to line/column mapping.

use std::path::{Path, PathBuf};

use crate::diag::{Diagnostic, Severity};

/// Largest source file copper reads (bytes). Larger files are rejected with a
/// diagnostic instead of being parsed.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

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
}

/// A source file held in memory, with an index of line starts.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// Path as the user gave it (used in diagnostics).
    pub path: PathBuf,
    /// The whole text.
    pub text: String,
    line_starts: Vec<usize>,
    /// For an excerpt of a file (see [`SourceFile::excerpt`]): each
    /// region's first line here and in the original file (0-based), in
    /// order. Empty when the text is the whole file.
    line_map: Vec<(usize, usize)>,
}

impl SourceFile {
    /// A source file from text already in memory.
    pub fn new(path: impl Into<PathBuf>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceFile {
            path: path.into(),
            text,
            line_starts,
            line_map: Vec::new(),
        }
    }

    /// An excerpt of a file: `text` is whole lines of the original, region
    /// after region, and `line_map` gives each region's first line in
    /// `text` and in the original (0-based, in order). Positions in it are
    /// reported as lines of the original file.
    pub fn excerpt(
        path: impl Into<PathBuf>,
        text: impl Into<String>,
        line_map: Vec<(usize, usize)>,
    ) -> SourceFile {
        SourceFile {
            line_map,
            ..SourceFile::new(path, text)
        }
    }

    /// Other text in place of this file's (a rewrite of it): the same path
    /// and, for an excerpt, the same line numbering.
    pub fn with_text(&self, text: impl Into<String>) -> SourceFile {
        SourceFile {
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

    /// Reads a file from disk, refusing directories and other files that are
    /// not regular (without opening them), files larger than
    /// [`MAX_FILE_BYTES`], binary files and text that is not UTF-8.
    pub fn read(path: &Path) -> Result<SourceFile, Diagnostic> {
        let fail = |msg: String| Diagnostic::file_error(path, msg);
        let meta = std::fs::metadata(path).map_err(|e| fail(format!("cannot read file: {e}")))?;
        if meta.is_dir() {
            return Err(fail("is a directory, expected a .cu file".into()));
        }
        if !meta.is_file() {
            // Opening a FIFO would wait for a writer forever.
            return Err(fail(
                "not a regular file (a FIFO, socket or device); not opened".into(),
            ));
        }
        if meta.len() > MAX_FILE_BYTES {
            return Err(fail(format!(
                "file is {} bytes; copper reads source files up to {} bytes",
                meta.len(),
                MAX_FILE_BYTES
            )));
        }
        let bytes = std::fs::read(path).map_err(|e| fail(format!("cannot read file: {e}")))?;
        if let Some(pos) = bytes.iter().position(|&b| b == 0) {
            return Err(fail(format!(
                "binary file (NUL byte at offset {pos}), expected CUDA source text"
            )));
        }
        let text = String::from_utf8(bytes).map_err(|e| {
            fail(format!(
                "file is not valid UTF-8 (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ))
        })?;
        Ok(SourceFile::new(path, text))
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts[line];
        let col = self.text[start..floor_char_boundary(&self.text, offset)]
            .chars()
            .count();
        (self.original_line(line) + 1, col + 1)
    }

    /// The text of the 1-based line `line` (of the original file, for an
    /// excerpt), without its newline; empty when there is no such line.
    pub fn line_text(&self, line: usize) -> &str {
        let Some(here) = line.checked_sub(1).and_then(|l| self.excerpt_line(l)) else {
            return "";
        };
        let Some(&start) = self.line_starts.get(here) else {
            return "";
        };
        let end = self
            .line_starts
            .get(here + 1)
            .map(|&e| e - 1)
            .unwrap_or(self.text.len());
        self.text[start..end].trim_end_matches('\r')
    }

    /// A diagnostic located at `offset` in this file.
    pub fn diagnostic(
        &self,
        severity: Severity,
        code: &'static str,
        offset: usize,
        message: impl Into<String>,
    ) -> Diagnostic {
        let (line, col) = self.line_col(offset);
        Diagnostic {
            severity,
            code,
            message: message.into(),
            file: self.path.clone(),
            line,
            col,
            source_line: Some(self.line_text(line).to_string()),
        }
    }
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
        let f = SourceFile::excerpt("a.cu", "c\nd\nj\n", vec![(0, 2), (2, 9)]);
        assert_eq!(f.line_col(0), (3, 1));
        assert_eq!(f.line_col(2), (4, 1));
        assert_eq!(f.line_col(4), (10, 1));
        assert_eq!(f.line_text(4), "d");
        assert_eq!(f.line_text(10), "j");
        assert_eq!(f.line_text(5), "");
        assert_eq!(f.with_text("c\nd\nk\n").line_col(4), (10, 1));
    }
}
