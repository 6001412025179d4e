//! `copper annotate`: a kernel's source with, on each line, what its
//! statements cost in a simulation of the test launch (summed over every
//! warp, per metric) and the line's share of the whole, under the bound
//! per warp and the worst warp simulated — the source view of a profiler,
//! with the proved bound beside it. With `--html`, one self-contained page
//! ([`html`]) adds the lint's findings on their lines and a plot of the
//! bound against simulated costs at several sizes ([`plot`]). Each
//! kernel's annotation, the search for its rewrite and the plot are the
//! annotation driver's ([`copper_search::driver::annotate`]), the lint's
//! findings for the page the lint driver's
//! ([`copper_search::driver::lint::lint_kernel`]); here the command line,
//! the findings placed on the page's lines, and the text view.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use copper::cuda::parse::ParsedFile;
use copper::ir::Kernel;
use copper::lint::races;
use copper::lint::suppress::Suppressions;
use copper::shown::Shown;
use copper::sim::params::LaunchSpec;
use copper::sim::work::Work;
use copper_search::driver::annotate::plot;
use copper_search::driver::annotate::rewrite::{self, RewriteSearch};
use copper_search::driver::annotate::{annotate, Annotation, MetricLine};
use copper_search::driver::lint::{lint_kernel, Checks};
use copper_search::launch::KnownShape;
use copper_search::pipeline::Cache;

use super::files::{refuse_onto_input, write_atomically};
use super::output::lower_or_report;
use super::params::parse_with_params;
use super::settings::Settings;

mod html;

/// Runs `copper annotate` on `file` (only kernel `only` when given),
/// printing the annotated source, or writing one page to `html`. Exit
/// status: 0 when every kernel was annotated, 1 when some could not be
/// (no launch, or the simulation failed, or the page could not be
/// written), 2 on bad input.
pub fn run(
    file: &Path,
    only: Option<&str>,
    html: Option<&Path>,
    rewrite: bool,
    s: &Settings,
) -> u8 {
    if let Some(out) = html {
        if let Err(e) = refuse_onto_input(out, [file]) {
            eprintln!("copper: error: {e}");
            return 2;
        }
    }
    let (parsed, params) = match parse_with_params(file, s) {
        Ok(x) => x,
        Err(status) => return status,
    };
    let only = only.map(|k| parsed.kernel_name(k));
    let names: Vec<String> = parsed
        .kernels()
        .filter(|f| only.as_ref().is_none_or(|n| *n == f.name))
        .map(|f| f.name.clone())
        .collect();
    if let Some(n) = only.filter(|_| names.is_empty()) {
        eprintln!("{}: error: no kernel named `{n}`", file.shown());
        return 2;
    }
    let mut suppressions = html.map(|_| Suppressions::of_parsed(&parsed));
    let with_rewrite = rewrite || html.is_some();
    let cache = Cache::default();
    let mut status = 0;
    let mut pages = Vec::new();
    let mut printed = false;
    for name in names {
        let Some(kernel) = lower_or_report(&parsed, &name) else {
            status = 1;
            continue;
        };
        let spec = params.as_ref().and_then(|p| p.kernel.get(&name));
        let (a, launch) = match annotate(&parsed, &kernel, spec, s.analysis, &s.metrics) {
            Ok(x) => x,
            Err(why) => {
                eprintln!("{}: kernel `{name}`: not annotated: {why}", file.shown());
                status = 1;
                continue;
            }
        };
        let rewritten = with_rewrite
            .then(|| match &s.search {
                Some(search) => {
                    let r = RewriteSearch {
                        block: s.block,
                        grid: s.grid,
                        pipeline: &search.pipeline,
                        analysis: s.analysis,
                        metrics: &s.metrics,
                    };
                    rewrite::search(&parsed, &kernel, spec, &launch, &r, &cache)
                        .map_err(|e| e.to_string())
                }
                None => Err("no search settings".to_string()),
            })
            .transpose()
            .unwrap_or_else(|why| {
                eprintln!("{}: kernel `{name}`: no rewrite: {why}", file.shown());
                None
            });
        match &mut suppressions {
            Some(sup) => pages.push(html::KernelPage {
                findings: findings(&parsed, &kernel, &a, &launch, sup, s),
                plot: plot::sweep(
                    &kernel,
                    &launch,
                    a.metrics.first(),
                    &s.metrics,
                    s.analysis.hw,
                ),
                annotation: a,
                rewrite: rewritten.flatten(),
            }),
            None => {
                // A blank line between kernels.
                print!("{}{}", if printed { "\n" } else { "" }, text(&a));
                printed = true;
                match rewritten {
                    Some(Some(r)) => print!("\n{}", rewrite_text(&r)),
                    Some(None) => println!("\n(no rewrite found that the bounds rank better)"),
                    None => {}
                }
            }
        }
    }
    if let Some(out) = html {
        let page = html::page(&file.shown().to_string(), &pages);
        if let Err(e) = write_atomically(out, &page) {
            eprintln!("copper: error: {}: {e}", out.shown());
            return 1;
        }
        eprintln!(
            "copper: wrote {} ({} kernel{})",
            out.shown(),
            pages.len(),
            if pages.len() == 1 { "" } else { "s" }
        );
    }
    status
}

