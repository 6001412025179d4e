//! What `copper optimize` prints: text for people, JSON for scripts,
//! GitHub annotations and SARIF for CI.

use copper::bound::Outcome;
use copper::cuda::parse::ParsedFile;
use copper::shown::Shown;
use copper_search::driver::optimize::{FileRun, KernelRun};
use copper_search::pipeline::{KernelResult, Later, Verdict};
use copper_search::rank::fmt_num;

use super::ci::{gh_escape, gh_property};
use super::sarif::{self, Level, SarifRoot};
use crate::cli::output;
use crate::cli::patch::{file_diff, patch_base};
use crate::cli::settings::Search;

pub mod csv;
mod numbers;
mod schema;
pub mod simulated;

/// A bound for people: the expression, or "no bound".
fn show(o: &Outcome) -> String {
    match o {
        Outcome::Bound(e) => e.to_string(),
        Outcome::NoBound(..) => "no bound".into(),
    }
}

/// The bound of the ranking metric before and after.
fn ranked(k: &KernelResult, r: &Search) -> (String, String) {
    let m = r.pipeline.rank_metric;
    (
        show(&k.original.bounds[m].work),
        show(&k.best.bounds[m].work),
    )
}

fn status(k: &KernelRun, r: &Search) -> &'static str {
    match &k.result {
        Ok(x) if x.repaired(r.pipeline.rank_metric).is_some() => "repaired",
        Ok(x) if x.improved() => "improved",
        Ok(x) if x.through.as_ref().is_some_and(|t| t.better) => "improved",
        Ok(x) if x.through.is_some() => "rewritten",
        Ok(x)
            if matches!(
                x.original.bounds[r.pipeline.rank_metric].work,
                Outcome::NoBound(..)
            ) =>
        {
            "no bound"
        }
        Ok(x) if x.unchecked().is_some() => "unchecked",
        Ok(_) => "unchanged",
        Err(_) => "error",
    }
}

fn shape_text(k: &KernelRun) -> String {
    if k.shape.assumed {
        return format!(
            "{}; analyzed and rewritten for it (give --block or a parameter file if it runs with another)",
            k.shape.source
        );
    }
    match (k.shape.block, k.shape.grid) {
        (Some(b), Some(g)) => format!("block {}, grid {} (from {})", b, g, k.shape.source),
        (Some(b), None) => format!("block {} (from {})", b, k.shape.source),
        _ => k.shape.source.clone(),
    }
}

/// A summary-table row for a file or kernel that could not be searched.
/// `file:line:col` of the kernel's definition (in a header for a header's
/// kernel), where messages about it point.
fn place(k: &KernelRun) -> String {
    let d = &k.defined;
    format!("{}:{}:{}", d.file.shown(), d.line, d.col)
}

fn error_row(path: &str, kernel: &str) -> Vec<String> {
    let mut row = vec![path.to_string(), kernel.to_string()];
    row.extend(std::iter::repeat_n("-".to_string(), 4));
    row.push("error".into());
    row
}

/// Prints, on stderr, what could not be read or searched: files, the
/// diagnostics of functions copper cannot read, kernels whose search
/// failed (every format but `github`, whose annotations carry them).
pub fn errors(runs: &[FileRun]) {
    for f in runs {
        let path = f.path.shown();
        if let Err(e) = &f.parsed {
            eprintln!("{e}");
            eprintln!("{path}: skipped: the file could not be read");
            continue;
        }
        let color = output::color_stderr();
        for d in &f.diagnostics {
            eprintln!("{}", d.render_colored(color));
        }
        for k in f.kernels.iter().filter(|k| k.readable) {
            if let Err(e) = &k.result {
                eprintln!("{}: kernel {}: error: {e}", place(k), k.name);
            }
        }
    }
}

