//! `copper lint`: findings with `file:line:col` (uncoalesced and
//! misaligned global accesses, bank conflicts, divergent branches,
//! block-size dependence, data races), bank-conflict witnesses, and a
//! block-size verdict per kernel. Without a launch shape, the block
//! inferred from the kernel is assumed (as `optimize` does), and a finding
//! that the analysis for any block does not make says it depends on it.
//! Directories are searched as `optimize` searches them ([`super::walk`]),
//! files linted in parallel (`--jobs`); a finding in a kernel defined in
//! a header is placed in the header; inline suppressions are
//! [`copper::lint::suppress`]'s.

use copper::shown::Shown;
use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use copper::lint::suppress::{Problem, Suppressions};
use rayon::prelude::*;

use copper::cuda::parse::{parse_path_with, ParsedFile};
use copper::diag::{Diagnostic, Severity};
use copper::ir::lower::{lower_kernel, symbol_notes};
use serde_json::{json, Value};

use copper::lint::milp;
use copper::lint::witness::{self, Witness};
use copper::lint::{
    count, lint_kernel_within, races, shape_findings, stop_note, BlockSize, Code, Finding,
};
use copper::sim::work::Work;
use copper_search::launch::{assume_block, launch_shape};

use super::args::{LintArgs, LintFormat};
use super::ci::{gh_error, gh_escape, gh_property};
use super::files::{refuse_onto_input, write_atomically};
use super::lint_witness::{witness_json, witness_text};
use super::output;
use super::sarif::{self, Level, SarifRoot};
use super::settings::Settings;
use super::walk::{collect_files, start_workers};

/// A finding with its place, ready to print.
struct Located {
    kernel: String,
    finding: Finding,
    /// The file of the code it is about: the user's file or a header.
    file: PathBuf,
    line: usize,
    col: usize,
    source_line: String,
    /// `line:col` of each inlined call that reaches the place.
    calls: Vec<(usize, usize)>,
    witness: Option<Witness>,
    /// The assumed block it was found for, when the analysis for any
    /// block does not find it.
    assumed_block: Option<String>,
}

/// One kernel's verdict and timing.
struct KernelRow {
    name: String,
    /// The file it is defined in: the user's file or a header.
    file: PathBuf,
    line: usize,
    col: usize,
    block_size: BlockSize,
    /// The line of the race, when the verdict is one.
    race_line: Option<usize>,
    /// The block copper assumed, and why (no launch shape was given).
    assumed: Option<String>,
    /// What the work limit stopped, when it did ([`stop_note`]).
    stopped: Option<String>,
    seconds: f64,
}

/// One file's results.
struct FileLint {
    path: PathBuf,
    /// Errors: an unreadable file, kernels copper cannot read.
    errors: Vec<Diagnostic>,
    findings: Vec<Located>,
    kernels: Vec<KernelRow>,
    /// Notes on the kernels' undefined identifiers, rendered.
    notes: Vec<String>,
    /// Warnings about the file (a header not found), rendered.
    warnings: Vec<String>,
    /// Suppressions that silence nothing, or name no code (warnings).
    problems: Vec<Problem>,
}

impl FileLint {
    /// Errors: the file's own, and error findings.
    fn error_count(&self) -> usize {
        self.errors.len()
            + self
                .findings
                .iter()
                .filter(|x| x.finding.code.severity() == Severity::Error)
                .count()
    }

    /// Warnings: warning findings, suppression problems and warnings
    /// about the file (a header not found).
    fn warning_count(&self) -> usize {
        self.findings.len() + self.problems.len() + self.warnings.len() + self.errors.len()
            - self.error_count()
    }
}

