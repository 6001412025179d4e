//! `copper simulate`: run kernels under the cost semantics. Here the
//! command line, the kernels chosen, the messages and the text/JSON
//! formats and `--dump`; each kernel's run is the simulation driver's
//! ([`copper_search::driver::simulate`]).

use copper::shown::Shown;
use std::path::{Path, PathBuf};

use copper::cuda::parse::{parse_path_with, ParsedFile};
use copper::diag::{Diagnostic, Severity};
use copper::ir::{Kernel, Value};
use copper::sim::{SimError, SimOptions, SimResult};
use copper_search::driver::simulate::{simulate_kernel, Failure};
use copper_search::rank::fmt_num;
use std::collections::BTreeMap;

use super::args::{Format, SimulateArgs};
use super::files::{refuse_onto_input, write_atomically};
use super::output;
use super::settings::Settings;

mod schema;

fn error(path: &Path, msg: impl Into<String>) -> u8 {
    output::diagnostic(&Diagnostic::file_error(path, msg));
    2
}

fn sim_diag(file: &ParsedFile, e: &SimError) -> Diagnostic {
    let offset = if e.span.is_synthetic() {
        0
    } else {
        e.span.start
    };
    let [bx, by, bz] = e.block;
    let [tx, ty, tz] = e.thread;
    file.source.diagnostic(
        Severity::Error,
        "sim",
        offset,
        format!(
            "{} (block ({bx}, {by}, {bz}), thread ({tx}, {ty}, {tz}))",
            e.message
        ),
    )
}

/// Runs `copper simulate`.
pub fn run(a: &SimulateArgs, s: &Settings) -> u8 {
    if let Some(dump) = &a.dump {
        let inputs = s.inputs(std::slice::from_ref(&a.file));
        if let Err(e) = refuse_onto_input(dump, inputs.iter().map(PathBuf::as_path)) {
            eprintln!("copper: error: {e}");
            return 2;
        }
    }
    let parsed = match parse_path_with(&a.file, &s.preprocess) {
        Ok(p) => p,
        Err(d) => {
            output::diagnostic(&d);
            return 2;
        }
    };
    let params_path = s.params.path(&a.file);
    let params = match s.params.required(&a.file) {
        Ok(p) => p,
        Err(e) => return error(&e.path, e.reason.to_string()),
    };
    let opts = SimOptions {
        hw: s.analysis.hw,
        metrics: s.metrics.clone(),
        step_budget: a.max_steps,
        max_steps: Some(a.max_launch_steps),
        detect_races: a.races,
        ..SimOptions::default()
    };
    let mut status = 0;
    let mut reports = Vec::new();
    let mut dumps = schema::Dump::new();
    let kernels: Vec<String> = match &a.kernel {
        Some(k) => vec![parsed.kernel_name(k)],
        None => parsed
            .kernels()
            .map(|k| k.name.clone())
            .filter(|n| params.kernel.contains_key(n))
            .collect(),
    };
    if kernels.is_empty() {
        return error(
            &params_path,
            format!(
                "no kernel of {} has a [kernel.NAME] table in this parameter file",
                a.file.shown()
            ),
        );
    }
    for name in &kernels {
        let sim = match simulate_kernel(&parsed, name, params.kernel.get(name), &opts) {
            Ok(sim) => sim,
            Err(d) => {
                output::diagnostic(&d);
                status = 2;
                continue;
            }
        };
        for d in &sim.notes {
            output::diagnostic(d);
        }
        match sim.outcome {
            Ok(run) => {
                if a.dump.is_some() {
                    dumps.insert(name.clone(), dump_json(&run.result));
                }
                match a.format {
                    Format::Text => {
                        print_text(&parsed, &sim.kernel, &run.shape, &run.result, run.seconds)
                    }
                    Format::Json => {
                        reports.push(report_json(&parsed, &sim.kernel, &run.result, run.seconds))
                    }
                }
            }
            Err(Failure::NoEntry) => {
                status = 2;
                eprintln!(
                    "{}",
                    Diagnostic::file_error(
                        &params_path,
                        format!(
                            "no [kernel.{}] table",
                            copper::sim::params::kernel_key(name)
                        )
                    )
                );
            }
            Err(Failure::Inputs(e)) => {
                status = 2;
                eprintln!(
                    "{}",
                    Diagnostic::file_error(&params_path, format!("kernel `{name}`: {e}"))
                );
            }
            Err(Failure::Storage(e)) => {
                status = 2;
                let d =
                    parsed
                        .source
                        .diagnostic(Severity::Error, "sim", e.span.start, e.to_string());
                output::diagnostic(&d);
            }
            Err(Failure::Simulation(mut e)) => {
                status = 1;
                if e.message.starts_with(copper::sim::WORK_LIMIT) {
                    e.message.push_str(" (raise it with --max-launch-steps)");
                }
                let d = sim_diag(&parsed, &e);
                match a.format {
                    Format::Text => output::diagnostic(&d),
                    Format::Json => reports.push(schema::Kernel::Failed {
                        kernel: name.clone(),
                        error: d,
                    }),
                }
            }
        }
    }
    if a.format == Format::Json {
        output::json::print(&schema::Document {
            file: a.file.to_string_lossy().into_owned(),
            kernels: reports,
        });
    }
    // Bad input (status 2) writes nothing: no dump of the kernels that ran.
    if let (Some(path), true) = (&a.dump, status != 2) {
        if let Err(e) = write_atomically(path, &output::json::line(&dumps)) {
            return error(path, format!("cannot write dump: {e}"));
        }
    }
    status
}

