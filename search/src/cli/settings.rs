//! Settings resolved once from the command line, `copper.toml` and the
//! defaults, shared by the commands: the search's settings (`optimize`,
//! `bench`), the hardware model and the metrics.

use std::path::Path;
use std::time::Duration;

use copper::bound::Config;
use copper::cost::{metrics_from_toml, Hardware, Metric, BUILTIN_METRICS};
use copper::cuda::include::Preprocess;
use copper_search::config::{self, FileConfig};
use copper_search::nvcc::Nvcc;
use copper_search::pipeline::Settings;
use copper_search::rank::{Ranking, DEFAULT_EPSILON};

use super::args::SearchArgs;

/// A transform's name as the command line writes it:
/// `global to shared (tiled)` → `global-to-shared-tiled`.
fn cli_name(name: &str) -> String {
    name.to_lowercase()
        .replace(['(', ')'], "")
        .split([' ', '-', '_'])
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// The transform called `name` (either spelling).
fn transform_by_name(name: &str) -> Option<Box<dyn copper_transforms::Transform>> {
    copper_transforms::all()
        .into_iter()
        .find(|t| cli_name(t.name()) == cli_name(name))
}

/// Everything one run needs, resolved from the command line, the
/// configuration file and the defaults.
pub struct Resolved {
    /// The search settings.
    pub settings: Settings,
    /// The ranking metric's name.
    pub metric: String,
    /// Block and grid from the command line or configuration.
    pub block: Option<[u64; 3]>,
    /// Grid shape.
    pub grid: Option<[u64; 3]>,
    /// Exit 0 on improvements.
    pub exit_zero: bool,
    /// `-D`, `-U` and `-I`, over the configuration's.
    pub preprocess: Preprocess,
}

/// Resolves the search options against the configuration file and the
/// defaults; `block`, `grid` and `exit_zero` are the command line's.
pub fn resolve(
    a: &SearchArgs,
    block: Option<[u64; 3]>,
    grid: Option<[u64; 3]>,
    exit_zero: bool,
) -> Result<Resolved, String> {
    let cfg_path = match &a.config {
        Some(p) => Some(p.clone()),
        None => std::env::current_dir().ok().and_then(|d| config::find(&d)),
    };
    let cfg = match &cfg_path {
        Some(p) => config::load(p).map_err(|e| e.to_string())?,
        None => FileConfig::default(),
    };
    let mut hw = cfg.hardware.unwrap_or_default();
    if let Some(h) = &a.hardware {
        hw = read_hardware(h)?;
    }
    let metric = a
        .metric
        .clone()
        .or(cfg.metric.clone())
        .unwrap_or_else(|| "wsteps".into());
    let mut metrics: Vec<Metric> = resolve_metrics(&[], a.metrics_file.as_deref())?;
    metrics.extend(cfg.user_metrics.iter().cloned());
    let rank_metric = metrics
        .iter()
        .position(|m| m.name == metric)
        .ok_or_else(|| {
            format!(
                "unknown metric `{metric}` (known: {})",
                metrics
                    .iter()
                    .map(|m| m.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
    let epsilon = a.epsilon.or(cfg.epsilon).unwrap_or(DEFAULT_EPSILON);
    if !(0.0..1.0).contains(&epsilon) {
        return Err("--epsilon must be at least 0 and below 1".into());
    }
    let ranking = match a.at.clone().or(cfg.at.clone()) {
        Some(values) => Ranking::At { values, epsilon },
        None => Ranking::Heuristic { epsilon },
    };
    let names: Vec<String> = if !a.transforms.is_empty() {
        a.transforms.clone()
    } else if let Some(t) = &cfg.transforms {
        t.clone()
    } else {
        copper_transforms::all()
            .iter()
            .map(|t| t.name().to_string())
            .collect()
    };
    let mut transforms = Vec::new();
    for n in &names {
        let t = transform_by_name(n).ok_or_else(|| {
            format!(
                "unknown transform `{n}` (known: {})",
                known_transforms().join(", ")
            )
        })?;
        let skipped = a
            .skip_transforms
            .iter()
            .any(|s| transform_by_name(s).is_some_and(|x| x.name() == t.name()));
        if !skipped {
            transforms.push(t);
        }
    }
    for s in &a.skip_transforms {
        if transform_by_name(s).is_none() {
            return Err(format!(
                "unknown transform `{s}` (known: {})",
                known_transforms().join(", ")
            ));
        }
    }
    let block = match (block, &cfg.block) {
        (Some(b), _) => Some(b),
        (None, Some(b)) => Some(config::block(b).map_err(|e| e.to_string())?),
        (None, None) => None,
    };
    let grid = match (grid, &cfg.grid) {
        (Some(g), _) => Some(g),
        (None, Some(g)) => Some(config::grid(g).map_err(|e| e.to_string())?),
        (None, None) => None,
    };
    // A compiler path in `copper.toml` is relative to that file; a bare
    // name is looked up on PATH.
    let from_config = cfg.nvcc.as_ref().map(|p| match &cfg_path {
        Some(c) if p.is_relative() && p.components().count() > 1 => {
            c.parent().unwrap_or(Path::new(".")).join(p)
        }
        _ => p.clone(),
    });
    let nvcc = a.nvcc.clone().or(from_config);
    let preprocess = a.pre.resolve(&cfg, cfg_path.as_deref())?;
    let mut nvcc_flags: Vec<String> = match &a.nvcc_flags {
        Some(f) => f.split_whitespace().map(str::to_string).collect(),
        None => cfg.nvcc_flags.clone().unwrap_or_default(),
    };
    nvcc_flags.extend(preprocess.compiler_flags());
    let compiler = match nvcc {
        Some(program) => Some(Nvcc::new(&program, nvcc_flags).map_err(|e| e.to_string())?),
        None if a.nvcc_flags.is_some() => return Err("--nvcc-flags needs --nvcc".into()),
        None => None,
    };
    let defaults = Config::default();
    let config = Config {
        hw,
        block: None,
        grid: None,
        degree: a.degree.or(cfg.degree).unwrap_or(defaults.degree),
        max_lp: a.max_lp.or(cfg.max_lp).unwrap_or(defaults.max_lp),
        budget: a
            .budget
            .or(cfg.budget.map(Duration::from_secs_f64))
            .unwrap_or(defaults.budget),
    };
    Ok(Resolved {
        settings: Settings {
            config,
            metrics,
            rank_metric,
            ranking,
            transforms,
            compiler,
            allow_reassociation: a.allow_reassociation || cfg.allow_reassociation.unwrap_or(false),
        },
        metric,
        block,
        grid,
        exit_zero: exit_zero || cfg.exit_zero.unwrap_or(false),
        preprocess,
    })
}

fn known_transforms() -> Vec<String> {
    copper_transforms::all()
        .iter()
        .map(|t| cli_name(t.name()))
        .collect()
}

/// Reads a hardware model from TOML.
pub fn read_hardware(path: &Path) -> Result<Hardware, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read hardware file: {e}", path.display()))?;
    let hw: Hardware = toml::from_str(&text)
        .map_err(|e| format!("{}: invalid hardware file: {e}", path.display()))?;
    hw.validate()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(hw)
}

/// Resolves metric names (built-in or from the user file).
pub fn resolve_metrics(names: &[String], file: Option<&Path>) -> Result<Vec<Metric>, String> {
    let user = match file {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| format!("{}: cannot read metrics file: {e}", p.display()))?;
            metrics_from_toml(&text).map_err(|e| format!("{}: {e}", p.display()))?
        }
        None => Vec::new(),
    };
    if names.is_empty() {
        let mut all: Vec<Metric> = BUILTIN_METRICS
            .iter()
            .filter_map(|m| Metric::builtin(m))
            .collect();
        all.extend(user);
        return Ok(all);
    }
    names
        .iter()
        .map(|n| {
            Metric::builtin(n).or_else(|| user.iter().find(|m| &m.name == n).cloned()).ok_or_else(|| {
                format!("unknown metric `{n}` (built-in: {}; user metrics come from --metrics-file)", BUILTIN_METRICS.join(", "))
            })
        })
        .collect()
}
