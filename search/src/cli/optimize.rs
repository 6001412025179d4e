//! `copper optimize`: the given files (or every `.cu`/`.cuh` below the
//! given directories) handed to the search driver
//! ([`copper_search::driver::optimize`]), which searches their kernels in parallel;
//! here the command line, a progress line, `--write` (each file as soon as
//! the driver finishes it), and the output: the winning kernels, a unified
//! diff, the bounds before and after, and what each applied transform
//! bought.

use std::path::{Path, PathBuf};
use std::time::Instant;

use copper::cuda::parse::ParsedFile;
use copper::shown::Shown;
use copper_search::driver::optimize::{optimize_files, Caller, Request};
use indicatif::ProgressBar;

use super::args::{OptFormat, OptimizeArgs};
use super::files::{refuse_onto_input, replace_if_unchanged, write_atomically, ReplaceError};
use super::output::optimize as formats;
use super::output::{self, sarif::SarifRoot};
use super::settings::Settings;
use super::walk::{collect_files, outside_roots, start_workers};

/// Runs `copper optimize`.
pub fn run(a: &OptimizeArgs, s: &Settings) -> u8 {
    let fail = |e: &dyn std::fmt::Display| {
        eprintln!("copper: error: {e}");
        2
    };
    let Some(search) = &s.search else {
        return fail(&"internal error: no search settings");
    };
    let files = match collect_files(&a.paths, a.walk.no_ignore, !a.walk.no_follow) {
        Ok(found) => {
            for n in &found.notes {
                output::note(n);
            }
            found.files
        }
        Err(e) => return fail(&e),
    };
    if let Some(report) = &a.report {
        let inputs = s.inputs(&files);
        if let Err(e) = refuse_onto_input(report, inputs.iter().map(PathBuf::as_path)) {
            return fail(&e);
        }
    }
    start_workers(a.walk.jobs);
    let start = Instant::now();
    let request = Request {
        files: &files,
        kernel: a.launch.kernel.as_deref(),
        preprocess: &s.preprocess,
        params: &s.params,
        block: s.block,
        grid: s.grid,
        pipeline: &search.pipeline,
        simulate: a.report.is_some(),
    };
    let command = Command {
        a,
        progress: output::progress(0),
    };
    let runs = match optimize_files(&request, &command) {
        Ok(runs) => runs,
        Err(e) => return fail(&e),
    };
    let elapsed = start.elapsed().as_secs_f64();
    if let Some(k) = &a.launch.kernel {
        if runs.iter().all(|f| f.kernels.is_empty()) {
            return fail(&format!("no kernel named `{k}` in the given files"));
        }
    }
    let mut failed = runs.iter().any(|f| f.write_failed);
    let unreadable = runs
        .iter()
        .any(|f| f.parsed.is_err() || f.kernels.iter().any(|k| k.result.is_err()));
    let improved = runs.iter().any(|f| f.rewritten.is_some());
    if let Some(path) = &a.report {
        let csv = path.extension().is_some_and(|e| e == "csv");
        if let Err(e) = write_atomically(path, &formats::report(&runs, search, csv)) {
            eprintln!("copper: error: {}: {e}", path.shown());
            failed = true;
        }
    }
    if a.format != OptFormat::Github {
        formats::errors(&runs);
    }
    // A bound below a simulated cost: exit status 2, like any internal error.
    failed |= formats::internal_errors(&runs);
    if a.diff {
        formats::patch(&runs);
    } else {
        match a.format {
            OptFormat::Text => formats::text(&runs, search, a.explain, elapsed),
            OptFormat::Json => formats::json(&runs, search, elapsed),
            OptFormat::Github => formats::github(&runs, search),
            OptFormat::Sarif => match SarifRoot::new(a.sarif_root.as_deref()) {
                Ok(root) => formats::sarif(&runs, search, &root),
                Err(e) => {
                    eprintln!("copper: error: {e}");
                    failed = true;
                }
            },
        }
    }
    output::batch_status(failed, improved && !search.exit_zero, unreadable)
}

/// The command as the search driver's caller: a progress line (on a
/// terminal), and `--write`.
struct Command<'a> {
    /// The command line.
    a: &'a OptimizeArgs,
    /// The progress line.
    progress: ProgressBar,
}

impl Caller for Command<'_> {
    fn searched(&self, done: usize, total: usize, path: &Path, kernel: &str) {
        self.progress.set_length(total as u64);
        self.progress.set_position(done as u64);
        self.progress
            .set_message(format!("{}: {kernel}", path.shown()));
        if done == total {
            self.progress.finish_and_clear();
        }
    }

    /// With `--write`, replaces the file when nobody changed it meanwhile.
    fn finished(&self, path: &Path, parsed: &ParsedFile, rewritten: &str) -> bool {
        if !self.a.write {
            return false;
        }
        if !parsed.source.invalid_utf8.is_empty() {
            // Its bytes that are not UTF-8 were read as U+FFFD: writing the
            // text back would change them.
            eprintln!(
                "copper: warning: {}: not rewritten: it holds bytes that are not UTF-8 (read as U+FFFD), which writing would change; apply the change by hand",
                path.shown()
            );
            return false;
        }
        match replace_if_unchanged(path, &parsed.source.text, rewritten) {
            Ok(()) => {
                output::note(format_args!("updated {}", path.shown()));
                if let Some(target) = outside_roots(path, &self.a.paths) {
                    eprintln!(
                        "copper: note: {}: the file written is {}, outside the paths given (through a link; --no-follow skips links in directories)",
                        path.shown(),
                        target.shown()
                    );
                }
            }
            Err(ReplaceError::Changed(why)) => {
                eprintln!("copper: warning: {}: {why}", path.shown())
            }
            Err(ReplaceError::Refused(why)) => {
                eprintln!("copper: warning: {}: not rewritten: {why}", path.shown())
            }
            Err(e) => {
                eprintln!("copper: error: {}: cannot update: {e}", path.shown());
                return true;
            }
        }
        false
    }
}