/// Prints the self-check's internal errors (a bound below a simulated
/// cost) on standard error, whatever the format; whether there were any.
pub fn internal_errors(runs: &[FileRun]) -> bool {
    let mut any = false;
    for f in runs {
        for k in &f.kernels {
            for e in k.result.iter().flat_map(|x| &x.internal_errors) {
                eprintln!("{}: kernel {}: {e}", place(k), k.name);
                any = true;
            }
        }
    }
    any
}

/// Prints the text report.
pub fn text(runs: &[FileRun], r: &Search, explain: bool, seconds: f64) {
    let base = patch_base(runs);
    let mut rows = Vec::new();
    for f in runs {
        let path = f.path.shown();
        if f.parsed.is_err() {
            rows.push(error_row(&path.to_string(), "-"));
            continue;
        }
        for k in &f.kernels {
            let head = format!("{}: kernel {}", place(k), k.name);
            let x = match &k.result {
                Ok(x) => x,
                Err(_) => {
                    rows.push(error_row(&path.to_string(), &k.name));
                    continue;
                }
            };
            let mut checked = match &x.checked_on {
                Some(Ok(n)) => {
                    format!("every candidate checked on {n} launches against the original")
                }
                Some(Err(e)) => format!("no candidate could be checked: {e}"),
                None => "no candidate beat the original's bound, so none was simulated".into(),
            };
            match &x.compiled {
                Some(Ok(())) => checked.push_str("; improving candidates compiled with nvcc"),
                Some(Err(e)) => checked.push_str(&format!(
                    "; no candidate could be compiled: the file as written fails with nvcc ({e})"
                )),
                None => {}
            }
            if x.improved() {
                let how = match x.repaired(r.pipeline.rank_metric) {
                    Some(why) => format!("repaired, its bound not lower ({why})"),
                    None => "improved".into(),
                };
                println!("{head}: {how}; {}; {checked}", shape_text(k));
                for a in &x.applied {
                    println!("  {}: {}", a.transform, a.description);
                    println!("    why: {} per warp, {}", r.metric, a.why);
                }
                for p in &x.preconditions {
                    println!("  assumes: {p}");
                }
            } else if let Some(t) = &x.through {
                let how = if t.better {
                    "improved"
                } else {
                    "rewritten, its bound not lower,"
                };
                println!(
                    "{head}: {how} through `{}`, whose search rewrote the template it instantiates (the rewrite was checked for this instantiation too); {}",
                    t.lead,
                    shape_text(k)
                );
                for a in &t.applied {
                    println!(
                        "  {} (as found for `{}`): {}",
                        a.transform, t.lead, a.description
                    );
                    println!(
                        "    for this instantiation: {} per warp, {}",
                        r.metric, a.why
                    );
                }
            } else if let Some(why) = &x.not_rewritten {
                println!("{head}: not rewritten; {}; {why}", shape_text(k));
            } else if let Some(why) = x.unchecked() {
                println!(
                    "{head}: unchecked: its candidates could not be checked, so none was suggested; {}; {why}",
                    shape_text(k)
                );
            } else {
                println!("{head}: no improvement found; {}; {checked}", shape_text(k));
            }
            if x.assumed {
                println!("  test launches: {}", x.assumptions.join("; "));
            }
            if let Some(at) = x.ranker.said().filter(|_| x.not_rewritten.is_none()) {
                println!("  {at}");
            }
            if let Some(later) = x.wins_later(r.pipeline.rank_metric) {
                println!("  {}", later_text(&later));
            }
            print_bounds(x);
            match &x.read_only {
                Some(Ok(s)) => println!("  suggestion (read-only data path): {}", s.description),
                Some(Err(why)) if explain => {
                    println!("  no read-only data path suggestion: {why}")
                }
                _ => {}
            }
            if explain {
                print_steps(x);
            }
            if let (true, Some(why)) = (x.improved(), &x.stopped) {
                println!("  not every transform had its turn: {why}");
            }
            let candidates: usize = x.steps.iter().map(|s| s.considered.len()).sum();
            println!(
                "  searched in {} ms ({candidates} candidates)\n",
                fmt_num((x.seconds * 1e3).round())
            );
            let (before, after) = ranked(x, r);
            let applied: Vec<&str> = x
                .applied
                .iter()
                .chain(x.through.iter().flat_map(|t| &t.applied))
                .map(|a| a.transform)
                .collect();
            rows.push(vec![
                path.to_string(),
                k.name.clone(),
                before,
                if x.improved() || x.through.is_some() {
                    after
                } else {
                    "-".into()
                },
                if applied.is_empty() {
                    "-".into()
                } else {
                    applied.join(", ")
                },
                format!("{} ms", fmt_num((x.seconds * 1e3).round())),
                status(k, r).into(),
            ]);
        }
        let diff = file_diff(f, &base);
        if !diff.is_empty() {
            output::print_diff(&diff);
            println!();
        }
    }
    if rows.len() > 1 {
        print_table(&rows, &r.metric);
    }
    let improved = rows.iter().filter(|r| r[6] == "improved").count();
    let repaired = match rows.iter().filter(|r| r[6] == "repaired").count() {
        0 => String::new(),
        n => format!("{n} repaired, "),
    };
    let errors = rows.iter().filter(|r| r[6] == "error").count();
    let unchecked = rows.iter().filter(|r| r[6] == "unchecked").count();
    let no_bound = rows.iter().filter(|r| r[6] == "no bound").count();
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    println!(
        "{} in {}: {improved} improved, {repaired}{unchecked} unchecked, {}{}, {} s",
        plural(rows.iter().filter(|r| r[1] != "-").count(), "kernel"),
        files_text(runs),
        if no_bound > 0 {
            format!("{no_bound} with no bound, ")
        } else {
            String::new()
        },
        plural(errors, "error"),
        fmt_num((seconds * 100.0).round() / 100.0)
    );
}

