//! `copper analyze`: sound per-warp cost bounds, whole-launch bounds, and
//! block-time bounds `W/P + S`. Here the command line, the kernels chosen
//! and the diagnostics; each kernel's analysis is the analysis driver's
//! ([`copper_search::driver::analyze`]), the output formats are
//! [`super::output::analyze`]'s.

use copper::shown::Shown;

use copper::diag::Severity;
use copper_search::driver::analyze::{analyze_kernel, Request};

use super::args::{AnalyzeArgs, Format};
use super::output::{self, analyze as formats};
use super::params::parse_with_params;
use super::settings::Settings;

/// Runs `copper analyze`.
pub fn run(a: &AnalyzeArgs, s: &Settings) -> u8 {
    let (parsed, params) = match parse_with_params(&a.file, s) {
        Ok(x) => x,
        Err(status) => return status,
    };
    let mut status = 0;
    for d in parsed.all_diagnostics() {
        output::diagnostic(&d);
        status = 1;
    }
    if a.launch.kernel.is_none() {
        for t in parsed.uninstantiated() {
            let at = parsed
                .item(&t.name)
                .map_or(t.meta.span.start, |i| i.span.start);
            let d = parsed.source.diagnostic(
                Severity::Warning,
                "template",
                at,
                format!(
                    "template `{}` not analyzed: no instantiation seen; use `--instantiate '{}'`",
                    t.name,
                    example_instance(t)
                ),
            );
            output::diagnostic(&d);
            status = 1;
        }
    }
    let names: Vec<String> = match &a.launch.kernel {
        Some(k) => {
            let k = &parsed.kernel_name(k);
            if parsed.kernels().all(|f| &f.name != k) {
                eprintln!(
                    "copper: error: {}: no kernel named `{k}` (kernels: {})",
                    a.file.shown(),
                    parsed
                        .kernels()
                        .map(|f| f.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                return 2;
            }
            vec![k.clone()]
        }
        None => parsed.kernels().map(|k| k.name.clone()).collect(),
    };
    let request = Request {
        metrics: &s.metrics,
        analysis: s.analysis,
        block: s.block,
        grid: s.grid,
        issue: a.issue,
        check: a.check.then_some(super::args::DEFAULT_LAUNCH_STEPS),
    };
    let mut reports = Vec::new();
    for name in names {
        let spec = params.as_ref().and_then(|p| p.kernel.get(&name));
        let r = match analyze_kernel(&parsed, &name, spec, &request) {
            Ok(r) => r,
            Err(d) => {
                output::diagnostic(&d);
                status = 1;
                continue;
            }
        };
        for d in &r.notes {
            output::diagnostic(d);
        }
        match &r.check {
            Some(Err(_)) => status = 1,
            Some(Ok(c)) => {
                for v in &c.violations {
                    eprintln!("copper: {}", v.message(&name));
                    status = 1;
                }
            }
            None => {}
        }
        reports.push(r);
    }
    match a.format {
        Format::Text => {
            for r in &reports {
                formats::text(&parsed, r, a.issue);
            }
        }
        Format::Json => formats::json(&a.file, &parsed, &reports),
    }
    status
}

/// An instantiation of template kernel `t` to suggest: each parameter's
/// default, else `float` for a type and `256` for a value.
fn example_instance(t: &copper::cuda::ast::Function) -> String {
    let args: Vec<String> = (t.template.iter().flat_map(|t| &t.params))
        .map(|p| {
            p.default.clone().unwrap_or_else(|| {
                if p.value_type.is_none() {
                    "float"
                } else {
                    "256"
                }
                .to_string()
            })
        })
        .collect();
    copper::cuda::template::instance_name(&t.name, &args)
}
