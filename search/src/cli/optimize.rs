//! `copper optimize`: the search on every kernel of the given files (or of
//! every `.cu`/`.cuh` below the given directories), kernels in parallel; the
//! winning kernels, a unified diff, the bounds before and after, and what
//! each applied transform bought.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use copper::bound::Config;
use copper::cost::Metric;
use copper::cuda::ast::{FnKind, Function};
use copper::cuda::diff::unified;
use copper::cuda::excerpt::Excerpts;
use copper::cuda::include::Preprocess;
use copper::cuda::parse::{parse_path_with, ParsedFile};
use copper::cuda::rewrite::transplant;
use copper::ir::lower::{lower_kernel, symbol_notes};
use copper::sim::params::ParamFile;
use copper_search::config::{self, FileConfig};
use copper_search::launch::{assume_block, launch_shape, read_params, Shape};
use copper_search::nvcc::Nvcc;
use copper_search::pipeline::{optimize_kernel, Cache, KernelResult, Settings};
use copper_search::rank::{Ranking, DEFAULT_EPSILON};
use rayon::prelude::*;

use super::analyze::parse_seconds;
use super::ci::SarifRoot;
use super::files::{match_line_endings, replace_if_unchanged, write_atomically, ReplaceError};
use super::launch_args::LaunchArgs;
use super::output;
use super::patch::PatchBase;
use super::report;
use super::simulate::{read_hardware, resolve_metrics};
use super::walk::collect_files;

/// Output formats of `copper optimize`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptFormat {
    /// Human-readable: per kernel, the bounds before and after, what was
    /// applied and why, then the diff; a summary table for several kernels.
    Text,
    /// One JSON document.
    Json,
    /// GitHub Actions workflow annotations.
    Github,
    /// SARIF 2.1.0 (code scanning), with the rewrite as a fix.
    Sarif,
}

/// Options of `copper optimize`.
#[derive(clap::Args, Debug)]
pub struct OptimizeArgs {
    /// `.cu` files, or directories to search for `.cu` files.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// How the search runs.
    #[command(flatten)]
    pub search: SearchArgs,
    /// Print only the patch (for `git apply` or `patch -p1`).
    #[arg(long, conflicts_with_all = ["write", "format"])]
    pub diff: bool,
    /// Update the files in place (atomically; untouched when nothing improves).
    #[arg(long)]
    pub write: bool,
    /// How kernels are launched.
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: OptFormat,
    /// Also write one JSON object per kernel to this file (JSON lines).
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Show every candidate considered, and what each transform left alone.
    #[arg(long)]
    pub explain: bool,
    /// Exit 0 even when improvements are found.
    #[arg(long)]
    pub exit_zero: bool,
    /// With --format sarif: the directory file URIs are relative to
    /// (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub sarif_root: Option<PathBuf>,
    /// Also search ignored files (`.gitignore`, `.ignore`) and hidden
    /// directories.
    #[arg(long)]
    pub no_ignore: bool,
    /// Worker threads (default: one per core).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub jobs: Option<u64>,
}

