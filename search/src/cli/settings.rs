//! The one value every command runs with: its options ([`super::args`]),
//! `copper.toml` and the defaults merged once into a [`Settings`], with
//! the parameter files ([`Params`]: `--params`, read and checked once, or
//! each file's own `FILE.toml`). A command-line option beats the same key
//! in `copper.toml`, which beats the default; `analyze`, `simulate`,
//! `parse`, `fmt` and `params` read only `copper.toml`'s preprocessing
//! (`defines`, `include_dirs`, `instantiate`).

use copper::launch::Dims;
use copper::shown::{escaped_controls, Shown};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use copper::bound::Config;
use copper::cost::{metrics_from_toml, Hardware, Metric, BUILTIN_METRICS};
use copper::cuda::include::Preprocess;
use copper::input::{read_input_text, InputFileError};
use copper::lint::Code;
use copper_search::config::{self, ConfigError, FileConfig};
use copper_search::launch::Params;
use copper_search::nvcc::{Nvcc, NvccError};
use copper_search::pipeline;
use copper_search::rank::{Ranking, DEFAULT_EPSILON};

use super::args::{Command, PreprocessArgs, SearchArgs};
use super::output;

/// What one command runs with, resolved once from its options,
/// `copper.toml`, the parameter files and the defaults.
pub struct Settings {
    /// `-D`, `-U`, `-I` and `--instantiate`, over `copper.toml`'s.
    pub preprocess: Preprocess,
    /// Where each file's parameter file comes from.
    pub params: Params,
    /// The block given (`--block`; for `optimize`, `bench` and `lint`
    /// also `copper.toml`'s `block`).
    pub block: Option<Dims>,
    /// The grid given, as the block.
    pub grid: Option<Dims>,
    /// The analysis: hardware model, degree, LP size and time budget; no
    /// launch shape (each kernel gets its own).
    pub analysis: Config,
    /// The metrics: those asked for (`analyze`, `simulate`), or every
    /// metric the search knows (`optimize`, `bench`).
    pub metrics: Vec<Metric>,
    /// The lint codes not reported (`--allow`, `[lint] disable`).
    pub allowed: BTreeSet<Code>,
    /// The search (`optimize`, `bench`).
    pub search: Option<Search>,
    /// The `copper.toml` read (given with `--config`, or found), if any.
    pub config: Option<PathBuf>,
}

/// The search's settings (`optimize`, `bench`).
pub struct Search {
    /// What the search does (its `config` and `metrics` are
    /// [`Settings::analysis`] and [`Settings::metrics`]).
    pub pipeline: pipeline::Settings,
    /// The ranking metric's name.
    pub metric: String,
    /// Exit 0 on improvements.
    pub exit_zero: bool,
}