/// "2 files" for the files given, "1 file (+1 header)" when headers were
/// searched for the kernels they use.
fn files_text(runs: &[FileRun]) -> String {
    let headers = runs.iter().filter(|f| f.header).count();
    let files = runs.len() - headers;
    let given = format!("{files} file{}", if files == 1 { "" } else { "s" });
    match headers {
        0 => given,
        1 => format!("{given} (+1 header)"),
        n => format!("{given} (+{n} headers)"),
    }
}

/// "at larger sizes: tiled matrix multiply lowers the bound from about
/// n=131; rank at the sizes you run with `--at n=…`, or by growth with
/// `--asymptotic`" (the crossing is the candidate's bound's, before any
/// guard a launch-less file adds: no `--at` value is promised).
fn later_text(later: &Later) -> String {
    let from: Vec<String> = later
        .from
        .iter()
        .map(|(k, v)| format!("{k}={}", fmt_num(*v)))
        .collect();
    let names: Vec<String> = later.from.keys().map(|k| format!("{k}=…")).collect();
    format!(
        "at larger sizes: {} lowers the bound from about {}; rank at the sizes you run with `--at {}`, or by growth with `--asymptotic`",
        later.transform,
        from.join(", "),
        names.join(",")
    )
}

fn print_bounds(x: &KernelResult) {
    let width = x
        .original
        .bounds
        .iter()
        .map(|b| b.metric.len())
        .max()
        .unwrap_or(6)
        .max(8);
    let before: Vec<String> = x.original.bounds.iter().map(|b| show(&b.work)).collect();
    let bw = before
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let changed = x.improved() || x.through.is_some();
    if changed {
        println!("  {:<width$}  {:<bw$}  after", "per warp", "before");
    } else {
        println!("  {:<width$}  bound", "per warp");
    }
    for (i, b) in x.original.bounds.iter().enumerate() {
        if changed {
            let after = show(&x.best.bounds[i].work);
            println!("  {:<width$}  {:<bw$}  {after}", b.metric, before[i]);
        } else {
            println!("  {:<width$}  {}", b.metric, before[i]);
        }
    }
    for a in x
        .original
        .bounds
        .first()
        .map_or(&[][..], |b| &b.assumes[..])
    {
        println!("  {}", a.report_line());
    }
    let mut reasons: Vec<String> = Vec::new();
    for b in &x.original.bounds {
        if let Outcome::NoBound(why, span) = &b.work {
            let at = span
                .filter(|s| !s.is_synthetic())
                .map(|s| {
                    // Spans are the searched file's (the kernel's excerpt).
                    let source = &x.original.file.source;
                    let (l, c) = source.line_col(s.start);
                    format!(" (at {}:{l}:{c})", source.path.shown())
                })
                .unwrap_or_default();
            let line = format!("  no bound: {why}{at}");
            if !reasons.contains(&line) {
                reasons.push(line);
            }
        }
    }
    for line in reasons {
        println!("{line}");
    }
}

