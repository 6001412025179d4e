//! `copper analyze`: sound per-warp cost bounds.

use std::path::{Path, PathBuf};
use std::time::Instant;

use copper::bound::{prepare, Config, MetricBound, Outcome};
use copper::cuda::parse::{parse_path, ParsedFile};
use copper::ir::lower::lower_kernel;
use copper::sim::params::ParamFile;
use serde_json::json;

use super::simulate::{read_hardware, resolve_metrics};
use super::Format;

/// Options of `copper analyze`.
pub struct AnalyzeArgs {
    /// The `.cu` file.
    pub file: PathBuf,
    /// Metrics (default: all built-in).
    pub metrics: Vec<String>,
    /// User metrics file.
    pub metrics_file: Option<PathBuf>,
    /// Base function degree.
    pub degree: u32,
    /// Block shape override.
    pub block: Option<[u64; 3]>,
    /// Only this kernel.
    pub kernel: Option<String>,
    /// Output format.
    pub format: Format,
    /// Hardware model file.
    pub hardware: Option<PathBuf>,
    /// Instructions an SM issues per cycle (for `W/P + S`).
    pub issue: u64,
}

/// Parses `X[,Y[,Z]]`.
pub fn parse_dims(s: &str) -> Result<[u64; 3], String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("expected 1 to 3 comma-separated sizes, got `{s}`"));
    }
    let mut d = [1u64; 3];
    for (i, p) in parts.iter().enumerate() {
        d[i] = p
            .parse()
            .map_err(|_| format!("`{p}` is not a positive integer"))?;
        if d[i] == 0 {
            return Err("sizes must be positive".into());
        }
    }
    if d.iter().product::<u64>() > 1024 {
        return Err(format!(
            "a block of {} threads is more than CUDA allows (1024)",
            d.iter().product::<u64>()
        ));
    }
    Ok(d)
}

/// Where a kernel's launch shape comes from.
struct Shape {
    block: Option<[u64; 3]>,
    grid: Option<[u64; 3]>,
    source: String,
}

fn launch_shape(
    parsed: &ParsedFile,
    params: Option<&ParamFile>,
    name: &str,
    block_override: Option<[u64; 3]>,
) -> Shape {
    if let Some(b) = block_override {
        return Shape {
            block: Some(b),
            grid: None,
            source: "--block".into(),
        };
    }
    let sites: Vec<_> = parsed
        .launches
        .iter()
        .filter(|l| l.kernel == name && l.block.is_some())
        .collect();
    if let Some(first) = sites.first() {
        if sites.iter().all(|l| l.block == first.block) {
            let (line, _) = parsed.source.line_col(first.span.start);
            let grid = if sites.iter().all(|l| l.grid == first.grid) {
                first.grid
            } else {
                None
            };
            return Shape {
                block: first.block,
                grid,
                source: format!("launch at line {line}"),
            };
        }
    }
    if let Some(spec) = params.and_then(|p| p.kernel.get(name)) {
        if let Ok(s) = spec.shape() {
            return Shape {
                block: Some(s.block),
                grid: Some(s.grid),
                source: "parameter file".into(),
            };
        }
    }
    Shape {
        block: None,
        grid: None,
        source: "unknown: 1-D blocks assumed".into(),
    }
}

fn dims(d: [u64; 3]) -> String {
    format!("{}×{}×{}", d[0], d[1], d[2])
}

fn outcome_text(parsed: &ParsedFile, o: &Outcome) -> (String, String) {
    match o {
        Outcome::Bound(b) => (b.to_poly().to_string(), b.assumptions().join(", ")),
        Outcome::NoBound(reason, span) => {
            let at = span.map(|s| {
                let (l, c) = parsed.source.line_col(s.start);
                format!(" ({}:{l}:{c})", parsed.source.path.display())
            });
            (
                format!("no bound: {reason}{}", at.unwrap_or_default()),
                String::new(),
            )
        }
    }
}

