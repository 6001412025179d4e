//! The output formats of `copper analyze`: per kernel, its shape, each
//! metric's per-warp, launch, span and block-time bounds, the input
//! assumptions, the `--check` comparison and the analysis time, as text
//! or JSON, from the analysis driver's [`Analysis`].

use copper::bound::{InputAssumption, NoBound, Outcome};
use copper::cuda::parse::ParsedFile;
use copper::shown::Shown;
use copper_search::driver::analyze::Analysis;
use std::path::Path;

use copper_search::rank::fmt_num;

use crate::cli::output;

mod schema;

/// A derived bound as text: ` ≤ bound`, or `: no bound (why)`.
fn bounded<T: std::fmt::Display>(r: &Result<T, NoBound>) -> String {
    match r {
        Ok(b) => format!(" ≤ {b}"),
        Err(why) => format!(": no bound ({why})"),
    }
}

/// A derived bound in JSON: its text, or `{"no_bound": why}`.
fn bounded_json<T: std::fmt::Display>(r: &Result<T, NoBound>) -> schema::Derived {
    match r {
        Ok(b) => schema::Derived::Bound(b.to_string()),
        Err(why) => schema::Derived::NoBound {
            no_bound: why.to_string(),
        },
    }
}

fn location(parsed: &ParsedFile, span: Option<copper::source::Span>) -> Option<(usize, usize)> {
    span.filter(|s| !s.is_synthetic())
        .map(|s| parsed.source.line_col(s.start))
}