fn lint_file(path: &std::path::Path, a: &LintArgs, s: &Settings) -> FileLint {
    let mut out = FileLint {
        path: path.to_path_buf(),
        errors: Vec::new(),
        findings: Vec::new(),
        kernels: Vec::new(),
        notes: Vec::new(),
        warnings: Vec::new(),
        problems: Vec::new(),
    };
    let parsed = match parse_path_with(path, &s.preprocess) {
        Ok(p) => p,
        Err(d) => {
            out.errors.push(d);
            return out;
        }
    };
    for d in parsed.all_diagnostics() {
        if d.is_error() {
            out.errors.push(d.clone());
        } else if d.severity == Severity::Warning {
            // A header not found (`pass -I DIR`), as `optimize` says.
            out.warnings.push(d.render());
        }
    }
    let params = match s.params.of(path) {
        Ok(p) => p,
        Err(e) => {
            out.errors.push(Diagnostic {
                code: "params",
                ..Diagnostic::file_error(path, e.to_string())
            });
            None
        }
    };
    let names: Vec<String> = parsed.kernels().map(|k| k.name.clone()).collect();
    let mut suppressions = Suppressions::of_parsed(&parsed);
    let only = a.launch.kernel.as_ref().map(|k| parsed.kernel_name(k));
    if let Some(k) = &only {
        if !names.contains(k) {
            out.errors.push(Diagnostic {
                code: "kernel",
                ..Diagnostic::file_error(
                    path,
                    format!("no kernel named `{k}` (kernels: {})", names.join(", ")),
                )
            });
        }
    }
    for name in names {
        if only.as_ref().is_some_and(|k| k != &name) {
            continue;
        }
        let kernel = match lower_kernel(&parsed, &name) {
            Ok(k) => k,
            Err(d) => {
                // Often the parse diagnostic already printed.
                if !out.errors.contains(&d) {
                    out.errors.push(d);
                }
                continue;
            }
        };
        for d in symbol_notes(&parsed, &kernel) {
            out.notes.push(d.render());
        }
        let spec = params.as_ref().and_then(|p| p.kernel.get(&name));
        // One allowance for every simulation of the kernel's lint: the
        // block fit, the test launch, the lock-step check, the race search.
        let work = Arc::new(Work::new(races::STEPS));
        let shape = assume_block(
            &parsed,
            &kernel,
            launch_shape(s.block, s.grid, &parsed, spec, &name),
            &work,
        );
        let start = Instant::now();
        let config = copper::bound::Config {
            block: shape.block,
            grid: shape.grid,
            ..s.analysis
        };
        let deadline = start + config.budget;
        let lint = lint_kernel_within(&kernel, config, spec, &work);
        let stopped = stop_note(&lint, races::STEPS);
        // With an assumed block, what the analysis for any block finds too
        // does not depend on the assumption.
        let any_block: Option<BTreeSet<(Code, usize, usize)>> = shape.assumed.then(|| {
            let config = copper::bound::Config {
                block: None,
                grid: None,
                budget: deadline.saturating_duration_since(Instant::now()),
                ..config
            };
            let prepared = copper::bound::prepare(&kernel, config);
            shape_findings(&kernel, &prepared, &s.analysis.hw, None, None)
                .iter()
                .chain(&copper::lint::redundant::findings(&prepared, None))
                .map(|f| (f.code, f.span.start, f.span.end))
                .collect()
        });
        let seconds = start.elapsed().as_secs_f64();
        let Some(f) = parsed.function(&name) else {
            continue;
        };
        let (kernel_file, line, col) = parsed.source.locate(f.meta.span.start);
        let kernel_file = kernel_file.to_path_buf();
        let race_line = match lint.block_size {
            BlockSize::Races(_) => lint
                .findings
                .iter()
                .find(|f| f.code == Code::DataRace)
                .map(|f| parsed.source.line_col(f.span.start).0),
            _ => None,
        };
        for mut finding in lint.findings {
            let (file, at_line, _) = parsed.source.locate(finding.span.start);
            if suppressions.silences(finding.code, file, at_line, (&kernel_file, line)) {
                continue;
            }
            if s.allowed.contains(&finding.code) {
                continue;
            }
            let w = match (a.witness, finding.code, finding.site) {
                (true, Code::BankConflict, Some(site))
                    if lint.prepared.index_dep(site).affine_parts().is_none() =>
                {
                    // The witness replaces the advice to look for one.
                    finding.help = None;
                    let bound = finding.worst.unwrap_or(1.0) as u64;
                    Some(match spec {
                        Some(spec) => witness::search(
                            &kernel,
                            site,
                            bound,
                            a.degree,
                            spec,
                            &s.analysis.hw,
                            witness::Limits {
                                nodes: a.max_witness_nodes.unwrap_or(milp::NODES),
                                ..witness::Limits::default()
                            },
                            deadline,
                        ),
                        None => Witness::NotFound(format!(
                            "no parameter file gives a launch of `{name}` to simulate"
                        )),
                    })
                }
                _ => None,
            };
            let assumed_block = any_block
                .as_ref()
                .filter(|any| {
                    finding.code != Code::DataRace
                        && finding.code != Code::DivergentBarrier
                        && finding.code != Code::BlockSizeDependent
                        && !any.contains(&(finding.code, finding.span.start, finding.span.end))
                })
                .map(|_| shape.source.clone());
            let mut located = locate(&parsed, &name, finding, w);
            located.assumed_block = assumed_block;
            out.findings.push(located);
        }
        out.kernels.push(KernelRow {
            name,
            file: kernel_file,
            line,
            col,
            race_line,
            assumed: shape.assumed.then(|| shape.source.clone()),
            block_size: lint.block_size,
            stopped,
            seconds,
        });
    }
    // With one kernel picked, the others' suppressions were not tried.
    if only.is_none() {
        out.problems = suppressions.unused();
    }
    out
}

