//! `copper annotate`: a kernel's source with, on each line, what its
//! statements cost in a simulation of the test launch (summed over every
//! warp, per metric) and the line's share of the whole, under the bound
//! per warp and the worst warp simulated — the source view of a profiler,
//! with the proved bound beside it. With `--html`, one self-contained page
//! ([`html`]) adds the lint's findings on their lines and a plot of the
//! bound against simulated costs at several sizes ([`plot`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use copper::bound::{prepare, BoundExpr, Config, Outcome};
use copper::cost::{Counts, COUNTERS};
use copper::cuda::parse::ParsedFile;
use copper::ir::Kernel;
use copper::lint::suppress::Suppressions;
use copper::lint::{lint_kernel_within, races};
use copper::shown::Shown;
use copper::sim::params::LaunchSpec;
use copper::sim::work::Work;
use copper::sim::{inputs_from_spec, simulate_by_statement, SimOptions};
use copper_search::launch::{dims, test_launch};
use copper_search::pipeline::Cache;

use super::files::{refuse_onto_input, write_atomically};
use super::output::lower_or_report;
use super::params::parse_with_params;
use super::settings::Settings;

mod html;
mod plot;
mod rewrite;

/// One kernel's annotation: what both views print.
pub(super) struct Annotation {
    /// The kernel's name.
    pub kernel: String,
    /// `file:line` of its definition, as shown.
    pub place: String,
    /// The test launch.
    pub grid: [u64; 3],
    /// The test launch's block.
    pub block: [u64; 3],
    /// Where the launch came from, and what was assumed.
    pub assumptions: Vec<String>,
    /// Per metric: the bound per warp and the simulation's figures.
    pub metrics: Vec<MetricLine>,
    /// Every line of the kernel, with its costs.
    pub lines: Vec<Line>,
    /// Costs of statements placed outside the kernel's lines (a header, a
    /// macro's definition), when there are any.
    pub elsewhere: Option<Vec<f64>>,
}

/// A metric's bound and simulated figures.
pub(super) struct MetricLine {
    /// The metric's name.
    pub name: String,
    /// The bound per warp, with its value at the launch, in words.
    pub bound: String,
    /// The bound per warp, when there is one.
    pub expr: Option<BoundExpr>,
    /// The most any one warp cost.
    pub worst_warp: f64,
    /// All warps together.
    pub total: f64,
}

/// One source line of a kernel.
pub(super) struct Line {
    /// Its number in its file.
    pub number: usize,
    /// Its text, control characters escaped.
    pub text: String,
    /// What its statements cost, per metric (`None`: no statement).
    pub costs: Option<Vec<f64>>,
}