fn print_steps(x: &KernelResult) {
    for s in &x.steps {
        println!("  [round {}: {}]", s.round, s.transform);
        if s.considered.is_empty() && s.skipped.is_empty() {
            println!("    nothing to do");
        }
        for c in &s.considered {
            let (mark, why) = match &c.verdict {
                Verdict::Chosen(w) => ("chosen", w),
                Verdict::Outranked(w) => ("better, but outranked", w),
                Verdict::NotBetter(w) => ("not better", w),
                Verdict::Failed(w) => ("dropped (failed its check)", w),
                Verdict::Unchecked(w) => ("dropped (could not be checked)", w),
            };
            println!("    {mark}: {}", c.description);
            println!("      {why}");
        }
        for sk in &s.skipped {
            let at = if sk.span.is_synthetic() {
                String::new()
            } else {
                let (l, c) = x.original.file.source.line_col(sk.span.start);
                format!("{l}:{c}: ")
            };
            println!("    left alone: {at}{}", sk.reason);
        }
    }
}

fn print_table(rows: &[Vec<String>], metric: &str) {
    let header = vec![
        "file".to_string(),
        "kernel".into(),
        format!("{metric} before"),
        "after".into(),
        "transforms".into(),
        "time".into(),
        "status".into(),
    ];
    // File and kernel names in full: two students' files must not read
    // the same.
    let clip = |i: usize, s: &str| {
        if i >= 2 && s.chars().count() > 40 {
            format!("{}…", s.chars().take(39).collect::<String>())
        } else {
            s.to_string()
        }
    };
    let all: Vec<Vec<String>> = std::iter::once(header)
        .chain(
            rows.iter()
                .map(|r| r.iter().enumerate().map(|(i, c)| clip(i, c)).collect()),
        )
        .collect();
    let widths: Vec<usize> = (0..7)
        .map(|i| all.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    for r in &all {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        println!("{}", cells.join("  ").trim_end());
    }
    println!();
}

/// One change to the file as read: the region replaced (1-based line and
/// column of its start and end, end exclusive; and byte offsets) and the
/// text that replaces it.
struct Edit {
    start: (usize, usize),
    end: (usize, usize),
    bytes: (usize, usize),
    text: String,
}

/// The line-level edits that turn the file as read into the file with
/// the kernel's best version in it.
fn edits(parsed: &ParsedFile, x: &KernelResult) -> Vec<Edit> {
    let Some(item) = parsed.item(&x.name) else {
        return Vec::new();
    };
    let Some(old) = parsed.source.text.get(item.span.start..item.span.end) else {
        return Vec::new();
    };
    copper::cuda::diff::replacements(old, &x.best_text())
        .into_iter()
        .map(|r| {
            let bytes = (item.span.start + r.start, item.span.start + r.end);
            Edit {
                start: parsed.source.line_col(bytes.0),
                end: parsed.source.line_col(bytes.1),
                bytes,
                text: r.text,
            }
        })
        .collect()
}

/// The `--report` lines: one JSON object per kernel, or with `csv` one
/// CSV row per kernel under a header.
pub fn report(runs: &[FileRun], r: &Search, csv: bool) -> String {
    let objects = runs.iter().flat_map(|f| kernel_objects(f, r));
    match csv {
        true => csv::rows(&objects.map(|o| output::json::value(&o)).collect::<Vec<_>>()),
        false => objects
            .map(|o| format!("{}\n", output::json::line(&o)))
            .collect(),
    }
}

/// Prints the patch of the batch (`--diff`), then, on stderr and even
/// under `--quiet`, where to apply it from and what it assumes of its
/// callers.
pub fn patch(runs: &[FileRun]) {
    let base = patch_base(runs);
    for f in runs {
        output::print_diff(&file_diff(f, &base));
    }
    if let Some(note) = &base.note {
        // Even under `--quiet`: the patch cannot be applied without it.
        eprintln!("copper: note: {note}");
    }
    // Even under `--quiet`: what the patch assumes of its callers.
    for f in runs {
        for k in &f.kernels {
            for p in k
                .result
                .iter()
                .filter(|x| x.improved())
                .flat_map(|x| &x.preconditions)
            {
                eprintln!("copper: note: {}: `{}`: {p}", f.path.shown(), k.name);
            }
        }
    }
}

/// One JSON object per kernel of a file (the `--report` lines).
fn kernel_objects(f: &FileRun, r: &Search) -> Vec<schema::Kernel> {
    let path = f.path.shown().to_string();
    let parsed = match &f.parsed {
        Ok(parsed) => parsed,
        Err(e) => {
            return vec![schema::Kernel::Unread(schema::Unread {
                file: path,
                status: "error",
                error: e.to_string(),
            })]
        }
    };
    f.kernels
        .iter()
        .map(|k| {
            let outcome = match &k.result {
                Err(e) => schema::Outcome::Failed {
                    error: e.to_string(),
                },
                Ok(x) => schema::Outcome::Searched(Box::new(searched(parsed, k, x, r))),
            };
            schema::Kernel::Read(Box::new(schema::ReadKernel {
                file: k.defined.file.shown().to_string(),
                kernel: k.name.clone(),
                line: k.defined.line,
                column: k.defined.col,
                status: status(k, r),
                block: k.shape.block,
                grid: k.shape.grid,
                shape_from: k.shape.source.clone(),
                block_assumed: k.shape.assumed,
                metric: r.metric.clone(),
                outcome,
            }))
        })
        .collect()
}

/// The report of a kernel `k` whose search gave `x`.
fn searched(parsed: &ParsedFile, k: &KernelRun, x: &KernelResult, r: &Search) -> schema::Searched {
    let sizes = x.sizes.as_ref();
    let (bound_before, bound_after) = ranked(x, r);
    let n = numbers::ranked(x, r.pipeline.rank_metric);
    let applied = || {
        x.applied
            .iter()
            .chain(x.through.iter().flat_map(|t| &t.applied))
    };
    let improved = x.improved();
    schema::Searched {
        bounds: x
            .original
            .bounds
            .iter()
            .zip(&x.best.bounds)
            .map(|(b, a)| schema::BoundPair {
                metric: b.metric.clone(),
                before: show(&b.work),
                after: show(&a.work),
                before_value: numbers::value(&b.work, sizes),
                after_value: numbers::value(&a.work, sizes),
            })
            .collect(),
        bound_before,
        bound_after,
        value_before: n.before,
        value_after: n.after,
        improvement: n.improvement,
        simulated: k
            .simulated
            .as_ref()
            .map(|sim| simulated::fields(sim, &r.pipeline.metrics, r.pipeline.rank_metric)),
        sizes: sizes.map(|s| schema::Sizes {
            from: s.from.clone(),
            values: s.values.clone(),
        }),
        sizes_text: sizes.map(numbers::sizes_text),
        ranked: x.ranker.said().filter(|_| x.not_rewritten.is_none()),
        wins_later: x
            .wins_later(r.pipeline.rank_metric)
            .map(|l| schema::WinsLater {
                transform: l.transform,
                text: later_text(&l),
                from: l.from,
            }),
        transforms_text: applied()
            .map(|a| a.transform)
            .collect::<Vec<_>>()
            .join(", "),
        input_assumptions: x.original.bounds.first().map_or(Vec::new(), |b| {
            b.assumes
                .iter()
                .map(copper::bound::InputAssumption::record)
                .collect()
        }),
        through: x.through.as_ref().map(|t| t.lead.clone()),
        preconditions: x.preconditions.clone(),
        applied: applied()
            .map(|a| schema::AppliedTransform {
                transform: a.transform,
                description: a.description.clone(),
                why: a.why.clone(),
            })
            .collect(),
        suggestions: x
            .read_only
            .iter()
            .flatten()
            .map(|s| schema::Suggestion {
                kind: "read-only data path",
                description: s.description.clone(),
                kernel_after: copper::cuda::print::function(&s.function),
            })
            .collect(),
        checked_launches: x.checked_on.as_ref().and_then(|c| c.as_ref().ok()).copied(),
        check_error: x
            .checked_on
            .as_ref()
            .and_then(|c| c.as_ref().err())
            .filter(|_| x.not_rewritten.is_none())
            .map(ToString::to_string),
        not_rewritten: x.not_rewritten.clone(),
        test_launch: x.assumptions.clone(),
        nvcc_checked: x.compiled.is_some(),
        nvcc_error: x
            .compiled
            .as_ref()
            .and_then(|c| c.as_ref().err())
            .map(ToString::to_string),
        candidates: x.steps.iter().map(|s| s.considered.len()).sum(),
        search_stopped: x.stopped.clone(),
        seconds: x.seconds,
        kernel_after: improved.then(|| x.best_text()),
        edits: improved.then(|| {
            edits(parsed, x)
                .into_iter()
                .map(|e| schema::Edit {
                    start: schema::Position {
                        line: e.start.0,
                        column: e.start.1,
                        byte: e.bytes.0,
                    },
                    end: schema::Position {
                        line: e.end.0,
                        column: e.end.1,
                        byte: e.bytes.1,
                    },
                    text: e.text,
                })
                .collect()
        }),
    }
}

/// Prints one JSON document: every kernel, and the diff of every file.
pub fn json(runs: &[FileRun], r: &Search, seconds: f64) {
    let base = patch_base(runs);
    let doc = schema::Document {
        kernels: runs.iter().flat_map(|f| kernel_objects(f, r)).collect(),
        diffs: runs
            .iter()
            .filter(|f| f.rewritten.is_some())
            .map(|f| schema::FileDiff {
                file: f.path.shown().to_string(),
                diff: file_diff(f, &base),
            })
            .collect(),
        seconds,
    };
    output::json::print(&doc);
}

/// Prints GitHub Actions annotations: a notice per improved kernel, an
/// error per kernel or file that could not be read.
/// What a rewrite offers, as a word for a title and a phrase: faster,
/// or (a repair whose bound is not lower) safer, and why.
fn offer(x: &KernelResult, r: &Search) -> (&'static str, String) {
    match x.repaired(r.pipeline.rank_metric) {
        Some(why) => (
            "safer",
            format!("can be safer ({why}), its bound not lower"),
        ),
        None => ("faster", "can be faster".into()),
    }
}

pub fn github(runs: &[FileRun], r: &Search) {
    for f in runs {
        let file = gh_property(&f.path.shown().to_string());
        if let Err(e) = &f.parsed {
            println!("::error file={file}::{}", gh_escape(&e.to_string()));
            continue;
        }
        for k in &f.kernels {
            let file = gh_property(&k.defined.file.shown().to_string());
            let (line, col) = (k.defined.line, k.defined.col);
            match &k.result {
                Err(e) => println!(
                    "::error file={file},line={line},col={col}::{}",
                    gh_escape(&e.to_string())
                ),
                Ok(x) if x.improved() => {
                    let (before, after) = ranked(x, r);
                    let title = gh_property(&format!("copper: {} {}", offer(x, r).0, k.name));
                    let mut msg = format!("{}: {before} → {after} per warp\n", r.metric);
                    for a in &x.applied {
                        msg.push_str(&format!("{}: {} ({})\n", a.transform, a.description, a.why));
                    }
                    for p in &x.preconditions {
                        msg.push_str(&format!("Assumes: {p}\n"));
                    }
                    msg.push_str("Run `copper optimize --diff` for the patch.");
                    println!(
                        "::notice file={file},line={line},col={col},title={title}::{}",
                        gh_escape(&msg)
                    );
                }
                Ok(x) => {
                    if let Some(why) = x.unchecked() {
                        let title = gh_property(&format!("copper: {} unchecked", k.name));
                        println!(
                            "::warning file={file},line={line},col={col},title={title}::{}",
                            gh_escape(&format!(
                                "No rewrite of `{}` could be checked, so none is suggested: {why}",
                                k.name
                            ))
                        );
                    }
                }
            }
        }
    }
}

/// Prints a SARIF 2.1.0 log: a result per improved kernel, with the
/// rewritten kernel as a fix replacing the original; URIs relative to
/// `root`.
pub fn sarif(runs: &[FileRun], r: &Search, root: &SarifRoot) {
    let mut results = Vec::new();
    for f in runs {
        let Ok(parsed) = &f.parsed else {
            continue;
        };
        let uri = root.artifact(&f.path);
        for k in &f.kernels {
            let Ok(x) = &k.result else {
                continue;
            };
            let at = || {
                let d = &k.defined;
                sarif::PhysicalLocation::at(root.artifact(&d.file), d.line, d.col)
            };
            if let Some(why) = x.unchecked() {
                results.push(sarif::SarifResult::at(
                    "unchecked",
                    Level::Warning,
                    format!(
                        "No rewrite of kernel `{}` could be checked, so none is suggested: {why}",
                        k.name
                    ),
                    at(),
                ));
            }
            if !x.improved() {
                continue;
            }
            let (before, after) = ranked(x, r);
            let applied: Vec<String> = x
                .applied
                .iter()
                .map(|a| format!("{}: {} ({})", a.transform, a.description, a.why))
                .chain(x.preconditions.iter().map(|p| format!("assumes: {p}")))
                .collect();
            let replacements = edits(parsed, x)
                .into_iter()
                .map(|e| sarif::Replacement {
                    deleted_region: sarif::Region {
                        end_line: Some(e.end.0),
                        end_column: Some(e.end.1),
                        ..sarif::Region::start(e.start.0, e.start.1)
                    },
                    inserted_content: sarif::Message::new(e.text),
                })
                .collect();
            let mut result = sarif::SarifResult::at(
                "optimize",
                Level::Note,
                format!(
                    "Kernel `{}` {}: {} per warp {before} → {after}. {}",
                    k.name,
                    offer(x, r).1,
                    r.metric,
                    applied.join("; ")
                ),
                at(),
            );
            result.fixes.push(sarif::Fix {
                description: sarif::Message::new(applied.join("; ")),
                artifact_changes: vec![sarif::ArtifactChange {
                    artifact_location: uri.clone(),
                    replacements,
                }],
            });
            results.push(result);
        }
    }
    let rules = vec![
        sarif::rule(
            "optimize",
            "A rewrite lowers this kernel's worst-case cost bound",
            "copper found a rewritten kernel, checked to compute the same results, whose sound cost bound per warp is lower.",
        ),
        sarif::rule(
            "unchecked",
            "copper's rewrites of this kernel could not be checked",
            "copper checks every rewrite by simulating it against the original; it could not run the original cleanly (or compile it, with --nvcc), so it suggests nothing. Give a parameter file with a launch the kernel runs on, or --block/--grid.",
        ),
    ];
    sarif::print(&sarif::log(rules, results, root));
}