fn locate(
    parsed: &ParsedFile,
    kernel: &str,
    finding: Finding,
    witness: Option<Witness>,
) -> Located {
    // In the header the kernel is defined in, when it is.
    let d = parsed
        .source
        .diagnostic(Severity::Warning, "", finding.span.start, "");
    Located {
        kernel: kernel.to_string(),
        source_line: d.source_line.unwrap_or_default(),
        file: d.file,
        line: d.line,
        col: d.col,
        calls: finding
            .calls
            .iter()
            .map(|c| {
                let (_, l, c) = parsed.source.locate(c.start);
                (l, c)
            })
            .collect(),
        finding,
        witness,
        assumed_block: None,
    }
}

/// Runs `copper lint`; the exit status is [`super::output::batch_status`]'s.
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
    let terminal = std::io::stderr().is_terminal() && !output::quiet();
    let done = AtomicUsize::new(0);
    let total = paths.len();
    let files: Vec<FileLint> = paths
        .par_iter()
        .map(|p| {
            let f = lint_file(p, a, s);
            if terminal && total > 1 {
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                eprint!("\r\x1b[2K[{n}/{total}] {}", p.shown());
                if n == total {
                    eprint!("\r\x1b[2K");
                }
            }
            f
        })
        .collect();
    let mut failed = false;
    if let Some(path) = &a.report {
        let lines: String = files
            .iter()
            .map(|f| format!("{}\n", file_json(f)))
            .collect();
        if let Err(e) = write_atomically(path, &lines) {
            eprintln!("copper: error: {}: {e}", path.shown());
            failed = true;
        }
    }
    if a.format != LintFormat::Github {
        for f in &files {
            for w in &f.warnings {
                eprintln!("{w}");
            }
            for n in &f.notes {
                if !output::quiet() {
                    eprintln!("{n}");
                }
            }
            for e in &f.errors {
                output::diagnostic(e);
            }
        }
    }
    match a.format {
        LintFormat::Text => text(&files),
        LintFormat::Json => {
            let doc = json!({ "files": files.iter().map(file_json).collect::<Vec<_>>() });
            println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
        LintFormat::Github => github(&files),
        LintFormat::Sarif => {
            if let Some(root) = root {
                sarif(&files, &root);
            }
        }
    }
    super::output::batch_status(
        failed,
        files
            .iter()
            .any(|f| !f.findings.is_empty() || !f.problems.is_empty()),
        files.iter().any(|f| !f.errors.is_empty()),
    )
}

/// A suppression problem as a warning diagnostic.
fn problem_diagnostic(p: &Problem) -> Diagnostic {
    Diagnostic {
        severity: Severity::Warning,
        code: "unused-suppression",
        message: p.message.clone(),
        file: p.file.clone(),
        line: p.line,
        col: p.col,
        source_line: None,
    }
}

/// The per-file table of a batch: full file names, kernels, errors and
/// warnings, and the totals.
fn summary_table(files: &[FileLint]) -> String {
    let names: Vec<String> = files.iter().map(|f| f.path.shown().to_string()).collect();
    let width = names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(0)
        .max("file".len());
    let mut t = format!(
        "{:<width$}  {:>7}  {:>6}  {:>8}\n",
        "file", "kernels", "errors", "warnings"
    );
    for (f, name) in files.iter().zip(&names) {
        t.push_str(&format!(
            "{:<width$}  {:>7}  {:>6}  {:>8}\n",
            name,
            f.kernels.len(),
            f.error_count(),
            f.warning_count()
        ));
    }
    t
}

