//! What goes where: results on stdout, diagnostics (errors, warnings,
//! notes, progress) on stderr; `--quiet` keeps only errors and warnings.

use std::sync::atomic::{AtomicBool, Ordering};

use copper::cuda::parse::ParsedFile;
use copper::ir::lower::lower_kernel;
use copper::ir::Kernel;

static QUIET: AtomicBool = AtomicBool::new(false);

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

/// Prints `copper: note: …` on stderr, unless `--quiet`.
pub fn note(message: impl std::fmt::Display) {
    if !quiet() {
        eprintln!("copper: note: {message}");
    }
}

/// Kernel `name` of `parsed`, lowered; `None` after printing on stderr
/// the diagnostic that stops it.
pub fn lower_or_report(parsed: &ParsedFile, name: &str) -> Option<Kernel> {
    lower_kernel(parsed, name)
        .map_err(|d| eprintln!("{}", d.render()))
        .ok()
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
    use super::batch_status;

    #[test]
    fn findings_are_not_hidden_by_an_unreadable_file() {
        assert_eq!(batch_status(false, true, true), 1);
        assert_eq!(batch_status(false, false, true), 2);
        assert_eq!(batch_status(true, true, false), 2);
        assert_eq!(batch_status(false, false, false), 0);
    }
}