/// Runs `copper analyze`.
pub fn run(a: &AnalyzeArgs) -> u8 {
    let metrics = match resolve_metrics(&a.metrics, a.metrics_file.as_deref()) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("copper: error: {e}");
            return 2;
        }
    };
    if !(1..=2).contains(&a.degree) {
        eprintln!("copper: error: --degree must be 1 or 2");
        return 2;
    }
    let mut hw = copper::cost::Hardware::default();
    if let Some(h) = &a.hardware {
        match read_hardware(h) {
            Ok(x) => hw = x,
            Err(e) => {
                eprintln!("copper: error: {e}");
                return 2;
            }
        }
    }
    let parsed = match parse_path(&a.file) {
        Ok(p) => p,
        Err(d) => {
            eprintln!("{}", d.render());
            return 2;
        }
    };
    let params = read_params(&a.file.with_extension("toml"));
    let mut status = 0;
    let mut reports = Vec::new();
    for d in parsed.all_diagnostics() {
        eprintln!("{}", d.render());
        status = 1;
    }
    let names: Vec<String> = match &a.kernel {
        Some(k) => vec![k.clone()],
        None => parsed.kernels().map(|k| k.name.clone()).collect(),
    };
    for name in names {
        let start = Instant::now();
        let kernel = match lower_kernel(&parsed, &name) {
            Ok(k) => k,
            Err(d) => {
                eprintln!("{}", d.render());
                status = 1;
                continue;
            }
        };
        let shape = launch_shape(&parsed, params.as_ref(), &name, a.block);
        let prep = prepare(
            &kernel,
            Config {
                hw,
                block: shape.block,
                grid: None,
                degree: a.degree,
                ..Config::default()
            },
        );
        let bounds: Vec<MetricBound> = metrics.iter().map(|m| prep.bound(m)).collect();
        let secs = start.elapsed().as_secs_f64();
        match a.format {
            Format::Text => print_text(&parsed, &name, &shape, &bounds, secs, a.issue),
            Format::Json => reports.push(report_json(&parsed, &name, &shape, &bounds, secs)),
        }
    }
    if a.format == Format::Json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "file": a.file, "kernels": reports }))
                .unwrap_or_default()
        );
    }
    status
}

fn read_params(path: &Path) -> Option<ParamFile> {
    let text = std::fs::read_to_string(path).ok()?;
    ParamFile::from_toml(&text).ok()
}

fn warps_per_block(shape: &Shape, warp: u64) -> Option<u64> {
    shape
        .block
        .map(|b| b.iter().product::<u64>().div_ceil(warp))
}

fn print_text(
    parsed: &ParsedFile,
    name: &str,
    shape: &Shape,
    bounds: &[MetricBound],
    secs: f64,
    issue: u64,
) {
    let block = shape.block.map(dims).unwrap_or_else(|| "symbolic".into());
    println!(
        "kernel {name}: block {block} ({}), analyzed in {secs:.3} s",
        shape.source
    );
    for b in bounds {
        let (work, assume) = outcome_text(parsed, &b.work);
        println!("  {:<10} per warp ≤ {work}", b.metric);
        if !assume.is_empty() {
            println!("  {:<10}   (as a polynomial where {assume})", "");
        }
        if let (Outcome::Bound(w), Outcome::Bound(s)) = (&b.work, &b.span) {
            if let (Some(wpb), Some(grid)) = (warps_per_block(shape, 32), shape.grid) {
                let warps = wpb * grid.iter().product::<u64>();
                println!(
                    "  {:<10}   launch ({} warps) ≤ {warps}·({})",
                    "",
                    warps,
                    w.to_poly()
                );
            }
            if let Some(wpb) = warps_per_block(shape, 32) {
                println!(
                    "  {:<10}   block time ≤ W/P + S = {wpb}·({})/{issue} + ({})",
                    "",
                    w.to_poly(),
                    s.to_poly()
                );
            }
        }
        println!(
            "  {:<10}   LP: {} variables, {} constraints, {:.3} s",
            "", b.lp_vars, b.lp_constraints, b.seconds
        );
    }
}

fn report_json(
    parsed: &ParsedFile,
    name: &str,
    shape: &Shape,
    bounds: &[MetricBound],
    secs: f64,
) -> serde_json::Value {
    let metrics: Vec<_> = bounds
        .iter()
        .map(|b| {
            let (work, assume) = outcome_text(parsed, &b.work);
            let (span, _) = outcome_text(parsed, &b.span);
            json!({
                "metric": b.metric,
                "per_warp": work,
                "bounded": matches!(b.work, Outcome::Bound(_)),
                "assumptions": assume,
                "span_per_warp": span,
                "lp_variables": b.lp_vars,
                "lp_constraints": b.lp_constraints,
                "seconds": b.seconds,
            })
        })
        .collect();
    json!({
        "kernel": name,
        "block": shape.block,
        "grid": shape.grid,
        "shape_from": shape.source,
        "seconds": secs,
        "metrics": metrics,
    })
}