/// The options of the search (shared by `copper optimize` and `copper bench`).
#[derive(clap::Args, Debug)]
pub struct SearchArgs {
    /// The metric that ranks candidates (built-in or user-defined)
    /// [default: wsteps].
    #[arg(long)]
    pub metric: Option<String>,
    /// Rank by the bounds' values at these sizes (`h=4096,w=1024`) instead
    /// of degree and leading coefficients.
    #[arg(long, value_parser = parse_at)]
    pub at: Option<BTreeMap<String, f64>>,
    /// Relative tolerance of the ranking: smaller differences do not count
    /// [default: 0.02].
    #[arg(long)]
    pub epsilon: Option<f64>,
    /// Only these transforms (repeatable): branch-distribution,
    /// global-to-shared, global-to-shared-tiled, shared-memory-padding,
    /// load-hoisting, warp-shuffle-reduction, thread-remapping.
    #[arg(long = "transform")]
    pub transforms: Vec<String>,
    /// Leave out this transform (repeatable).
    #[arg(long = "skip-transform")]
    pub skip_transforms: Vec<String>,
    /// Highest degree of the bounds' base functions (1 to 4) [default: 2].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4))]
    pub degree: Option<u32>,
    /// Largest LP (variables plus constraints) per metric.
    #[arg(long)]
    pub max_lp: Option<usize>,
    /// Seconds one kernel's whole search may take [default: 20].
    #[arg(long, value_parser = parse_seconds)]
    pub budget: Option<Duration>,
    /// Hardware model (TOML).
    #[arg(long)]
    pub hardware: Option<PathBuf>,
    /// TOML file defining user metrics (`[metric.NAME]` tables).
    #[arg(long)]
    pub metrics_file: Option<PathBuf>,
    /// Settings file (default: `copper.toml` here or in a directory above).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Compile each improving candidate with this CUDA compiler (default
    /// `nvcc` on PATH) and drop those that fail; off by default.
    #[arg(long, num_args = 0..=1, default_missing_value = "nvcc", value_name = "PATH")]
    pub nvcc: Option<PathBuf>,
    /// Flags for `--nvcc`, separated by spaces (`"-arch=sm_80 -DN=1024"`).
    #[arg(long, value_name = "FLAGS", allow_hyphen_values = true)]
    pub nvcc_flags: Option<String>,
    /// Let rewrites sum floating-point values in another order (the
    /// per-warp-first shuffle reduction of `float`/`double` data): their
    /// results may differ in the last bits, and are checked within
    /// 2·(n−1)·ε·|sum| per element (n the threads per block).
    #[arg(long)]
    pub allow_reassociation: bool,
    /// Preprocessing.
    #[command(flatten)]
    pub pre: super::preprocess::PreprocessArgs,
}

