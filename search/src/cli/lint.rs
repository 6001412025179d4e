//! `copper lint`: findings with `file:line:col` (uncoalesced and
//! misaligned global accesses, bank conflicts, divergent branches,
//! block-size dependence, data races), bank-conflict witnesses, and a
//! block-size verdict per kernel. Without a launch shape, the block
//! inferred from the kernel is assumed (as `optimize` does), and a finding
//! that the analysis for any block does not make says it depends on it.
//! Directories are searched as `optimize` searches them ([`super::walk`]),
//! files linted in parallel (`--jobs`) by the lint driver
//! ([`copper_search::driver::lint`]); a finding in a kernel defined in a
//! header is placed in the header; inline suppressions are
//! [`copper::lint::suppress`]'s. Here the command line and a progress
//! line; the output formats are [`super::output::lint`]'s.

use copper::shown::Shown;
use std::path::PathBuf;

use copper::lint::milp;
use copper_search::driver::lint::{lint_file, FileLint, Request, WitnessSearch};
use rayon::prelude::*;

use super::args::{LintArgs, LintFormat};
use super::files::{refuse_onto_input, write_atomically};
use super::output::lint as formats;
use super::output::{self, sarif::SarifRoot};
use super::settings::Settings;
use super::walk::{collect_files, start_workers};

/// Runs `copper lint`; the exit status is [`output::batch_status`]'s.
pub fn run(a: &LintArgs, s: &Settings) -> u8 {
    let root = match (a.format, SarifRoot::new(a.sarif_root.as_deref())) {
        (LintFormat::Sarif, Err(e)) => {
            eprintln!("copper: error: {e}");
            return 2;
        }
        (_, root) => root.ok(),
    };
    // A path that does not exist is linted alone, to name its error among
    // the others' results; the rest are searched as `optimize` does.
    let (present, missing): (Vec<PathBuf>, Vec<PathBuf>) =
        a.files.iter().cloned().partition(|p| p.exists());
    let mut paths = match collect_files(&present, a.walk.no_ignore, !a.walk.no_follow) {
        Ok(found) => {
            for n in &found.notes {
                output::note(n);
            }
            found.files
        }
        Err(e) => {
            eprintln!("copper: error: {e}");
            return 2;
        }
    };
    paths.extend(missing);
    if let Some(report) = &a.report {
        let inputs = s.inputs(&paths);
        if let Err(e) = refuse_onto_input(report, inputs.iter().map(PathBuf::as_path)) {
            eprintln!("copper: error: {e}");
            return 2;
        }
    }
    start_workers(a.walk.jobs);
    let request = Request {
        kernel: a.launch.kernel.as_deref(),
        preprocess: &s.preprocess,
        params: &s.params,
        block: s.block,
        grid: s.grid,
        analysis: s.analysis,
        allowed: &s.allowed,
        witness: a.witness.then(|| WitnessSearch {
            target: a.degree,
            nodes: a.max_witness_nodes.unwrap_or(milp::NODES),
        }),
    };
    let total = paths.len();
    let progress = output::progress(total);
    if total <= 1 {
        // One file needs no progress line.
        progress.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let files: Vec<FileLint> = paths
        .par_iter()
        .map(|p| {
            let f = lint_file(p, &request);
            progress.set_message(p.shown().to_string());
            progress.inc(1);
            f
        })
        .collect();
    progress.finish_and_clear();
    let mut failed = false;
    if let Some(path) = &a.report {
        if let Err(e) = write_atomically(path, &formats::report(&files)) {
            eprintln!("copper: error: {}: {e}", path.shown());
            failed = true;
        }
    }
    if a.format != LintFormat::Github {
        formats::errors(&files);
    }
    match a.format {
        LintFormat::Text => formats::text(&files),
        LintFormat::Json => formats::json(&files),
        LintFormat::Github => formats::github(&files),
        LintFormat::Sarif => {
            if let Some(root) = root {
                formats::sarif(&files, &root);
            }
        }
    }
    output::batch_status(
        failed,
        files
            .iter()
            .any(|f| !f.findings.is_empty() || !f.problems.is_empty()),
        files.iter().any(|f| !f.errors.is_empty()),
    )
}