/// Why the settings cannot be resolved; each message is the one printed
/// after `copper: error: `.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// `copper.toml` cannot be read or is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The `--hardware` file cannot be read.
    #[error("{}: cannot read hardware file: {source}", path.shown())]
    HardwareRead {
        /// The file.
        path: PathBuf,
        /// Why.
        source: InputFileError,
    },
    /// The `--hardware` file is not a hardware model in TOML.
    #[error("{}: invalid hardware file: {source}", path.shown())]
    HardwareSyntax {
        /// The file.
        path: PathBuf,
        /// The TOML error.
        source: toml::de::Error,
    },
    /// The `--hardware` file's values are out of range.
    #[error("{}: {reason}", path.shown())]
    HardwareValues {
        /// The file.
        path: PathBuf,
        /// Which value, and why.
        reason: copper::cost::hardware::HardwareError,
    },
    /// The `--metrics-file` cannot be read.
    #[error("{}: cannot read metrics file: {source}", path.shown())]
    MetricsRead {
        /// The file.
        path: PathBuf,
        /// Why.
        source: InputFileError,
    },
    /// The `--metrics-file` does not define metrics.
    #[error("{}: {reason}", path.shown())]
    MetricsInvalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: copper::cost::MetricsError,
    },
    /// `--metric` names no metric (`analyze`, `simulate`).
    #[error("unknown metric `{0}` (built-in: {builtin}; user metrics come from --metrics-file)", builtin = BUILTIN_METRICS.join(", "))]
    UnknownMetric(String),
    /// The ranking metric is none of the metrics known.
    #[error("unknown metric `{name}` (known: {known})")]
    UnknownRankMetric {
        /// The name given.
        name: String,
        /// The metrics known, separated by commas.
        known: String,
    },
    /// `--epsilon` outside `[0, 1)`.
    #[error("--epsilon must be at least 0 and below 1")]
    Epsilon,
    /// `--transform`, `--skip-transform` or `transforms` names no transform.
    #[error("unknown transform `{name}` (known: {known})", known = known_transforms().join(", "))]
    UnknownTransform {
        /// The name given.
        name: String,
    },
    /// `--nvcc-flags` without a compiler.
    #[error("--nvcc-flags needs --nvcc")]
    FlagsWithoutNvcc,
    /// The compiler cannot be used.
    #[error(transparent)]
    Nvcc(#[from] NvccError),
    /// An `-I` directory that is not one.
    #[error(transparent)]
    Preprocess(#[from] copper::cuda::include::PreprocessError),
    /// `[lint] disable` names no lint code.
    #[error("copper.toml [lint] disable: {0}")]
    LintCode(copper::lint::UnknownCode),
}

impl Settings {
    /// The settings of `command`.
    pub fn resolve(command: &Command) -> Result<Settings, SettingsError> {
        match command {
            Command::Explain { .. } => Ok(Settings::reading(
                copper::cuda::include::Preprocess::default(),
                Params::Beside,
                None,
            )),
            Command::Parse { pre, .. } | Command::Fmt { pre, .. } | Command::Params { pre, .. } => {
                let (preprocess, config) = found_preprocess(pre)?;
                Ok(Settings::reading(preprocess, Params::Beside, config))
            }
            Command::Annotate {
                search: a, params, ..
            } => search(a, [None, None], true, Params::new(params.as_deref())),
            Command::Simulate(a) => {
                let metrics = resolve_metrics(&a.metrics, a.metrics_file.as_deref())?;
                let (preprocess, config) = found_preprocess(&a.pre)?;
                let hw = hardware(a.hardware.as_deref(), a.lines)?;
                Ok(Settings {
                    analysis: Config {
                        hw,
                        ..Config::default()
                    },
                    metrics,
                    ..Settings::reading(preprocess, Params::new(a.params.as_deref()), config)
                })
            }
            Command::Analyze(a) => {
                let metrics = resolve_metrics(&a.metrics, a.metrics_file.as_deref())?;
                let hw = hardware(a.hardware.as_deref(), a.lines)?;
                let (preprocess, config) = found_preprocess(&a.pre)?;
                Ok(Settings {
                    block: a.launch.block,
                    grid: a.launch.grid,
                    analysis: Config {
                        hw,
                        block: None,
                        grid: None,
                        degree: a.degree,
                        max_lp: a.max_lp,
                        max_steps: a.max_absint_steps,
                        budget: a.budget,
                    },
                    metrics,
                    ..Settings::reading(preprocess, Params::new(a.launch.params.as_deref()), config)
                })
            }
            Command::Optimize(a) => search(
                &a.search,
                [a.launch.block, a.launch.grid],
                a.exit_zero,
                Params::new(a.launch.params.as_deref()),
            ),
            Command::Bench(a) => search(
                &a.search,
                [None, None],
                true,
                Params::new(a.params.as_deref()),
            ),
            Command::Lint(a) => {
                let (cfg, cfg_path) = load_config(a.config.as_deref())?;
                let mut allowed: BTreeSet<Code> = a.allow.iter().copied().collect();
                for c in cfg.lint.iter().flat_map(|l| &l.disable) {
                    allowed.insert(Code::parse(c).map_err(SettingsError::LintCode)?);
                }
                let preprocess = merge_preprocess(&a.pre, &cfg, cfg_path.as_deref())?;
                let [block, grid] = launch([a.launch.block, a.launch.grid], &cfg)?;
                let defaults = Config::default();
                Ok(Settings {
                    block,
                    grid,
                    analysis: Config {
                        hw: cfg.hardware.unwrap_or_default(),
                        max_steps: a.max_absint_steps.unwrap_or(defaults.max_steps),
                        budget: a
                            .budget
                            .or(cfg.budget.map(Duration::from_secs_f64))
                            .unwrap_or(defaults.budget),
                        ..defaults
                    },
                    allowed,
                    ..Settings::reading(
                        preprocess,
                        Params::new(a.launch.params.as_deref()),
                        cfg_path,
                    )
                })
            }
        }
    }

    /// The files a run on `sources` reads besides its headers: the
    /// sources, their parameter files and the `copper.toml`; no output may
    /// replace one of them.
    pub fn inputs(&self, sources: &[PathBuf]) -> Vec<PathBuf> {
        let mut all = sources.to_vec();
        all.extend(sources.iter().map(|f| self.params.path(f)));
        all.extend(self.config.iter().cloned());
        all
    }

    /// Settings that only read files: the defaults with `preprocess`,
    /// `params` and the `copper.toml` read.
    fn reading(preprocess: Preprocess, params: Params, config: Option<PathBuf>) -> Settings {
        Settings {
            preprocess,
            params,
            block: None,
            grid: None,
            analysis: Config::default(),
            metrics: Vec::new(),
            allowed: BTreeSet::new(),
            search: None,
            config,
        }
    }
}

/// `copper.toml` given with `--config` (`explicit`), else found from the
/// current directory upward, and where it was; the defaults without one.
fn load_config(explicit: Option<&Path>) -> Result<(FileConfig, Option<PathBuf>), ConfigError> {
    let path = match explicit {
        Some(p) => Some(p.to_path_buf()),
        None => std::env::current_dir().ok().and_then(|d| config::find(&d)),
    };
    let cfg = match &path {
        Some(p) => config::load(p)?,
        None => FileConfig::default(),
    };
    Ok((cfg, path))
}

/// The preprocessing options over the `copper.toml` found from the
/// current directory upward, and where it was.
fn found_preprocess(pre: &PreprocessArgs) -> Result<(Preprocess, Option<PathBuf>), SettingsError> {
    let (cfg, path) = load_config(None)?;
    Ok((merge_preprocess(pre, &cfg, path.as_deref())?, path))
}

/// The preprocessing options over a configuration read from `cfg_path`:
/// `-D` and `-U` after its `defines`, `-I` before its `include_dirs`,
/// `--instantiate` after its `instantiate`.
fn merge_preprocess(
    pre: &PreprocessArgs,
    cfg: &FileConfig,
    cfg_path: Option<&Path>,
) -> Result<Preprocess, SettingsError> {
    let from_cfg = config::preprocess(cfg, cfg_path)?;
    let mut out = Preprocess {
        defines: from_cfg.defines,
        include_dirs: pre.include_dirs.clone(),
        instantiate: from_cfg.instantiate,
        refuse_outside: pre.no_outside_includes,
    };
    out.instantiate.extend(pre.instantiate.iter().cloned());
    out.defines.extend(pre.defines.iter().cloned());
    out.defines.extend(pre.undefines.iter().cloned());
    out.include_dirs.extend(from_cfg.include_dirs);
    out.check().map_err(SettingsError::Preprocess)?;
    Ok(out)
}

/// Block and grid: the command line's, else the configuration's.
fn launch(
    [block, grid]: [Option<Dims>; 2],
    cfg: &FileConfig,
) -> Result<[Option<Dims>; 2], ConfigError> {
    let block = match (block, &cfg.block) {
        (Some(b), _) => Some(b),
        (None, Some(b)) => Some(config::block(b)?),
        (None, None) => None,
    };
    let grid = match (grid, &cfg.grid) {
        (Some(g), _) => Some(g),
        (None, Some(g)) => Some(config::grid(g)?),
        (None, None) => None,
    };
    Ok([block, grid])
}

/// The settings of a search (`optimize`, `bench`): the search options
/// over the configuration and the defaults; `shape` and `exit_zero` are
/// the command line's.
fn search(
    a: &SearchArgs,
    shape: [Option<Dims>; 2],
    exit_zero: bool,
    params: Params,
) -> Result<Settings, SettingsError> {
    let (cfg, cfg_path) = load_config(a.config.as_deref())?;
    let hw = match &a.hardware {
        Some(h) => read_hardware(h)?,
        None => cfg.hardware.unwrap_or_default(),
    };
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
        .ok_or_else(|| SettingsError::UnknownRankMetric {
            name: metric.clone(),
            known: metrics
                .iter()
                .map(|m| m.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    let epsilon = a.epsilon.or(cfg.epsilon).unwrap_or(DEFAULT_EPSILON);
    if !(0.0..1.0).contains(&epsilon) {
        return Err(SettingsError::Epsilon);
    }
    // The command line wins over copper.toml, `--at` over `asymptotic`.
    let asymptotic = a.asymptotic || cfg.asymptotic == Some(true);
    let ranking = match (a.at.clone(), asymptotic, cfg.at.clone()) {
        (Some(values), ..) | (None, false, Some(values)) => Ranking::At { values, epsilon },
        (None, true, _) => Ranking::Asymptotic { epsilon },
        (None, false, None) => Ranking::InUse { epsilon },
    };
    let transforms = transforms(a, &cfg)?;
    let [block, grid] = launch(shape, &cfg)?;
    let nvcc = compiler(a, &cfg, cfg_path.as_deref());
    let preprocess = merge_preprocess(&a.pre, &cfg, cfg_path.as_deref())?;
    let mut nvcc_flags = compiler_flags(a, &cfg, cfg_path.as_deref());
    nvcc_flags.extend(preprocess.compiler_flags());
    let compiler = match nvcc {
        Some(program) => Some(Nvcc::new(&program, nvcc_flags)?),
        None if a.nvcc_flags.is_some() => return Err(SettingsError::FlagsWithoutNvcc),
        None => None,
    };
    let defaults = Config::default();
    let analysis = Config {
        hw,
        block: None,
        grid: None,
        degree: a.degree.or(cfg.degree).unwrap_or(defaults.degree),
        max_lp: a.max_lp.or(cfg.max_lp).unwrap_or(defaults.max_lp),
        max_steps: a.max_absint_steps.unwrap_or(defaults.max_steps),
        budget: a
            .budget
            .or(cfg.budget.map(Duration::from_secs_f64))
            .unwrap_or(defaults.budget),
    };
    let pipeline = pipeline::Settings {
        config: analysis,
        metrics: metrics.clone(),
        rank_metric,
        ranking,
        transforms,
        compiler,
        allow_reassociation: a.allow_reassociation || cfg.allow_reassociation.unwrap_or(false),
        max_check_steps: a
            .max_check_steps
            .unwrap_or(copper_transforms::check::SEARCH_CHECK_STEPS),
    };
    Ok(Settings {
        preprocess,
        params,
        block,
        grid,
        analysis,
        metrics,
        allowed: BTreeSet::new(),
        search: Some(Search {
            pipeline,
            metric,
            exit_zero: exit_zero || cfg.exit_zero.unwrap_or(false),
        }),
        config: cfg_path,
    })
}

/// The compiler that checks candidates: `--nvcc PATH`; a bare `--nvcc`
/// takes the configuration's `nvcc`, else `nvcc` on PATH. Without
/// `--nvcc`, the configuration's `nvcc` is run only when the
/// configuration was given with `--config`: a `copper.toml` found by
/// searching may be anyone's (a checkout under review), so, as with git's
/// and cargo's, it cannot make copper run a program; a note says what it
/// asked for.
fn compiler(a: &SearchArgs, cfg: &FileConfig, cfg_path: Option<&Path>) -> Option<PathBuf> {
    // A compiler path in `copper.toml` is relative to that file; a bare
    // name is looked up on PATH.
    let from_config = cfg.nvcc.as_ref().map(|p| match cfg_path {
        Some(c) if p.is_relative() && p.components().count() > 1 => {
            c.parent().unwrap_or(Path::new(".")).join(p)
        }
        _ => p.clone(),
    });
    match &a.nvcc {
        Some(Some(given)) => Some(given.clone()),
        Some(None) => Some(from_config.unwrap_or_else(|| PathBuf::from("nvcc"))),
        None if a.config.is_some() => from_config,
        None => {
            if let (Some(program), Some(path)) = (&cfg.nvcc, cfg_path) {
                output::note(format!(
                    "{} asks to run `{}` as nvcc; not run: a copper.toml found by searching cannot name a program (give --nvcc to run it, or --config)",
                    path.shown(),
                    program.shown()
                ));
            }
            None
        }
    }
}

/// The compiler's flags: `--nvcc-flags`, else the configuration's
/// `nvcc_flags` when it was given with `--config`. Those of a
/// `copper.toml` found by searching are not passed even when `--nvcc` is
/// given (`-ccbin PROGRAM` makes nvcc run a program); a note says so.
fn compiler_flags(a: &SearchArgs, cfg: &FileConfig, cfg_path: Option<&Path>) -> Vec<String> {
    match (&a.nvcc_flags, &cfg.nvcc_flags, cfg_path) {
        (Some(f), _, _) => f.split_whitespace().map(str::to_string).collect(),
        (None, Some(flags), _) if a.config.is_some() => flags.clone(),
        (None, Some(flags), Some(path)) if a.nvcc.is_some() => {
            output::note(format!(
                "{} asks to pass `{}` to nvcc; not passed: the flags of a copper.toml found by searching could make nvcc run a program (give them with --nvcc-flags, or the file with --config)",
                path.shown(),
                escaped_controls(&flags.join(" "))
            ));
            Vec::new()
        }
        _ => Vec::new(),
    }
}

/// The transforms searched: `--transform`, else the configuration's
/// `transforms`, else all; less `--skip-transform`.
fn transforms(
    a: &SearchArgs,
    cfg: &FileConfig,
) -> Result<Vec<Box<dyn copper_transforms::Transform>>, SettingsError> {
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
    let unknown = |name: &String| SettingsError::UnknownTransform { name: name.clone() };
    let mut transforms = Vec::new();
    for n in &names {
        let t = transform_by_name(n).ok_or_else(|| unknown(n))?;
        let skipped = a
            .skip_transforms
            .iter()
            .any(|s| transform_by_name(s).is_some_and(|x| x.name() == t.name()));
        if !skipped {
            transforms.push(t);
        }
    }
    if let Some(s) = a
        .skip_transforms
        .iter()
        .find(|s| transform_by_name(s).is_none())
    {
        return Err(unknown(s));
    }
    Ok(transforms)
}

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

fn known_transforms() -> Vec<String> {
    copper_transforms::all()
        .iter()
        .map(|t| cli_name(t.name()))
        .collect()
}

/// The hardware model: `--hardware`'s file, else the default; with
/// `lines`, 128-byte transactions.
fn hardware(file: Option<&Path>, lines: bool) -> Result<Hardware, SettingsError> {
    let mut hw = match file {
        Some(h) => read_hardware(h)?,
        None => Hardware::default(),
    };
    if lines {
        hw.transaction_bytes = 128;
    }
    Ok(hw)
}

/// Reads a hardware model from TOML.
fn read_hardware(path: &Path) -> Result<Hardware, SettingsError> {
    let text = read_input_text(path).map_err(|source| SettingsError::HardwareRead {
        path: path.to_path_buf(),
        source,
    })?;
    let hw: Hardware = toml::from_str(&text).map_err(|source| SettingsError::HardwareSyntax {
        path: path.to_path_buf(),
        source,
    })?;
    hw.validate()
        .map_err(|reason| SettingsError::HardwareValues {
            path: path.to_path_buf(),
            reason,
        })?;
    Ok(hw)
}

/// Metrics by name (built-in or from the user file `file`); every
/// built-in and user metric when `names` is empty.
fn resolve_metrics(names: &[String], file: Option<&Path>) -> Result<Vec<Metric>, SettingsError> {
    let user = match file {
        Some(p) => {
            let text = read_input_text(p).map_err(|source| SettingsError::MetricsRead {
                path: p.to_path_buf(),
                source,
            })?;
            metrics_from_toml(&text).map_err(|reason| SettingsError::MetricsInvalid {
                path: p.to_path_buf(),
                reason,
            })?
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
            Metric::builtin(n)
                .or_else(|| user.iter().find(|m| &m.name == n).cloned())
                .ok_or_else(|| SettingsError::UnknownMetric(n.clone()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::super::args::Cli;
    use super::*;

    /// The settings of `copper ARGS…`.
    fn settings(args: &[&str]) -> Result<Settings, SettingsError> {
        let cli = Cli::try_parse_from(std::iter::once("copper").chain(args.iter().copied()))
            .expect("arguments clap accepts");
        Settings::resolve(&cli.command)
    }

    #[test]
    fn the_command_line_beats_copper_toml_which_beats_the_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("copper.toml");
        std::fs::write(&cfg, "block = [64]\nmetric = \"steps\"\nbudget = 3.0\n").unwrap();
        let cfg = cfg.to_str().unwrap();
        let s = settings(&["optimize", "k.cu", "--config", cfg]).unwrap();
        assert_eq!(s.block.map(Dims::to_array), Some([64, 1, 1]));
        assert_eq!(s.grid, None);
        assert_eq!(s.analysis.budget, Duration::from_secs(3));
        assert_eq!(s.search.as_ref().unwrap().metric, "steps");
        let s = settings(&[
            "optimize", "k.cu", "--config", cfg, "--block", "128", "--metric", "wsteps",
        ])
        .unwrap();
        assert_eq!(s.block.map(Dims::to_array), Some([128, 1, 1]));
        let search = s.search.as_ref().unwrap();
        assert_eq!(search.metric, "wsteps");
        assert_eq!(
            search.pipeline.metrics[search.pipeline.rank_metric].name,
            "wsteps"
        );
        // lint reads the same file; analyze does not take its block.
        let s = settings(&["lint", "k.cu", "--config", cfg]).unwrap();
        assert_eq!(s.block.map(Dims::to_array), Some([64, 1, 1]));
        assert_eq!(s.analysis.budget, Duration::from_secs(3));
        assert!(s.search.is_none());
    }

    #[test]
    fn bad_settings_are_typed_errors_with_the_old_messages() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("copper.toml");
        std::fs::write(&cfg, "[lint]\ndisable = [\"no-such-code\"]\n").unwrap();
        let cfg = cfg.to_str().unwrap();
        let e = settings(&["lint", "k.cu", "--config", cfg]).err().unwrap();
        assert!(matches!(e, SettingsError::LintCode(_)), "{e}");
        assert!(
            e.to_string().starts_with("copper.toml [lint] disable: "),
            "{e}"
        );
        let e = settings(&["optimize", "k.cu", "--metric", "nope"])
            .err()
            .unwrap();
        assert!(matches!(e, SettingsError::UnknownRankMetric { .. }), "{e}");
        assert!(
            e.to_string().starts_with("unknown metric `nope` (known: "),
            "{e}"
        );
        let e = settings(&["analyze", "k.cu", "--metric", "nope"])
            .err()
            .unwrap();
        assert!(matches!(e, SettingsError::UnknownMetric(_)), "{e}");
        let e = settings(&["optimize", "k.cu", "--skip-transform", "nope"])
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .starts_with("unknown transform `nope` (known: branch-distribution"),
            "{e}"
        );
        let e = settings(&["optimize", "k.cu", "--nvcc-flags", "-O3"])
            .err()
            .unwrap();
        assert!(matches!(e, SettingsError::FlagsWithoutNvcc), "{e}");
        let e = settings(&["simulate", "k.cu", "--hardware", "/nonexistent/hw.toml"])
            .err()
            .unwrap();
        assert!(e.to_string().contains("cannot read hardware file"), "{e}");
    }

    #[test]
    fn analyze_and_simulate_take_lines_and_their_own_limits() {
        let s = settings(&[
            "analyze", "k.cu", "--lines", "--degree", "3", "--block", "32",
        ])
        .unwrap();
        assert_eq!(s.analysis.hw.transaction_bytes, 128);
        assert_eq!(s.analysis.degree, 3);
        assert_eq!(s.block.map(Dims::to_array), Some([32, 1, 1]));
        assert_eq!(s.metrics.len(), BUILTIN_METRICS.len());
        let s = settings(&["simulate", "k.cu", "--metric", "steps"]).unwrap();
        assert_eq!(s.analysis.hw.transaction_bytes, 32);
        assert_eq!(s.metrics.len(), 1);
    }
}
