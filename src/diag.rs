//! Diagnostics: errors and warnings located at `file:line:col`.

use crate::shown::{escaped_controls, Shown};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Something the user may want to know.
    Note,
    /// A problem that does not stop processing.
    Warning,
    /// The item (kernel, file) could not be processed.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// One message about a place in a file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// How serious it is.
    pub severity: Severity,
    /// A short stable code, e.g. `syntax` or `unsupported`.
    pub code: &'static str,
    /// What is wrong, in one sentence.
    pub message: String,
    /// The file it is about.
    pub file: PathBuf,
    /// 1-based line (0 when the diagnostic is about the whole file).
    pub line: usize,
    /// 1-based column in characters (0 when about the whole file).
    pub col: usize,
    /// The source line, shown under the message with a caret.
    #[serde(skip)]
    pub source_line: Option<String>,
}

impl Diagnostic {
    /// An error about a whole file (cannot read it, too large, …).
    pub fn file_error(path: &Path, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code: "file",
            message: message.into(),
            file: path.to_path_buf(),
            line: 0,
            col: 0,
            source_line: None,
        }
    }

    /// Whether this diagnostic is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The diagnostic with its source line and a caret under the column,
    /// rustc/clang style.
    pub fn render(&self) -> String {
        self.render_colored(false)
    }

    /// [`Diagnostic::render`], with the severity and code in bold ANSI
    /// colour when `color` (errors red, warnings yellow, notes cyan).
    pub fn render_colored(&self, color: bool) -> String {
        let label = format!("{}[{}]", self.severity, self.code);
        let mut out = self.to_string();
        if color {
            let ansi = match self.severity {
                Severity::Error => "1;31",
                Severity::Warning => "1;33",
                Severity::Note => "1;36",
            };
            out = out.replacen(
                &format!(" {label}: "),
                &format!(" \x1b[{ansi}m{label}\x1b[0m: "),
                1,
            );
        }
        if let Some(line) = &self.source_line {
            let pad: String = line
                .chars()
                .take(self.col.saturating_sub(1))
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            out.push_str(&format!("\n    {}\n    {pad}^", escaped_controls(line)));
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(
                f,
                "{}: {}[{}]: {}",
                self.file.shown(),
                self.severity,
                self.code,
                escaped_controls(&self.message)
            )
        } else {
            write!(
                f,
                "{}:{}:{}: {}[{}]: {}",
                self.file.shown(),
                self.line,
                self.col,
                self.severity,
                self.code,
                escaped_controls(&self.message)
            )
        }
    }
}