/// The lint's findings for `kernel` at the annotated launch `spec` (the
/// lint driver's, [`lint_kernel`]), not silenced by an inline suppression
/// nor allowed, each with the line it is on (`None` when outside the
/// kernel's lines).
fn findings(
    parsed: &ParsedFile,
    kernel: &Kernel,
    a: &Annotation,
    spec: &LaunchSpec,
    suppressions: &mut Suppressions,
    s: &Settings,
) -> Vec<html::PageFinding> {
    let shape = KnownShape {
        block: Some(a.block),
        grid: Some(a.grid),
        source: "the annotated launch".into(),
        assumed: false,
    };
    let checks = Checks {
        analysis: s.analysis,
        allowed: &s.allowed,
        witness: None,
    };
    let work = Arc::new(Work::new(races::STEPS));
    let lint = lint_kernel(
        parsed,
        kernel,
        &shape,
        Some(spec),
        &checks,
        suppressions,
        &work,
    );
    let Some(row) = lint.row else {
        return Vec::new();
    };
    let numbers = a.lines.first().map(|l| l.number)..=a.lines.last().map(|l| l.number);
    lint.findings
        .into_iter()
        .map(|x| {
            let inside = x.file == row.file
                && Some(x.line) >= *numbers.start()
                && Some(x.line) <= *numbers.end();
            html::PageFinding {
                line: inside.then_some(x.line),
                place: format!("{}:{}:{}", x.file.shown(), x.line, x.col),
                severity: x.finding.code.severity().to_string(),
                code: x.finding.code.name().to_string(),
                message: x.finding.message,
                help: x.finding.help,
            }
        })
        .collect()
}

/// A metric's bound per warp in words, with its value at the launch.
pub(super) fn bound_text(m: &MetricLine) -> String {
    match (&m.bound, m.at_launch) {
        (Ok(e), Some(v)) => format!("{e} = {} at this launch", num(v)),
        (Ok(e), None) => e.to_string(),
        (Err(why), _) => format!("no bound ({why})"),
    }
}

/// The annotation as text: a header with the bounds, then a table of the
/// kernel's lines.
fn text(a: &Annotation) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({}), grid {}, block {}",
        a.kernel, a.place, a.grid, a.block
    );
    for x in &a.assumptions {
        let _ = writeln!(out, "  {x}");
    }
    for m in &a.metrics {
        let _ = writeln!(
            out,
            "  {}: bound per warp {}; simulated worst warp {}, all warps {}",
            m.name,
            bound_text(m),
            num(m.worst_warp),
            num(m.total)
        );
    }
    let width: Vec<usize> = a.metrics.iter().map(|m| m.name.len().max(9)).collect();
    let header: Vec<String> = a
        .metrics
        .iter()
        .zip(&width)
        .map(|(m, w)| format!("{:>w$}", m.name))
        .collect();
    let _ = writeln!(out, "{}  {:>6}  line", header.join(" "), "share");
    let row = |costs: Option<&Vec<f64>>| -> (String, String) {
        let Some(c) = costs else {
            let blank: Vec<String> = width.iter().map(|w| " ".repeat(*w)).collect();
            return (blank.join(" "), " ".repeat(6));
        };
        let cells: Vec<String> = c
            .iter()
            .zip(&width)
            .map(|(x, w)| format!("{:>w$}", num(*x)))
            .collect();
        let share = match a.share(c) {
            Some(p) => format!("{p:>5.1}%"),
            None => format!("{:>6}", "-"),
        };
        (cells.join(" "), share)
    };
    for line in &a.lines {
        let (cells, share) = row(line.costs.as_ref());
        let _ = writeln!(out, "{cells}  {share}  {:>4} | {}", line.number, line.text);
    }
    if let Some(c) = &a.elsewhere {
        let (cells, share) = row(Some(c));
        let _ = writeln!(
            out,
            "{cells}  {share}     (code from headers or macro definitions)"
        );
    }
    out
}

/// The rewrite as text: what was applied, the diff, then the rewritten
/// kernel annotated.
fn rewrite_text(r: &rewrite::Rewrite) -> String {
    let mut out = String::from("rewritten:\n");
    for a in &r.applied {
        let _ = writeln!(out, "  {a}");
    }
    for n in &r.notes {
        let _ = writeln!(out, "  note: {n}");
    }
    out.push_str(&r.diff);
    out.push('\n');
    out.push_str(&text(&r.annotation));
    out
}

/// A cost for people: whole numbers as such, others with two decimals.
pub(super) fn num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}