fn text(files: &[FileLint]) {
    // Under `--quiet` stdout is closed: findings (errors and warnings)
    // go to stderr, the rest is left out.
    let quiet = output::quiet();
    let say = |line: String| {
        if quiet {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    };
    let color = if quiet {
        output::color_stderr()
    } else {
        output::color_stdout()
    };
    let mut counts = std::collections::BTreeMap::new();
    for f in files {
        for x in &f.findings {
            let d = copper::diag::Diagnostic {
                severity: x.finding.code.severity(),
                code: x.finding.code.name(),
                message: x.finding.message.clone(),
                file: x.file.clone(),
                line: x.line,
                col: x.col,
                source_line: Some(x.source_line.clone()),
            };
            say(d.render_colored(color));
            say(format!("  = why: {}", x.finding.why));
            if let Some(h) = &x.finding.help {
                say(format!("  = help: {h}"));
            }
            if let Some(c) = calls_text(x) {
                say(format!("  = note: {c}"));
            }
            if let Some(w) = &x.witness {
                say(format!("  = {}", witness_text(w)));
            }
            if let Some(a) = assumed_text(x) {
                say(format!("  = note: {a}"));
            }
            *counts.entry(x.finding.code.name()).or_insert(0) += 1;
        }
        for p in &f.problems {
            say(problem_diagnostic(p).render_colored(color));
        }
        if quiet {
            continue;
        }
        for k in &f.kernels {
            let verdict = match &k.block_size {
                BlockSize::Independent {
                    race_free_launches: Some(n),
                } => format!(
                    "independent of block size (assuming no data race; none found in {n} simulated launch{})",
                    if *n == 1 { "" } else { "es" }
                ),
                BlockSize::Independent {
                    race_free_launches: None,
                } => "independent of block size (assuming no data race)".to_string(),
                BlockSize::Depends(why) => format!("depends on block size because {why}"),
                BlockSize::Races(message) => match k.race_line {
                    Some(line) => format!("depends on block size: it races at line {line} ({message})"),
                    None => format!("depends on block size: it races ({message})"),
                },
                BlockSize::NotChecked(why) => format!("block size not checked: {why}"),
            };
            let verdict = match &k.stopped {
                Some(stop) => format!("{verdict}; {stop}"),
                None => verdict,
            };
            if let Some(a) = &k.assumed {
                println!(
                    "{}:{}:{}: note: kernel `{}`: {a}; no launch shape was given (pass --block or write a parameter file if it runs with another)",
                    k.file.shown(),
                    k.line,
                    k.col,
                    k.name
                );
            }
            println!(
                "{}:{}:{}: note: kernel `{}`: {verdict}",
                k.file.shown(),
                k.line,
                k.col,
                k.name
            );
        }
    }
    if quiet {
        return;
    }
    if files.len() > 1 {
        print!("{}", summary_table(files));
    }
    let total: usize = counts.values().sum();
    let kinds: Vec<String> = counts.iter().map(|(c, n)| format!("{n} {c}")).collect();
    let kernels: usize = files.iter().map(|f| f.kernels.len()).sum();
    let failed = files.iter().filter(|f| !f.errors.is_empty()).count();
    let errors: usize = files.iter().map(|f| f.errors.len()).sum();
    let problems: usize = files.iter().map(|f| f.problems.len()).sum();
    println!(
        "{total} finding{} in {kernels} kernel{}{}{}{}",
        if total == 1 { "" } else { "s" },
        if kernels == 1 { "" } else { "s" },
        if kinds.is_empty() {
            String::new()
        } else {
            format!(" ({})", kinds.join(", "))
        },
        if problems == 0 {
            String::new()
        } else {
            format!("; {}", count(problems as u64, "unused suppression"))
        },
        if errors == 0 {
            String::new()
        } else {
            format!(
                "; {} in {} of {} (not linted in full)",
                count(errors as u64, "error"),
                count(failed as u64, "file"),
                files.len()
            )
        }
    );
}

fn file_json(f: &FileLint) -> Value {
    json!({
        "file": f.path.shown().to_string(),
        "error_count": f.error_count(),
        "warning_count": f.warning_count(),
        "errors": f.errors.iter().map(error_json).collect::<Vec<_>>(),
        "unused_suppressions": f.problems.iter().map(|p| error_json(&problem_diagnostic(p))).collect::<Vec<_>>(),
        "findings": f.findings.iter().map(|x| json!({
            "kernel": x.kernel,
            "file": x.file.shown().to_string(),
            "code": x.finding.code,
            "line": x.line,
            "column": x.col,
            "message": x.finding.message,
            "why": x.finding.why,
            "help": x.finding.help,
            "worst": x.finding.worst,
            "calls": x.calls.iter().map(|&(line, column)| json!({ "line": line, "column": column })).collect::<Vec<_>>(),
            "witness": x.witness.as_ref().map(witness_json),
            "severity": x.finding.code.severity(),
            "depends_on_assumed_block": x.assumed_block.is_some(),
        })).collect::<Vec<_>>(),
        "kernels": f.kernels.iter().map(|k| json!({
            "kernel": k.name,
            "file": k.file.shown().to_string(),
            "line": k.line,
            "column": k.col,
            "block_size": k.block_size,
            "assumed_block": k.assumed,
            "work_limit_stopped": k.stopped,
            "seconds": k.seconds,
        })).collect::<Vec<_>>(),
    })
}

/// An error as JSON: where (`line` and `column` null for a whole file),
/// its code and message.
fn error_json(d: &Diagnostic) -> Value {
    let at = |n: usize| if n == 0 { Value::Null } else { json!(n) };
    json!({
        "file": d.file.shown().to_string(),
        "line": at(d.line),
        "column": at(d.col),
        "severity": d.severity,
        "code": d.code,
        "message": d.message,
    })
}

/// The inlined calls that reach a finding, in words.
fn calls_text(x: &Located) -> Option<String> {
    if x.calls.is_empty() {
        return None;
    }
    let at: Vec<String> = x.calls.iter().map(|(l, c)| format!("{l}:{c}")).collect();
    Some(format!(
        "in an inlined device function, reached through the {} at {}",
        if at.len() == 1 { "call" } else { "calls" },
        at.join(", ")
    ))
}

fn full_message(x: &Located) -> String {
    let mut m = format!("{}\nwhy: {}", x.finding.message, x.finding.why);
    if let Some(h) = &x.finding.help {
        m.push_str(&format!("\nhelp: {h}"));
    }
    if let Some(c) = calls_text(x) {
        m.push_str(&format!("\nnote: {c}"));
    }
    if let Some(w) = &x.witness {
        m.push_str(&format!("\n{}", witness_text(w)));
    }
    if let Some(a) = assumed_text(x) {
        m.push_str(&format!("\nnote: {a}"));
    }
    m
}

/// That a finding depends on the assumed block, in words.
fn assumed_text(x: &Located) -> Option<String> {
    x.assumed_block.as_ref().map(|a| {
        format!("found for the {a}; the analysis for any block shape does not find it, so it depends on that assumption")
    })
}

fn github(files: &[FileLint]) {
    for f in files {
        for e in &f.errors {
            println!("{}", gh_error(e));
        }
        for p in &f.problems {
            let d = problem_diagnostic(p);
            println!(
                "::warning file={},line={},col={},title={}::{}",
                gh_property(&d.file.shown().to_string()),
                d.line,
                d.col,
                gh_property("copper: unused-suppression"),
                gh_escape(&d.message)
            );
        }
        for x in &f.findings {
            let file = gh_property(&x.file.shown().to_string());
            let title = gh_property(&format!("copper: {}", x.finding.code.name()));
            let level = match x.finding.code.severity() {
                Severity::Error => "error",
                _ => "warning",
            };
            println!(
                "::{level} file={file},line={},col={},title={title}::{}",
                x.line,
                x.col,
                gh_escape(&full_message(x))
            );
        }
    }
}

fn sarif(files: &[FileLint], root: &SarifRoot) {
    let rules: Vec<sarif::Rule> = Code::ALL
        .iter()
        .map(|c| {
            let e = copper::lint::explain::explain(*c);
            sarif::Rule {
                full_description: Some(sarif::Message::new(e.full_description())),
                help_uri: Some(copper::lint::explain::help_uri(*c)),
                ..sarif::rule(c.name(), c.describe(), &e.text())
            }
        })
        .chain([sarif::error_rule()])
        .collect();
    let mut results = Vec::new();
    for f in files {
        for e in &f.errors {
            results.push(sarif::diagnostic_result(e, Level::Error, root));
        }
        for p in &f.problems {
            results.push(sarif::diagnostic_result(
                &problem_diagnostic(p),
                Level::Warning,
                root,
            ));
        }
        for x in &f.findings {
            let level = match x.finding.code.severity() {
                Severity::Error => Level::Error,
                _ => Level::Warning,
            };
            results.push(sarif::SarifResult::at(
                x.finding.code.name(),
                level,
                full_message(x),
                sarif::PhysicalLocation::at(root.artifact(&x.file), x.line, x.col),
            ));
        }
    }
    sarif::print(&sarif::log(rules, results, root));
}