/// Parses `name=value,name=value`.
fn parse_at(s: &str) -> Result<BTreeMap<String, f64>, String> {
    let mut out = BTreeMap::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("`{part}` is not NAME=VALUE"))?;
        let x: f64 = v
            .trim()
            .parse()
            .map_err(|_| format!("`{v}` is not a number"))?;
        if !x.is_finite() {
            return Err(format!("`{v}` is not a finite number"));
        }
        out.insert(k.trim().to_string(), x);
    }
    if out.is_empty() {
        return Err("give at least one NAME=VALUE".into());
    }
    Ok(out)
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
        Some(p) => config::load(p)?,
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
        (None, Some(b)) => Some(config::shape(b, "block")?),
        (None, None) => None,
    };
    let grid = match (grid, &cfg.grid) {
        (Some(g), _) => Some(g),
        (None, Some(g)) => Some(config::shape(g, "grid")?),
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
        Some(program) => Some(Nvcc::new(&program, nvcc_flags)?),
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

/// One file of the run.
pub struct FileRun {
    /// Its path as given.
    pub path: PathBuf,
    /// The file, parsed; or why it could not be read.
    pub parsed: Result<ParsedFile, String>,
    /// Its kernels' results, in file order.
    pub kernels: Vec<KernelRun>,
    /// Diagnostics of functions copper could not read.
    pub diagnostics: Vec<String>,
    /// The whole file with the improved kernels, when any improved.
    pub rewritten: Option<String>,
    /// `--write` could not replace the file (an I/O error, reported).
    pub write_failed: bool,
}

/// One kernel of the run.
pub struct KernelRun {
    /// The kernel.
    pub name: String,
    /// Where it starts (line, column).
    pub at: (usize, usize),
    /// Its launch shape.
    pub shape: Shape,
    /// The search's outcome, or why there was none.
    pub result: Result<KernelResult, String>,
    /// False when the kernel itself could not be read (its diagnostic is
    /// among the file's).
    pub readable: bool,
}

/// Runs `copper optimize`.
pub fn run(a: &OptimizeArgs) -> u8 {
    let fail = |e: String| {
        eprintln!("copper: error: {e}");
        2
    };
    let r = match resolve(&a.search, a.launch.block, a.launch.grid, a.exit_zero) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let files = match collect_files(&a.paths, a.no_ignore) {
        Ok(found) => {
            for n in &found.notes {
                output::note(n);
            }
            found.files
        }
        Err(e) => return fail(e),
    };
    if let Some(j) = a.jobs {
        // Only fails when the global pool exists already; then it is used.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(j as usize)
            .build_global();
    }
    let start = Instant::now();
    let runs = match optimize_files(&files, a, &r) {
        Ok(runs) => runs,
        Err(e) => return fail(e),
    };
    let elapsed = start.elapsed().as_secs_f64();
    if let Some(k) = &a.launch.kernel {
        if runs.iter().all(|f| f.kernels.is_empty()) {
            return fail(format!("no kernel named `{k}` in the given files"));
        }
    }
    let mut failed = runs.iter().any(|f| f.write_failed);
    let unreadable = runs
        .iter()
        .any(|f| f.parsed.is_err() || f.kernels.iter().any(|k| k.result.is_err()));
    let improved = runs.iter().any(|f| f.rewritten.is_some());
    if let Some(path) = &a.report {
        let lines: String = runs
            .iter()
            .flat_map(|f| report::kernel_objects(f, &r))
            .map(|o| format!("{o}\n"))
            .collect();
        if let Err(e) = write_atomically(path, &lines) {
            eprintln!("copper: error: {}: {e}", path.display());
            failed = true;
        }
    }
    if a.format != OptFormat::Github {
        report::errors(&runs);
    }
    // A bound below a simulated cost: exit status 2, like any internal error.
    failed |= report::internal_errors(&runs);
    if a.diff {
        let base = patch_base(&runs);
        for f in &runs {
            print!("{}", file_diff(f, &base));
        }
        if let Some(note) = &base.note {
            // Even under `--quiet`: the patch cannot be applied without it.
            eprintln!("copper: note: {note}");
        }
    } else {
        match a.format {
            OptFormat::Text => report::text(&runs, &r, a.explain, elapsed),
            OptFormat::Json => report::json(&runs, &r, elapsed),
            OptFormat::Github => report::github(&runs, &r),
            OptFormat::Sarif => match SarifRoot::new(a.sarif_root.as_deref()) {
                Ok(root) => report::sarif(&runs, &r, &root),
                Err(e) => {
                    eprintln!("copper: error: {e}");
                    failed = true;
                }
            },
        }
    }
    output::batch_status(failed, improved && !r.exit_zero, unreadable)
}

/// The unified diff of a file's rewrite (empty when nothing improved),
/// the file named relative to `base`.
pub fn file_diff(f: &FileRun, base: &PatchBase) -> String {
    match (&f.parsed, &f.rewritten) {
        (Ok(p), Some(new)) => unified(&base.name(&p.source.path), &p.source.text, new),
        _ => String::new(),
    }
}

/// Where the patch of a batch applies from: what the rewritten files have
/// in common.
pub fn patch_base(runs: &[FileRun]) -> PatchBase {
    PatchBase::of(
        runs.iter()
            .filter(|f| f.rewritten.is_some())
            .map(|f| f.path.as_path()),
    )
}

/// The diagnostics of a parsed file, then the notes on its kernels'
/// undefined identifiers (symbols), rendered.
fn notes(p: &ParsedFile) -> Vec<String> {
    let mut all = p.all_diagnostics();
    for k in p.kernels() {
        if let Ok(kernel) = lower_kernel(p, &k.name) {
            all.extend(symbol_notes(p, &kernel));
        }
    }
    all.iter().map(|d| d.render()).collect()
}

/// Parses every file and searches every kernel, kernels in parallel; a
/// progress line on a terminal. Results in file and kernel order. Each
/// file is finished (and, with `--write`, written) as soon as its last
/// kernel is done, so a long batch loses nothing already found.
fn optimize_files(
    files: &[PathBuf],
    a: &OptimizeArgs,
    r: &Resolved,
) -> Result<Vec<FileRun>, String> {
    let mut runs: Vec<(FileRun, Option<ParamFile>)> = files
        .par_iter()
        .map(|path| {
            let read = parse_path_with(path, &r.preprocess)
                .map_err(|d| d.render())
                .and_then(|parsed| {
                    let params = read_params(path, a.launch.params.as_deref())?;
                    Ok((parsed, params))
                });
            let (parsed, params) = match read {
                Ok((p, params)) => (Ok(p), params),
                Err(e) => (Err(e), None),
            };
            let diagnostics = parsed.as_ref().map(notes).unwrap_or_default();
            let run = FileRun {
                path: path.clone(),
                parsed,
                kernels: Vec::new(),
                diagnostics,
                rewritten: None,
                write_failed: false,
            };
            (run, params)
        })
        .collect();
    let mut jobs = Vec::new();
    for (i, (run, params)) in runs.iter().enumerate() {
        let Ok(parsed) = &run.parsed else {
            continue;
        };
        for f in parsed.kernels() {
            if a.launch
                .kernel
                .as_ref()
                .is_some_and(|k| parsed.kernel_name(k) != f.name)
            {
                continue;
            }
            let spec = params.as_ref().and_then(|p| p.kernel.get(&f.name)).cloned();
            let shape = launch_shape(r.block, r.grid, parsed, spec.as_ref(), &f.name);
            jobs.push((i, f.name.clone(), spec, shape));
        }
    }
    if let Ranking::At { values, .. } = &r.settings.ranking {
        let searched = jobs
            .iter()
            .filter_map(|(i, name, ..)| runs[*i].0.parsed.as_ref().ok()?.function(name));
        check_at_names(values, searched)?;
    }
    let pending: Vec<Mutex<Vec<KernelRun>>> = runs.iter().map(|_| Mutex::default()).collect();
    let remaining: Vec<AtomicUsize> = runs.iter().map(|_| AtomicUsize::new(0)).collect();
    for (i, ..) in &jobs {
        remaining[*i].fetch_add(1, Ordering::Relaxed);
    }
    let finished: Vec<Mutex<Option<Finished>>> = runs.iter().map(|_| Mutex::default()).collect();
    let excerpts: Vec<Option<Excerpts>> = runs
        .iter()
        .map(|(run, _)| run.parsed.as_ref().ok().map(Excerpts::new))
        .collect();
    let cache = Cache::default();
    let done = AtomicUsize::new(0);
    let total = jobs.len();
    let terminal = std::io::stderr().is_terminal() && !output::quiet();
    jobs.into_par_iter().for_each(|(i, name, spec, shape)| {
        let run = &runs[i].0;
        let Ok(parsed) = &run.parsed else {
            return;
        };
        // The kernel's excerpt of its file: a search costs what the kernel
        // costs, however many kernels the file has.
        let excerpt = excerpts[i].as_ref().and_then(|e| e.kernel(&name));
        let file = excerpt.as_ref().unwrap_or(parsed);
        // Without a launch shape, the block inferred from the kernel, as
        // if given with --block (a kernel that does not lower fails in the
        // search with its diagnostic).
        let shape = match lower_kernel(file, &name) {
            Ok(k) => assume_block(file, &k, shape),
            Err(_) => shape,
        };
        let result = optimize_kernel(
            file,
            parsed,
            &name,
            spec.as_ref(),
            &shape,
            &r.settings,
            &cache,
        );
        if terminal {
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            eprint!("\r\x1b[2K[{n}/{total}] {}: {name}", run.path.display());
            if n == total {
                eprint!("\r\x1b[2K");
            }
        }
        let at = parsed
            .function(&name)
            .map(|f| parsed.source.line_col(f.meta.span.start))
            .unwrap_or((0, 0));
        let kernel = KernelRun {
            name,
            at,
            shape,
            result,
            readable: true,
        };
        lock(&pending[i]).push(kernel);
        if remaining[i].fetch_sub(1, Ordering::AcqRel) == 1 {
            let kernels = std::mem::take(&mut *lock(&pending[i]));
            *lock(&finished[i]) = Some(finish_file(run, kernels, a));
        }
    });
    for (i, (run, _)) in runs.iter_mut().enumerate() {
        let f = lock(&finished[i])
            .take()
            .unwrap_or_else(|| finish_file(run, Vec::new(), a));
        run.kernels = f.kernels;
        run.rewritten = f.rewritten;
        run.write_failed = f.write_failed;
    }
    Ok(runs.into_iter().map(|(run, _)| run).collect())
}

/// Refuses `--at` names that are no scalar parameter of any kernel
/// searched (nor a launch dimension such as `blockDim.x`): a misspelled
/// name would leave every bound unevaluated, and nothing would improve.
fn check_at_names<'a>(
    values: &BTreeMap<String, f64>,
    searched: impl Iterator<Item = &'a Function>,
) -> Result<(), String> {
    let mut known: Vec<String> = Vec::new();
    let mut any = false;
    for f in searched {
        any = true;
        known.extend(
            f.params
                .iter()
                .filter(|p| p.ty.pointers.is_empty() && p.dims.is_empty())
                .map(|p| p.name.clone()),
        );
    }
    known.sort();
    known.dedup();
    let launch_dimension = |n: &str| {
        ["blockDim.", "gridDim."].iter().any(|p| {
            n.strip_prefix(p)
                .is_some_and(|c| ["x", "y", "z"].contains(&c))
        })
    };
    let unknown: Vec<&str> = values
        .keys()
        .map(String::as_str)
        .filter(|n| !known.iter().any(|k| k == n) && !launch_dimension(n))
        .collect();
    if unknown.is_empty() || !any {
        return Ok(());
    }
    Err(format!(
        "--at: {} is not a scalar parameter of the kernels searched (parameters: {})",
        unknown
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", "),
        if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        }
    ))
}

