//! What `copper lint` prints: text for people, JSON for scripts (and the
//! `--report` lines), GitHub annotations and SARIF for CI; witnesses are
//! [`witness`]'s.

use copper::diag::{Diagnostic, Severity};
use copper::lint::suppress::Problem;
use copper::lint::{count, BlockSize, Code};
use copper::shown::Shown;
use copper_search::driver::lint::{FileLint, Located};

use super::ci::{gh_error, gh_escape, gh_property};
use super::sarif::{self, Level, SarifRoot};
use crate::cli::output;
use witness::{witness_json, witness_text};

mod schema;
mod witness;

/// Prints, on stderr, what is not a finding: warnings about the files (a
/// header not found), notes (not under `--quiet`) and errors (every format
/// but `github`, whose annotations carry them).
pub fn errors(files: &[FileLint]) {
    for f in files {
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

/// Prints one JSON document: every file's results.
pub fn json(files: &[FileLint]) {
    output::json::print(&schema::Document {
        files: files.iter().map(file_json).collect(),
    });
}

/// The `--report` lines: one JSON object per file.
pub fn report(files: &[FileLint]) -> String {
    files
        .iter()
        .map(|f| format!("{}\n", output::json::line(&file_json(f))))
        .collect()
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

/// Prints the findings for people (each with its place, why, help and
/// witness), the unused suppressions, each kernel's block-size verdict,
/// and for a batch the per-file table and the totals.
pub fn text(files: &[FileLint]) {
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

/// One file's results as JSON: the `--report` line and the `json`
/// format's entry.
fn file_json(f: &FileLint) -> schema::File<'_> {
    schema::File {
        file: f.path.shown().to_string(),
        error_count: f.error_count(),
        warning_count: f.warning_count(),
        errors: f.errors.iter().map(error_json).collect(),
        unused_suppressions: f
            .problems
            .iter()
            .map(|p| error_json(&problem_diagnostic(p)))
            .collect(),
        findings: f
            .findings
            .iter()
            .map(|x| schema::Finding {
                kernel: &x.kernel,
                file: x.file.shown().to_string(),
                code: x.finding.code,
                line: x.line,
                column: x.col,
                message: &x.finding.message,
                why: &x.finding.why,
                help: x.finding.help.as_deref(),
                worst: x.finding.worst,
                calls: x
                    .calls
                    .iter()
                    .map(|&(line, column)| schema::Call { line, column })
                    .collect(),
                witness: x.witness.as_ref().map(witness_json),
                severity: x.finding.code.severity(),
                depends_on_assumed_block: x.assumed_block.is_some(),
            })
            .collect(),
        kernels: f
            .kernels
            .iter()
            .map(|k| schema::Kernel {
                kernel: &k.name,
                file: k.file.shown().to_string(),
                line: k.line,
                column: k.col,
                block_size: &k.block_size,
                assumed_block: k.assumed.as_deref(),
                work_limit_stopped: k.stopped.as_deref(),
                seconds: k.seconds,
            })
            .collect(),
    }
}

/// An error as JSON: where (`line` and `column` null for a whole file),
/// its code and message.
fn error_json(d: &Diagnostic) -> schema::Error {
    let at = |n: usize| (n != 0).then_some(n);
    schema::Error {
        file: d.file.shown().to_string(),
        line: at(d.line),
        column: at(d.col),
        severity: d.severity,
        code: d.code,
        message: d.message.clone(),
    }
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

/// Prints GitHub Actions annotations: errors, unused suppressions and
/// findings.
pub fn github(files: &[FileLint]) {
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

/// Prints the SARIF 2.1.0 log, file URIs relative to `root`.
pub fn sarif(files: &[FileLint], root: &SarifRoot) {
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
