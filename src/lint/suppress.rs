//! Inline suppressions, like `# noqa` and `NOLINT`: a comment
//! `// copper: allow(CODE, …)` silences those codes on its line,
//! `// copper: allow-next-line(CODE, …)` on the next line, and either one
//! on a kernel's first line (the line of `__global__`) in the whole kernel.
//! A suppression that silences nothing is reported ([`Suppressions::unused`]),
//! as is a code it names that does not exist.

use std::path::{Path, PathBuf};

use super::Code;

/// One suppression comment.
#[derive(Clone, Debug, PartialEq)]
pub struct Suppression {
    /// The file it is written in (the user's file or a header).
    pub file: PathBuf,
    /// Its 1-based line and column (of `copper:`).
    pub line: usize,
    /// Its column.
    pub col: usize,
    /// Whether it is `allow-next-line`.
    pub next_line: bool,
    /// The codes it names, each with whether it silenced a finding.
    pub codes: Vec<(Code, bool)>,
    /// Names that are no lint code.
    pub unknown: Vec<String>,
    /// The comment's text, as written.
    pub text: String,
}

impl Suppression {
    /// The line it applies to.
    pub fn target(&self) -> usize {
        self.line + usize::from(self.next_line)
    }
}

/// A problem with a suppression comment, with its place.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// The file.
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// What is wrong.
    pub message: String,
}

/// The suppression comments of `text` (the file `file`).
pub fn scan(file: &Path, text: &str) -> Vec<Suppression> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut from = 0;
        while let Some(at) = line[from..].find("copper:").map(|k| k + from) {
            from = at + "copper:".len();
            let before = line[..at].trim_end();
            if !(before.ends_with("//") || before.ends_with("/*")) {
                continue;
            }
            let rest = line[from..].trim_start();
            let (next_line, rest) = if let Some(r) = rest.strip_prefix("allow-next-line") {
                (true, r)
            } else if let Some(r) = rest.strip_prefix("allow") {
                (false, r)
            } else {
                continue;
            };
            let Some(inner) = rest.trim_start().strip_prefix('(') else {
                continue;
            };
            let Some(close) = inner.find(')') else {
                continue;
            };
            let mut codes = Vec::new();
            let mut unknown = Vec::new();
            for name in inner[..close]
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
            {
                match Code::parse(name) {
                    Ok(c) => codes.push((c, false)),
                    Err(_) => unknown.push(name.to_string()),
                }
            }
            let end = from + (line[from..].len() - inner.len()) + close + 1;
            out.push(Suppression {
                file: file.to_path_buf(),
                line: i + 1,
                col: line[..at].chars().count() + 1,
                next_line,
                codes,
                unknown,
                text: line[at..end.min(line.len())].to_string(),
            });
        }
    }
    out
}

/// Every suppression comment of a file and the headers it includes, with
/// which have silenced a finding.
#[derive(Clone, Debug, Default)]
pub struct Suppressions {
    /// The comments.
    pub all: Vec<Suppression>,
}

impl Suppressions {
    /// The suppression comments of the files `texts` (path, text).
    pub fn of<'a>(texts: impl IntoIterator<Item = (&'a Path, &'a str)>) -> Suppressions {
        Suppressions {
            all: texts.into_iter().flat_map(|(p, t)| scan(p, t)).collect(),
        }
    }

    /// The suppression comments of `parsed`'s file and the headers it
    /// includes.
    pub fn of_parsed(parsed: &crate::cuda::parse::ParsedFile) -> Suppressions {
        let source = &parsed.source;
        let headers = source
            .included()
            .files
            .iter()
            .filter(|f| matches!(f.kind, crate::source::IncludedKind::Header));
        Suppressions::of(
            std::iter::once((source.path.as_path(), source.text.as_str()))
                .chain(headers.map(|f| (f.path.as_path(), f.text.as_str()))),
        )
    }

    /// Whether a finding of `code` at `file`:`line`, in the kernel whose
    /// first line is `kernel` (file and line), is silenced; the
    /// suppressions that silence it are marked used.
    pub fn silences(
        &mut self,
        code: Code,
        file: &Path,
        line: usize,
        kernel: (&Path, usize),
    ) -> bool {
        let mut silenced = false;
        for s in &mut self.all {
            let here = s.file == file && s.target() == line;
            let whole_kernel = s.file == kernel.0 && s.target() == kernel.1;
            if !(here || whole_kernel) {
                continue;
            }
            for (c, used) in &mut s.codes {
                if *c == code {
                    *used = true;
                    silenced = true;
                }
            }
        }
        silenced
    }

    /// The suppressions that silenced nothing and the codes they name that
    /// do not exist, in file and line order.
    pub fn unused(&self) -> Vec<Problem> {
        let mut out = Vec::new();
        for s in &self.all {
            let at = |message: String| Problem {
                file: s.file.clone(),
                line: s.line,
                col: s.col,
                message,
            };
            for name in &s.unknown {
                out.push(at(format!(
                    "`{}` names no lint code `{name}` (codes: {})",
                    s.text,
                    Code::ALL.map(Code::name).join(", ")
                )));
            }
            let unused: Vec<&str> = s
                .codes
                .iter()
                .filter(|(_, used)| !used)
                .map(|(c, _)| c.name())
                .collect();
            if !unused.is_empty() {
                out.push(at(format!(
                    "unused suppression: `{}` silences no {} finding {}",
                    s.text,
                    unused.join(" or "),
                    if s.next_line {
                        "on the next line"
                    } else {
                        "on this line (nor in a kernel starting here)"
                    }
                )));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_read_and_matched() {
        let text = "__global__ void k() { // copper: allow(divergent-branch)\n\
                    x[i] = 0; // copper: allow(bank-conflict, nonsense)\n\
                    /* copper: allow-next-line(uncoalesced-global) */\n\
                    y[i * n] = 0;\n\
                    // copper: allow(data-race)\n\
                    }";
        let f = Path::new("t.cu");
        let mut s = Suppressions::of([(f, text)]);
        assert_eq!(s.all.len(), 4);
        assert!(s.all[2].next_line);
        let kernel = (f, 1);
        assert!(s.silences(Code::BankConflict, f, 2, kernel));
        assert!(!s.silences(Code::BankConflict, f, 4, kernel));
        assert!(s.silences(Code::UncoalescedGlobal, f, 4, kernel));
        // The kernel's line: the whole kernel.
        assert!(s.silences(Code::DivergentBranch, f, 5, kernel));
        assert!(!s.silences(
            Code::DivergentBranch,
            Path::new("u.cu"),
            5,
            (Path::new("u.cu"), 1)
        ));
        let problems = s.unused();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].message.contains("no lint code `nonsense`"));
        assert_eq!((problems[1].line, problems[1].col), (5, 4));
        assert!(problems[1].message.contains("unused suppression"));
        // Not a comment: not a suppression.
        assert!(scan(f, "char *s = \"copper: allow(data-race)\";").is_empty());
    }
}