/// A file whose kernels are all done.
struct Finished {
    kernels: Vec<KernelRun>,
    rewritten: Option<String>,
    write_failed: bool,
}

/// The mutex's value, also when another thread panicked holding it.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Completes a file whose kernels are all searched: adds the kernels that
/// could not be read, orders them, assembles the rewritten file and, with
/// `--write`, replaces the file when nobody changed it meanwhile.
fn finish_file(run: &FileRun, mut kernels: Vec<KernelRun>, a: &OptimizeArgs) -> Finished {
    let Ok(parsed) = &run.parsed else {
        return Finished {
            kernels,
            rewritten: None,
            write_failed: false,
        };
    };
    let only = a.launch.kernel.as_ref().map(|k| parsed.kernel_name(k));
    kernels.extend(unreadable_kernels(parsed, only.as_deref()));
    // Instantiations of one template start at the same place: file order
    // (the order of their launches) breaks the tie.
    let order = |name: &str| parsed.functions.iter().position(|f| f.item.name == name);
    kernels.sort_by_key(|k| (k.at, order(&k.name)));
    // Each improved kernel as the search left it: an edit of this file's
    // text, moved over from its version of the file.
    let best: Vec<(&ParsedFile, &str)> = kernels
        .iter()
        .filter_map(|k| k.result.as_ref().ok())
        .filter(|k| k.improved())
        .map(|k| (&k.best.file, k.name.as_str()))
        .collect();
    // Launches exchanged with their kernels (thread remapping).
    let host: Vec<_> = kernels
        .iter()
        .filter_map(|k| k.result.as_ref().ok())
        .filter(|k| k.improved())
        .filter_map(|k| k.best.lineage.relaunch.clone())
        .flatten()
        .collect();
    let rewritten = (!best.is_empty())
        .then(|| match_line_endings(&parsed.source.text, transplant(parsed, &best, &host)));
    let mut write_failed = false;
    let not_utf8 = !parsed.source.invalid_utf8.is_empty();
    if let (true, Some(_), true) = (a.write, &rewritten, not_utf8) {
        // Its bytes that are not UTF-8 were read as U+FFFD: writing the
        // text back would change them.
        eprintln!(
            "copper: warning: {}: not rewritten: it holds bytes that are not UTF-8 (read as U+FFFD), which writing would change; apply the change by hand",
            run.path.display()
        );
    } else if let (true, Some(text)) = (a.write, &rewritten) {
        match replace_if_unchanged(&run.path, &parsed.source.text, text) {
            Ok(()) => output::note(format_args!("updated {}", run.path.display())),
            Err(ReplaceError::Changed(why)) => {
                eprintln!("copper: warning: {}: {why}", run.path.display())
            }
            Err(ReplaceError::Io(e)) => {
                eprintln!("copper: error: {}: cannot update: {e}", run.path.display());
                write_failed = true;
            }
        }
    }
    Finished {
        kernels,
        rewritten,
        write_failed,
    }
}

/// The kernels of a file that could not be read, as failed runs.
fn unreadable_kernels(parsed: &ParsedFile, only: Option<&str>) -> Vec<KernelRun> {
    parsed
        .functions
        .iter()
        .filter(|f| f.item.kind == FnKind::Global && only.is_none_or(|k| k == f.item.name))
        .filter_map(|f| {
            let d = f.result.as_ref().err()?;
            Some(KernelRun {
                name: f.item.name.clone(),
                at: parsed.source.line_col(f.item.span.start),
                shape: Shape {
                    block: None,
                    grid: None,
                    source: "not read".into(),
                    assumed: false,
                },
                result: Err(format!("{}:{}: {}", d.line, d.col, d.message)),
                readable: false,
            })
        })
        .collect()
}