impl Annotation {
    /// The share of the first metric's total that `costs` are, in percent.
    pub fn share(&self, costs: &[f64]) -> Option<f64> {
        let total = self.metrics.first()?.total;
        let c = costs.first()?;
        (total > 0.0).then(|| 100.0 * c / total)
    }
}

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
        let (a, launch) = match annotate(&parsed, &kernel, spec, s) {
            Ok(x) => x,
            Err(why) => {
                eprintln!("{}: kernel `{name}`: not annotated: {why}", file.shown());
                status = 1;
                continue;
            }
        };
        let rewritten = with_rewrite
            .then(|| rewrite::search(&parsed, &kernel, spec, &launch, s, &cache))
            .transpose()
            .unwrap_or_else(|why| {
                eprintln!("{}: kernel `{name}`: no rewrite: {why}", file.shown());
                None
            });
        match &mut suppressions {
            Some(sup) => pages.push(html::KernelPage {
                findings: findings(&parsed, &kernel, &a, &launch, sup, s),
                plot: plot::sweep(&kernel, &launch, a.metrics.first(), s),
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

/// The lint's findings for `kernel` at the annotated launch `spec`, not
/// silenced by an inline suppression, each with the line it is on (`None`
/// when outside the kernel's lines).
fn findings(
    parsed: &ParsedFile,
    kernel: &Kernel,
    a: &Annotation,
    spec: &LaunchSpec,
    suppressions: &mut Suppressions,
    s: &Settings,
) -> Vec<html::PageFinding> {
    let config = Config {
        block: Some(a.block),
        grid: Some(a.grid),
        ..s.analysis
    };
    let work = Arc::new(Work::new(races::STEPS));
    let lint = lint_kernel_within(kernel, config, Some(spec), &work);
    let Some(f) = parsed.function(&kernel.name) else {
        return Vec::new();
    };
    let (kernel_file, first, _) = parsed.source.locate(f.meta.span.start);
    let kernel_file = kernel_file.to_path_buf();
    let numbers = a.lines.first().map(|l| l.number)..=a.lines.last().map(|l| l.number);
    let mut out = Vec::new();
    for finding in lint.findings {
        let (file, line, col) = parsed.source.locate(finding.span.start);
        if suppressions.silences(finding.code, file, line, (&kernel_file, first))
            || s.allowed.contains(&finding.code)
        {
            continue;
        }
        let inside =
            file == kernel_file && Some(line) >= *numbers.start() && Some(line) <= *numbers.end();
        out.push(html::PageFinding {
            line: inside.then_some(line),
            place: format!("{}:{line}:{col}", file.shown()),
            severity: finding.code.severity().to_string(),
            code: finding.code.name().to_string(),
            message: finding.message,
            help: finding.help,
        });
    }
    out
}

/// The annotation of `kernel` and the launch it was simulated on, or why
/// there is none.
fn annotate(
    parsed: &ParsedFile,
    kernel: &Kernel,
    spec: Option<&LaunchSpec>,
    s: &Settings,
) -> Result<(Annotation, LaunchSpec), String> {
    let launch = test_launch(parsed, kernel, spec);
    let spec = launch
        .spec
        .ok_or_else(|| "no launch could be built (give a parameter file)".to_string())?;
    if let Some(why) = launch.unclean {
        return Err(format!(
            "the original does not run cleanly on a test launch: {why}"
        ));
    }
    let inputs = inputs_from_spec(kernel, &spec).map_err(|e| e.to_string())?;
    let opts = SimOptions {
        hw: s.analysis.hw,
        metrics: s.metrics.clone(),
        ..SimOptions::default()
    };
    let (result, statements) =
        simulate_by_statement(kernel, &inputs, &opts).map_err(|e| e.message)?;
    let mut values = spec.defines.clone();
    values.extend(spec.args.iter().map(|(k, v)| (k.clone(), *v)));
    let block: [u64; 3] = std::array::from_fn(|i| spec.block.get(i).copied().unwrap_or(1));
    let grid: [u64; 3] = std::array::from_fn(|i| spec.grid.get(i).copied().unwrap_or(1));
    let prep = prepare(
        kernel,
        Config {
            block: Some(block),
            grid: Some(grid),
            ..s.analysis
        },
    );
    let source = &parsed.source;
    let f = parsed.function(&kernel.name).ok_or("not listed")?;
    let (path, first, _) = source.locate(f.meta.span.start);
    let (_, last, _) = source.locate(f.meta.span.end.saturating_sub(1).max(f.meta.span.start));
    let metrics = s
        .metrics
        .iter()
        .zip(&result.metrics)
        .map(|(m, r)| {
            let (bound, expr) = match prep.bound(m).work {
                Outcome::Bound(e) => match e.eval(&values) {
                    Some(v) => (format!("{e} = {} at this launch", num(v)), Some(e)),
                    None => (e.to_string(), Some(e)),
                },
                Outcome::NoBound(why, _) => (format!("no bound ({why})"), None),
            };
            MetricLine {
                name: m.name.clone(),
                bound,
                expr,
                worst_warp: r.max_warp,
                total: r.total,
            }
        })
        .collect();
    // Costs per line of the kernel; statements placed elsewhere (a
    // header, a macro's definition) are summed apart.
    let mut by_line: BTreeMap<usize, Counts> = BTreeMap::new();
    let mut elsewhere: Counts = [0; COUNTERS];
    for (at, counts) in &statements {
        let (p, line, _) = source.locate(*at);
        let into = if p == path && (first..=last).contains(&line) {
            by_line.entry(line).or_insert([0; COUNTERS])
        } else {
            &mut elsewhere
        };
        for (s, c) in into.iter_mut().zip(counts) {
            *s += c;
        }
    }
    let costs = |c: &Counts| -> Vec<f64> { s.metrics.iter().map(|m| m.work.cost(c)).collect() };
    let lines = (first..=last)
        .map(|number| Line {
            number,
            text: copper::shown::escaped_controls(source.line_text(number)),
            costs: by_line.get(&number).map(costs),
        })
        .collect();
    let annotation = Annotation {
        kernel: kernel.name.clone(),
        place: format!("{}:{first}", path.shown()),
        grid,
        block,
        assumptions: launch.assumptions,
        metrics,
        lines,
        elsewhere: elsewhere.iter().any(|&c| c > 0).then(|| costs(&elsewhere)),
    };
    Ok((annotation, spec))
}

/// The annotation as text: a header with the bounds, then a table of the
/// kernel's lines.
fn text(a: &Annotation) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({}), grid {}, block {}",
        a.kernel,
        a.place,
        dims(a.grid),
        dims(a.block)
    );
    for x in &a.assumptions {
        let _ = writeln!(out, "  {x}");
    }
    for m in &a.metrics {
        let _ = writeln!(
            out,
            "  {}: bound per warp {}; simulated worst warp {}, all warps {}",
            m.name,
            m.bound,
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
