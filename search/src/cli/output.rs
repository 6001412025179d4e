//! What goes where: results on stdout, diagnostics (errors, warnings,
//! notes, progress) on stderr; `--quiet` keeps only errors and warnings.
//! The output formats of `optimize` ([`optimize`]), `lint` ([`lint`])
//! and `analyze` ([`analyze`]) live below: text, JSON, GitHub
//! annotations ([`ci`]), SARIF ([`sarif`]) and the `--report` lines.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use copper::cuda::parse::ParsedFile;
use copper::diag::Diagnostic;
use copper::ir::lower::lower_kernel;
use copper::ir::Kernel;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::args::ColorChoice;

pub mod analyze;
mod ci;
pub mod json;
pub mod lint;
pub mod optimize;
pub mod sarif;

static QUIET: AtomicBool = AtomicBool::new(false);
static COLOR: AtomicU8 = AtomicU8::new(ColorChoice::Auto as u8);

/// `--quiet`: from now on nothing reaches stdout (it is pointed at the
/// null device, so every command's results go quiet at once) and notes
/// and progress are not printed; errors and warnings still are.
pub fn set_quiet() {
    QUIET.store(true, Ordering::SeqCst);
    #[cfg(unix)]
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        use std::io::Write;
        use std::os::unix::io::AsRawFd;
        let _ = std::io::stdout().flush();
        // SAFETY: duplicating an open descriptor of ours onto stdout's.
        unsafe { libc::dup2(null.as_raw_fd(), libc::STDOUT_FILENO) };
    }
}

/// Whether `--quiet` was given.
pub fn quiet() -> bool {
    QUIET.load(Ordering::SeqCst)
}

/// `--color`: whether severities and diff lines are coloured.
pub fn set_color(choice: ColorChoice) {
    COLOR.store(choice as u8, Ordering::SeqCst);
}

/// Whether what goes to stdout is coloured.
pub fn color_stdout() -> bool {
    color_for(std::io::stdout().is_terminal())
}

/// Whether what goes to stderr is coloured.
pub fn color_stderr() -> bool {
    color_for(std::io::stderr().is_terminal())
}

/// Whether to colour a stream that is (or is not) a terminal: `always`,
/// `never`, or under `auto` a terminal when `NO_COLOR` is unset or empty.
fn color_for(terminal: bool) -> bool {
    match COLOR.load(Ordering::SeqCst) {
        c if c == ColorChoice::Always as u8 => true,
        c if c == ColorChoice::Never as u8 => false,
        _ => terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}

/// Prints a diagnostic on stderr (coloured as `--color` says).
pub fn diagnostic(d: &Diagnostic) {
    eprintln!("{}", d.render_colored(color_stderr()));
}

/// Prints a unified diff on stdout, its removed lines red, added lines
/// green and hunk headers cyan when `--color` says so (as `git diff`).
pub fn print_diff(diff: &str) {
    if !color_stdout() {
        print!("{diff}");
        return;
    }
    print!("{}", colored_diff(diff));
}

/// `diff` with ANSI colours per line.
fn colored_diff(diff: &str) -> String {
    let mut out = String::with_capacity(diff.len() + diff.len() / 8);
    for line in diff.split_inclusive('\n') {
        let ansi = if line.starts_with("+++") || line.starts_with("---") {
            "1"
        } else if line.starts_with('+') {
            "32"
        } else if line.starts_with('-') {
            "31"
        } else if line.starts_with("@@") {
            "36"
        } else {
            ""
        };
        if ansi.is_empty() {
            out.push_str(line);
        } else {
            let body = line.strip_suffix('\n').unwrap_or(line);
            out.push_str(&format!("\x1b[{ansi}m{body}\x1b[0m"));
            if line.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    out
}

/// Prints `copper: note: …` on stderr, unless `--quiet`.
pub fn note(message: impl std::fmt::Display) {
    if !quiet() {
        eprintln!("copper: note: {message}");
    }
}

/// A progress line on standard error, `[done/total] message`, for
/// `total` steps: drawn only when standard error is a terminal and not
/// under `--quiet` (hidden otherwise, so redirected output is unchanged);
/// cleared by `finish_and_clear`.
pub fn progress(total: usize) -> ProgressBar {
    let target = if std::io::stderr().is_terminal() && !quiet() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(total as u64), target);
    if let Ok(style) = ProgressStyle::with_template("[{pos}/{len}] {wide_msg}") {
        bar.set_style(style);
    }
    bar
}

/// Kernel `name` of `parsed`, lowered; `None` after printing on stderr
/// the diagnostic that stops it.
pub fn lower_or_report(parsed: &ParsedFile, name: &str) -> Option<Kernel> {
    lower_kernel(parsed, name).map_err(|d| diagnostic(&d)).ok()
}

/// The exit status of a command that reports on many inputs (`optimize`,
/// `lint`), in this order: 2 when the run failed as a whole (its output or
/// a `--write` could not be written); 1 when there is something to report
/// (an improvement, a finding), also when other inputs could not be read
/// (each is named on stderr); 2 when some input could not be read; else 0.
pub fn batch_status(failed: bool, something_to_report: bool, unreadable: bool) -> u8 {
    if failed {
        2
    } else if something_to_report {
        1
    } else if unreadable {
        2
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::{batch_status, colored_diff};

    #[test]
    fn diff_lines_are_coloured_by_kind() {
        let d = "--- a/k.cu\n+++ b/k.cu\n@@ -1 +1 @@\n-old\n+new\n same\n";
        let c = colored_diff(d);
        assert!(c.contains("\x1b[31m-old\x1b[0m\n"), "{c}");
        assert!(c.contains("\x1b[32m+new\x1b[0m\n"), "{c}");
        assert!(c.contains("\x1b[36m@@ -1 +1 @@\x1b[0m\n"), "{c}");
        assert!(c.contains("\x1b[1m--- a/k.cu\x1b[0m\n"), "{c}");
        assert!(c.ends_with(" same\n"), "{c}");
    }

    #[test]
    fn findings_are_not_hidden_by_an_unreadable_file() {
        assert_eq!(batch_status(false, true, true), 1);
        assert_eq!(batch_status(false, false, true), 2);
        assert_eq!(batch_status(true, true, false), 2);
        assert_eq!(batch_status(false, false, false), 0);
    }
}