/// Prints kernel `r` of `parsed` as text on stdout; `issue` is P in the
/// block-time bound `W/P + S`.
pub fn text(parsed: &ParsedFile, r: &Analysis, issue: u64) {
    let path = parsed.source.path.shown();
    let shape = match (r.shape.block, r.shape.grid) {
        (Some(b), Some(g)) => format!("block {}, grid {}", b, g),
        (Some(b), None) => format!("block {}, any grid", b),
        (None, Some(g)) => format!("any block, grid {}", g),
        (None, None) => "any block and grid".into(),
    };
    println!(
        "{}:{}:{}: kernel {}: {shape} (from {})",
        r.path, r.line, r.column, r.name, r.shape.source
    );
    let width = r
        .metrics
        .iter()
        .map(|m| m.bound.metric.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let mut assumptions = Vec::new();
    for m in &r.metrics {
        let b = &m.bound;
        match &b.work {
            Outcome::Bound(e) => {
                println!("  {:<width$}  per warp ≤ {e}", b.metric);
                if e.to_poly().is_some_and(|p| p.is_zero()) {
                    continue;
                }
                if let Some((warps, l)) = &m.launch {
                    println!("  {:<width$}  launch ({warps} warps){}", "", bounded(l));
                }
                if let Outcome::Bound(s) = &b.span {
                    if b.span != b.work {
                        println!("  {:<width$}  span per warp ≤ {s}", "");
                    }
                    match &m.block_time {
                        Some((warps, Ok(t))) => println!(
                            "  {:<width$}  block time ≤ W/{issue} + S = {t}  (W: work of its {warps} warps, S: span)",
                            ""
                        ),
                        Some((_, Err(why))) => {
                            println!("  {:<width$}  block time: no bound ({why})", "")
                        }
                        None => {}
                    }
                }
                assumptions.extend(e.assumptions());
            }
            Outcome::NoBound(why, span) => {
                let at = location(parsed, *span)
                    .map(|(l, c)| format!("\n  {:<width$}  at {path}:{l}:{c}", ""))
                    .unwrap_or_default();
                println!("  {:<width$}  no bound: {why}{at}", b.metric);
            }
        }
    }
    for a in r.metrics.first().map_or(&[][..], |m| &m.bound.assumes[..]) {
        println!("  {}", a.report_line());
    }
    assumptions.sort();
    assumptions.dedup();
    if !assumptions.is_empty() {
        println!(
            "  (each parenthesized factor counts as 0 where it is negative; the polynomial form assumes {})",
            assumptions.join(", ")
        );
    }
    match &r.check {
        Some(Ok(c)) => {
            let at: Vec<String> = c.inputs.iter().map(|(k, v)| format!("{k} = {v}")).collect();
            println!(
                "  check against the simulator at {}:",
                if at.is_empty() {
                    "the parameter file's launch".into()
                } else {
                    at.join(", ")
                }
            );
            for (m, (bound, sim)) in r.metrics.iter().zip(&c.rows) {
                let ratio = match bound {
                    Some(x) if *sim > 0.0 => format!("  ({:.2}×)", x / sim),
                    _ => String::new(),
                };
                let bound = bound.map_or("no bound".into(), fmt_num);
                println!(
                    "  {:<width$}  bound {bound}, simulated worst warp {}{ratio}",
                    m.bound.metric,
                    fmt_num(*sim)
                );
            }
        }
        Some(Err(e)) => println!("  check: {e}"),
        None => {}
    }
    let (vars, cons) = r
        .metrics
        .iter()
        .map(|m| (m.bound.lp_vars, m.bound.lp_constraints))
        .max()
        .unwrap_or((0, 0));
    println!(
        "  analyzed in {:.1} ms (largest LP: {vars} variables, {cons} constraints)",
        r.seconds * 1e3
    );
}

/// Prints the kernels of `file` (parsed as `parsed`) as one JSON
/// document on stdout.
pub fn json(file: &Path, parsed: &ParsedFile, reports: &[Analysis]) {
    output::json::print(&schema::Document {
        file: file.to_string_lossy().into_owned(),
        kernels: reports.iter().map(|r| report_json(parsed, r)).collect(),
    });
}

fn outcome_json(parsed: &ParsedFile, o: &Outcome) -> schema::Bound {
    match o {
        Outcome::Bound(e) => schema::Bound::Bound {
            bound: e.to_string(),
            polynomial: e.to_poly().map(|p| p.to_string()),
            polynomial_ascii: e.to_poly().map(|p| p.to_plain()),
            assumptions: e.assumptions(),
        },
        Outcome::NoBound(why, span) => {
            let at = location(parsed, *span);
            schema::Bound::NoBound {
                no_bound: why.to_string(),
                line: at.map(|x| x.0),
                column: at.map(|x| x.1),
            }
        }
    }
}

fn report_json(parsed: &ParsedFile, r: &Analysis) -> schema::Kernel {
    let metrics = r
        .metrics
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let b = &m.bound;
            let (launch, block_time) = match (&b.work, &b.span) {
                (Outcome::Bound(_), Outcome::Bound(_)) => (
                    m.launch.as_ref().map(|(n, l)| schema::Launch {
                        warps: *n,
                        bound: bounded_json(l),
                    }),
                    m.block_time.as_ref().map(|(_, t)| bounded_json(t)),
                ),
                _ => (None, None),
            };
            let check = match &r.check {
                Some(Ok(c)) => c.rows.get(i).map(|&(bound, worst)| schema::Check {
                    bound,
                    simulated_worst_warp: worst,
                }),
                _ => None,
            };
            schema::Metric {
                metric: b.metric.clone(),
                per_warp: outcome_json(parsed, &b.work),
                span_per_warp: outcome_json(parsed, &b.span),
                launch,
                block_time,
                check,
                lp_variables: b.lp_vars,
                lp_constraints: b.lp_constraints,
                seconds: b.seconds,
            }
        })
        .collect();
    schema::Kernel {
        kernel: r.name.clone(),
        line: r.line,
        column: r.column,
        block: r.shape.block,
        grid: r.shape.grid,
        shape_from: r.shape.source.clone(),
        check_inputs: match &r.check {
            Some(Ok(c)) => Some(c.inputs.clone()),
            _ => None,
        },
        check_error: match &r.check {
            Some(Err(e)) => Some(e.to_string()),
            _ => None,
        },
        seconds: r.seconds,
        input_assumptions: r.metrics.first().map_or(Vec::new(), |m| {
            m.bound
                .assumes
                .iter()
                .map(InputAssumption::record)
                .collect()
        }),
        metrics,
    }
}
