//! `copper annotate`: a kernel's source with, on each line, what its
//! statements cost in a simulation of the test launch (summed over every
//! warp, per metric) and the line's share of the whole, under the bound
//! per warp and the worst warp simulated — the source view of a profiler,
//! with the proved bound beside it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use copper::bound::{prepare, Config, Outcome};
use copper::cost::{Counts, Metric};
use copper::cuda::parse::ParsedFile;
use copper::ir::Kernel;
use copper::shown::Shown;
use copper::sim::{inputs_from_spec, simulate_by_statement, SimOptions};
use copper_search::launch::dims;

use super::output::lower_or_report;
use super::params::{parse_with_params, test_launch};
use super::settings::Settings;

/// Runs `copper annotate` on `file` (only kernel `only` when given). Exit
/// status: 0 when every kernel was annotated, 1 when some could not be
/// (no launch, or the simulation failed), 2 on bad input.
pub fn run(file: &Path, only: Option<&str>, s: &Settings) -> u8 {
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
    let mut status = 0;
    let mut printed = false;
    for name in names {
        let Some(kernel) = lower_or_report(&parsed, &name) else {
            status = 1;
            continue;
        };
        let spec = params.as_ref().and_then(|p| p.kernel.get(&name));
        match annotate(&parsed, &kernel, spec, s) {
            // A blank line between kernels.
            Ok(text) => {
                print!("{}{text}", if printed { "\n" } else { "" });
                printed = true;
            }
            Err(why) => {
                eprintln!("{}: kernel `{name}`: not annotated: {why}", file.shown());
                status = 1;
            }
        }
    }
    status
}

/// The annotated source of `kernel`, or why there is none.
fn annotate(
    parsed: &ParsedFile,
    kernel: &Kernel,
    spec: Option<&copper::sim::params::LaunchSpec>,
    s: &Settings,
) -> Result<String, String> {
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
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({}:{first}), grid {}, block {}",
        kernel.name,
        path.shown(),
        dims(grid),
        dims(block)
    );
    for a in &launch.assumptions {
        let _ = writeln!(out, "  {a}");
    }
    for (m, r) in s.metrics.iter().zip(&result.metrics) {
        let b = prep.bound(m);
        let bound = match &b.work {
            Outcome::Bound(e) => match e.eval(&values) {
                Some(v) => format!("{e} = {} at this launch", num(v)),
                None => e.to_string(),
            },
            Outcome::NoBound(why, _) => format!("no bound ({why})"),
        };
        let _ = writeln!(
            out,
            "  {}: bound per warp {bound}; simulated worst warp {}, all warps {}",
            m.name,
            num(r.max_warp),
            num(r.total)
        );
    }
    // Costs per line of the kernel; statements placed elsewhere (a
    // header, a macro's definition) are summed apart.
    let mut by_line: BTreeMap<usize, Counts> = BTreeMap::new();
    let mut elsewhere: Counts = [0; copper::cost::COUNTERS];
    for (at, counts) in &statements {
        let (p, line, _) = source.locate(*at);
        let into = if p == path && (first..=last).contains(&line) {
            by_line.entry(line).or_insert([0; copper::cost::COUNTERS])
        } else {
            &mut elsewhere
        };
        for (s, c) in into.iter_mut().zip(counts) {
            *s += c;
        }
    }
    let metrics: Vec<&Metric> = s.metrics.iter().collect();
    let totals: Vec<f64> = result.metrics.iter().map(|r| r.total).collect();
    let width = metrics
        .iter()
        .map(|m| m.name.len().max(9))
        .collect::<Vec<_>>();
    let header: Vec<String> = metrics
        .iter()
        .zip(&width)
        .map(|(m, w)| format!("{:>w$}", m.name))
        .collect();
    let _ = writeln!(out, "{}  {:>6}  line", header.join(" "), "share");
    let row = |counts: Option<&Counts>| -> (String, String) {
        let Some(c) = counts else {
            let blank: Vec<String> = width.iter().map(|w| " ".repeat(*w)).collect();
            return (blank.join(" "), " ".repeat(6));
        };
        let cells: Vec<String> = metrics
            .iter()
            .zip(&width)
            .map(|(m, w)| format!("{:>w$}", num(m.work.cost(c))))
            .collect();
        let share = match totals.first() {
            Some(&t) if t > 0.0 => format!("{:>5.1}%", 100.0 * metrics[0].work.cost(c) / t),
            _ => format!("{:>6}", "-"),
        };
        (cells.join(" "), share)
    };
    for line in first..=last {
        let (cells, share) = row(by_line.get(&line));
        let text = copper::shown::escaped_controls(source.line_text(line));
        let _ = writeln!(out, "{cells}  {share}  {line:>4} | {text}");
    }
    if elsewhere.iter().any(|&c| c > 0) {
        let (cells, share) = row(Some(&elsewhere));
        let _ = writeln!(
            out,
            "{cells}  {share}     (code from headers or macro definitions)"
        );
    }
    Ok(out)
}

/// A cost for people: whole numbers as such, others with two decimals.
fn num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}