fn value_json(v: &Value) -> schema::DumpValue {
    match v {
        Value::I(i) => schema::DumpValue::Integer(*i),
        Value::F(f) if f.is_finite() => schema::DumpValue::Float(*f),
        Value::F(f) => schema::DumpValue::Text(f.to_string()),
    }
}

fn dump_json(r: &SimResult) -> BTreeMap<String, Vec<schema::DumpValue>> {
    r.arrays
        .iter()
        .map(|(n, data)| (n.clone(), data.values().map(|v| value_json(&v)).collect()))
        .collect()
}

fn site_label(parsed: &ParsedFile, k: &Kernel, i: usize) -> (String, String) {
    let s = &k.sites[i];
    let (path, line, col) = parsed.source.locate(s.span.start);
    let text = parsed
        .source
        .slice(s.span)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let arr = &k.arrays[s.array];
    let space = if arr.is_shared() {
        "shared"
    } else if arr.is_global() {
        "global"
    } else {
        "local"
    };
    let rw = if s.is_write { "write" } else { "read" };
    (
        format!("{}:{line}:{col}", path.shown()),
        format!("{text} ({space} {rw})"),
    )
}

fn print_text(
    parsed: &ParsedFile,
    k: &Kernel,
    shape: &copper::launch::Shape,
    r: &SimResult,
    secs: f64,
) {
    let [gx, gy, gz] = shape.grid().to_array();
    let [bx, by, bz] = shape.block().to_array();
    println!(
        "kernel {}: grid ({gx}, {gy}, {gz}) block ({bx}, {by}, {bz}): {} blocks, {} warps, {} warp-instructions in {:.3} s",
        k.name, r.blocks, r.warps, r.instructions, secs
    );
    println!(
        "  {:<10} {:>14} {:>16} {:>16} {:>16}",
        "metric", "max per warp", "total", "block work", "block span"
    );
    for m in &r.metrics {
        println!(
            "  {:<10} {:>14} {:>16} {:>16} {:>16}",
            m.metric,
            fmt_num(m.max_warp),
            fmt_num(m.total),
            fmt_num(m.max_block_work),
            fmt_num(m.max_block_span)
        );
    }
    if !k.sites.is_empty() {
        println!(
            "  access sites (requests, transactions or conflict degree per request: mean / max):"
        );
        for (i, s) in r.sites.iter().enumerate() {
            let (loc, label) = site_label(parsed, k, i);
            let mean = if s.requests == 0 {
                0.0
            } else {
                s.transactions as f64 / s.requests as f64
            };
            println!(
                "    {loc}: {label}: {} requests, {mean:.2} / {}",
                s.requests, s.max_transactions
            );
        }
    }
}

fn report_json(parsed: &ParsedFile, k: &Kernel, r: &SimResult, secs: f64) -> schema::Kernel {
    let sites = r
        .sites
        .iter()
        .enumerate()
        .map(|(i, &stats)| {
            let (location, access) = site_label(parsed, k, i);
            schema::Site {
                location,
                access,
                stats,
            }
        })
        .collect();
    schema::Kernel::Ran(Box::new(schema::Run {
        kernel: k.name.clone(),
        blocks: r.blocks,
        warps: r.warps,
        instructions: r.instructions,
        work_units: r.work,
        seconds: secs,
        metrics: r.metrics.clone(),
        sites,
    }))
}
