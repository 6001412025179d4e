//! The command line as clap parses it: every subcommand's options and the
//! value parsers that check each value alone. Commands take these raw
//! options with what [`super::settings`] resolves from them, `copper.toml`
//! and the defaults.

use copper::launch::Dims;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};
use copper::bound::Config;
use copper::cuda::include::{parse_define, parse_undef, Define};
use copper::launch::{self, ShapeError};
use copper::lint::Code;
use copper_search::bench::sweep::{self, Sweep};

/// copper: makes CUDA kernels faster without running them.
///
/// copper reads `.cu` files (host code and all), finds their kernels, and
/// analyzes, simulates, lints and rewrites them under a cost model.
#[derive(Parser, Debug)]
#[command(name = "copper", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Print only errors and warnings (on stderr; for `lint`, its findings
    /// too): no other results, notes or progress; the exit status tells
    /// the outcome.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// Colour severities (errors red, warnings yellow, notes cyan) and the
    /// lines of a printed diff: `auto` (when the stream is a terminal and
    /// `NO_COLOR` is unset or empty), `always` or `never`.
    #[arg(long, value_enum, default_value = "auto", global = true)]
    pub color: ColorChoice,
    /// The name standard input stands for when a file is given as `-`:
    /// diagnostics are placed in it, headers and its parameter file are
    /// looked for beside it.
    #[arg(long, value_name = "NAME", default_value = "stdin.cu", global = true)]
    pub stdin_filename: PathBuf,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List the kernels and device functions of each file, with their
    /// parameters, launch shapes and diagnostics.
    ///
    /// Exit status: 0 when every kernel was read and there is no error
    /// (warnings do not count), 1 on an error or a kernel not read, 2 when
    /// a file cannot be read.
    #[command(visible_alias = "kernels")]
    Parse {
        /// `.cu` files to read.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// Preprocessing.
        #[command(flatten)]
        pre: PreprocessArgs,
    },
    /// Print the kernels and device functions of a file as copper prints
    /// them (the style of every rewrite copper suggests).
    Fmt {
        /// `.cu` file to read.
        file: PathBuf,
        /// Only this function.
        #[arg(long, conflicts_with = "whole")]
        kernel: Option<String>,
        /// Print the whole file with every function reprinted (what a rewrite
        /// produces; compiles wherever the original does).
        #[arg(long)]
        whole: bool,
        /// Preprocessing.
        #[command(flatten)]
        pre: PreprocessArgs,
    },
    /// Print the parameter file copper tests each kernel with (the file's
    /// own `FILE.toml`, the launch its host code computes, or a launch
    /// inferred from the kernel), with comments saying where each part
    /// came from: `copper params k.cu > k.toml`, then edit it.
    ///
    /// Exit status: 0 when every kernel got a launch, 1 when some did not,
    /// 2 on bad input.
    Params {
        /// `.cu` file to read.
        file: PathBuf,
        /// Only this kernel.
        #[arg(long)]
        kernel: Option<String>,
        /// Preprocessing.
        #[command(flatten)]
        pre: PreprocessArgs,
    },
    /// Print each kernel's source with, on every line, what its statements
    /// cost in a simulation of the test launch (summed over all warps, per
    /// metric) and the line's share, under the bound per warp and the
    /// worst warp simulated.
    ///
    /// Exit status: 0 when every kernel was annotated, 1 when some could
    /// not be (no launch, or its simulation failed), 2 on bad input.
    Annotate {
        /// `.cu` file to read.
        file: PathBuf,
        /// Only this kernel.
        #[arg(long)]
        kernel: Option<String>,
        /// Parameter file (default: FILE with `.toml`, else the host code's
        /// launch, else one inferred as `copper params` prints it).
        #[arg(long)]
        params: Option<PathBuf>,
        /// Write one self-contained HTML page instead: the annotated
        /// source with hot lines shaded, the lint's findings on their
        /// lines, and the bound plotted against simulated costs at several
        /// sizes.
        #[arg(long, value_name = "OUT.html")]
        html: Option<PathBuf>,
        /// Also search for a rewrite, as `copper optimize` does, and
        /// annotate it after the original, with the diff (always on with
        /// `--html`).
        #[arg(long)]
        rewrite: bool,
        /// The search's options (for `--rewrite`) and preprocessing.
        #[command(flatten)]
        search: SearchArgs,
    },
    /// Run kernels on concrete inputs under the cost semantics (evaluation
    /// mode): cost per metric (max per warp, total, block work and span),
    /// per access site transactions and bank conflicts, final arrays.
    ///
    /// Exit status: 0 on success, 1 when the simulation found an error in a
    /// kernel (out-of-bounds access, division by zero, barrier divergence,
    /// data race, step budget), 2 on bad input.
    Simulate(SimulateArgs),
    /// Sound worst-case cost bound per warp, as a polynomial in the
    /// kernel's parameters, for each metric; the whole launch's bound when
    /// the launch shape is known, and the block-time bound W/P + S.
    ///
    /// Exit status: 0 on success (a kernel without a bound is a result, not
    /// an error), 1 when a kernel could not be read or `--check` could not
    /// simulate it, 2 on bad input.
    Analyze(AnalyzeArgs),
    /// Search for a faster version of each kernel: rewrites (branch
    /// distribution, global to shared memory, tiling, padding, load
    /// hoisting) checked to
    /// compute the same results by simulation, ranked by their sound cost
    /// bounds. Prints the winning kernels, a diff, and the bounds before
    /// and after.
    ///
    /// Exit status: 2 when the run failed (bad input, an output or --write
    /// that could not be written); else 1 when an improvement was found (0
    /// with --exit-zero), even when some file or kernel could not be read;
    /// else 2 when one could not be read; else 0.
    Optimize(OptimizeArgs),
    /// Findings about each kernel's performance with `file:line:col`:
    /// uncoalesced and misaligned global accesses, bank conflicts (with
    /// input witnesses under --witness), divergent branches, and whether
    /// the results depend on the block size.
    ///
    /// Directories are searched for `.cu` and `.cuh` files as `optimize`
    /// searches them; with several files, a table gives each file's
    /// kernels, errors and warnings. `copper explain CODE` tells what a
    /// code means and how to fix it.
    ///
    /// Exit status: 2 on bad input; else 1 with findings, even when some
    /// file or kernel could not be read; else 2 when one could not be read;
    /// else 0.
    Lint(LintArgs),
    /// What a lint code means, why it costs, a small example and its fix.
    Explain {
        /// The code (`divergent-branch`, …).
        #[arg(value_parser = Code::parse)]
        code: Code,
    },
    /// Write a CUDA program that times each kernel against the rewrite
    /// `copper optimize` finds for it, on the parameter file's inputs
    /// (compared after one launch of each), and the script that builds it.
    /// `--sweep NAME=V1,V2,…` times each value of one scalar argument.
    ///
    /// Exit status: 0 when the program was written, 2 on bad input
    /// (nothing is written then).
    Bench(BenchArgs),
}

/// Output formats.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Human-readable text.
    Text,
    /// JSON.
    Json,
}

/// Launch options.
#[derive(clap::Args, Debug)]
pub struct LaunchArgs {
    /// Block shape `X[,Y[,Z]]` or `XxYxZ` (default: `copper.toml` for optimize and
    /// lint, else the file's launch site, else the parameter file; without
    /// any, bounds hold for every block and speak of `blockDim`).
    #[arg(long, value_parser = parse_block)]
    pub block: Option<Dims>,
    /// Grid shape `X[,Y[,Z]]` or `XxYxZ` (default: as for the block).
    #[arg(long, value_parser = parse_grid)]
    pub grid: Option<Dims>,
    /// Parameter file (default: each FILE with `.toml`, when it exists):
    /// launch shapes, and the inputs copper simulates (checks of bounds and
    /// of rewrites, witnesses).
    #[arg(long)]
    pub params: Option<PathBuf>,
    /// Only this kernel.
    #[arg(long)]
    pub kernel: Option<String>,
}

/// Preprocessing options.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PreprocessArgs {
    /// Define a macro, as nvcc does: `-D N=1024`, `-DN=1024`, `-D DEBUG`
    /// (value 1) (repeatable; wins over `defines` in `copper.toml`).
    #[arg(short = 'D', long = "define", value_name = "NAME[=VALUE]", value_parser = parse_define)]
    pub defines: Vec<Define>,
    /// Remove a macro definition given by `-D` or `copper.toml` (applied
    /// after every `-D`; repeatable).
    #[arg(short = 'U', long = "undefine", value_name = "NAME", value_parser = parse_undef)]
    pub undefines: Vec<Define>,
    /// Search this directory for headers, after the including file's own
    /// directory (repeatable; before `include_dirs` in `copper.toml`).
    #[arg(short = 'I', long = "include-dir", value_name = "DIR")]
    pub include_dirs: Vec<PathBuf>,
    /// Analyze this instantiation of a template kernel besides those the
    /// file launches: `--instantiate 'reduce<256>'` (repeatable; added to
    /// `instantiate` in `copper.toml`).
    #[arg(long = "instantiate", value_name = "NAME<ARGS>")]
    pub instantiate: Vec<String>,
    /// Refuse headers outside the file's directory and the -I directories
    /// (an absolute name, `../`, a link out): for trees you do not trust.
    /// Without it such a header is read, with a note.
    #[arg(long = "no-outside-includes")]
    pub no_outside_includes: bool,
}

/// Default `simulate --max-launch-steps`: a launch a loaded 2-core
/// machine simulates in seconds (some 3·10⁶ work units a second).
pub const DEFAULT_LAUNCH_STEPS: u64 = 10_000_000;

/// Options of `copper simulate`.
#[derive(clap::Args, Debug)]
pub struct SimulateArgs {
    /// `.cu` file.
    pub file: PathBuf,
    /// Parameter file (TOML; default: the `.cu` file with `.toml`).
    #[arg(long)]
    pub params: Option<PathBuf>,
    /// Metric to report (repeatable; default: all built-in metrics).
    #[arg(long = "metric")]
    pub metrics: Vec<String>,
    /// TOML file defining user metrics (`[metric.NAME]` tables).
    #[arg(long)]
    pub metrics_file: Option<PathBuf>,
    /// Only this kernel.
    #[arg(long)]
    pub kernel: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the final contents of every global array here (JSON).
    #[arg(long)]
    pub dump: Option<PathBuf>,
    /// Most instructions a warp may execute (catches non-terminating kernels).
    #[arg(long, default_value_t = copper::sim::DEFAULT_STEP_BUDGET)]
    pub max_steps: u64,
    /// Most work units of all warps of a launch together (an instruction
    /// is one unit, and every two lanes of a global or shared access one
    /// more): the whole launch's deterministic work limit, the same on every machine, past
    /// which it stops with an error that says so.
    #[arg(long, default_value_t = DEFAULT_LAUNCH_STEPS, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_launch_steps: u64,
    /// Count 128-byte transactions instead of 32-byte sectors.
    #[arg(long)]
    pub lines: bool,
    /// Hardware model (TOML: `warp_size`, `transaction_bytes`, `banks`,
    /// `bank_bytes`; defaults 32, 32, 32, 4).
    #[arg(long)]
    pub hardware: Option<PathBuf>,
    /// Fail on a race between blocks (a block writing a global element
    /// another block reads or writes): results would depend on block order.
    #[arg(long)]
    pub races: bool,
    /// Preprocessing.
    #[command(flatten)]
    pub pre: PreprocessArgs,
}

/// Options of `copper analyze`.
#[derive(clap::Args, Debug)]
pub struct AnalyzeArgs {
    /// `.cu` file.
    pub file: PathBuf,
    /// Metric (repeatable; default: all built-in metrics).
    #[arg(long = "metric")]
    pub metrics: Vec<String>,
    /// TOML file defining user metrics (`[metric.NAME]` tables).
    #[arg(long)]
    pub metrics_file: Option<PathBuf>,
    /// Highest degree of the bound's base functions (1 to 4).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=4))]
    pub degree: u32,
    /// Also simulate each kernel on the parameter file's inputs and show
    /// the bound there next to the worst warp's simulated cost.
    #[arg(long)]
    pub check: bool,
    /// How kernels are launched.
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Count 128-byte transactions instead of 32-byte sectors.
    #[arg(long)]
    pub lines: bool,
    /// Hardware model (TOML).
    #[arg(long)]
    pub hardware: Option<PathBuf>,
    /// Instructions an SM issues per cycle (P in the block-time bound W/P + S).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..))]
    pub issue: u64,
    /// Largest LP (variables plus constraints) to solve per metric; a kernel
    /// needing more gets "no bound".
    #[arg(long, default_value_t = Config::default().max_lp)]
    pub max_lp: usize,
    /// Most abstract-interpretation steps (statement visits) per run of it
    /// on a kernel: the deterministic work limit, past which every metric
    /// gets "no bound" saying so.
    #[arg(long, default_value_t = Config::default().max_steps)]
    pub max_absint_steps: usize,
    /// Wall-clock safety net: seconds one kernel's analysis may take (all
    /// metrics together). The work limits decide first, the same on every
    /// machine; a result cut here says that it may differ on a faster one.
    #[arg(long, default_value = "200", value_parser = parse_seconds)]
    pub budget: std::time::Duration,
    /// Preprocessing.
    #[command(flatten)]
    pub pre: PreprocessArgs,
}

/// Why an option's value is refused (clap prints the message after the
/// option's name).
#[derive(Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// Not one to three sizes.
    #[error("expected 1 to 3 sizes separated by `,` or `x`, got `{0}`")]
    Sizes(String),
    /// A size that is not a number.
    #[error("`{0}` is not a positive integer")]
    NotInteger(String),
    /// A shape CUDA refuses.
    #[error(transparent)]
    Shape(#[from] ShapeError),
    /// Not a number of seconds.
    #[error("`{0}` is not a number of seconds")]
    Seconds(String),
    /// A budget out of range.
    #[error("the budget must be more than 0 and at most 1000000 seconds")]
    Budget,
    /// Not `NAME=VALUE`.
    #[error("`{0}` is not NAME=VALUE")]
    NotAssignment(String),
    /// A value that is not a number.
    #[error("`{0}` is not a number")]
    NotNumber(String),
    /// An infinite or NaN value.
    #[error("`{0}` is not a finite number")]
    NotFinite(String),
    /// Nothing given.
    #[error("give at least one NAME=VALUE")]
    NoValues,
}

/// One to three sizes `X[,Y[,Z]]`, or `XxYxZ` (`X×Y×Z`, as copper prints
/// shapes), the missing ones 1; their limits are checked by the caller.
fn parse_dims(s: &str) -> Result<[u64; 3], ValueError> {
    let parts: Vec<&str> = s.split([',', 'x', '×']).map(str::trim).collect();
    if parts.len() > 3 {
        return Err(ValueError::Sizes(s.to_string()));
    }
    let mut d = [1u64; 3];
    for (i, p) in parts.iter().enumerate() {
        d[i] = p
            .parse()
            .map_err(|_| ValueError::NotInteger(p.to_string()))?;
    }
    Ok(d)
}

/// Parses a positive number of seconds.
pub fn parse_seconds(s: &str) -> Result<std::time::Duration, ValueError> {
    let x: f64 = s
        .trim()
        .parse()
        .map_err(|_| ValueError::Seconds(s.to_string()))?;
    if !(x > 0.0 && x <= 1e6) {
        return Err(ValueError::Budget);
    }
    Ok(std::time::Duration::from_secs_f64(x))
}

/// Parses a block shape `X[,Y[,Z]]` within CUDA's limits.
pub fn parse_block(s: &str) -> Result<Dims, ValueError> {
    Ok(launch::block(parse_dims(s)?)?)
}

/// Parses a grid shape `X[,Y[,Z]]` within CUDA's limits.
pub fn parse_grid(s: &str) -> Result<Dims, ValueError> {
    Ok(launch::grid(parse_dims(s)?)?)
}

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
    /// Also write one row per kernel to this file: JSON lines, or CSV when
    /// the name ends in `.csv`; each bound also as a number at the sizes
    /// in use (`--at`, else the launch's arguments), and the improvement.
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
    /// How directories are searched and files spread over threads.
    #[command(flatten)]
    pub walk: WalkArgs,
}

/// How `optimize` and `lint` search directories and spread files over
/// worker threads.
#[derive(clap::Args, Debug)]
pub struct WalkArgs {
    /// Also search ignored files (`.gitignore`, `.ignore`) and hidden
    /// directories.
    #[arg(long)]
    pub no_ignore: bool,
    /// Do not follow symbolic links inside the directories searched (a
    /// link there is skipped with a note): for trees you do not trust,
    /// whose links could lead `--write` outside them.
    #[arg(long)]
    pub no_follow: bool,
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
    /// Rank by the bounds' values at these sizes (`h=4096,w=1024`). By
    /// default candidates are ranked at the sizes of the kernel's launch
    /// (the parameter file's, else the host code's); a kernel without one
    /// by degree and leading coefficients, a candidate taken only when
    /// also no higher at the test launches' largest sizes.
    #[arg(long, value_parser = parse_at)]
    pub at: Option<BTreeMap<String, f64>>,
    /// Rank by degree and leading coefficients alone, whatever the sizes:
    /// a candidate lower only for sizes larger than the launch's is taken.
    #[arg(long, conflicts_with = "at")]
    pub asymptotic: bool,
    /// Relative tolerance of the ranking: smaller differences do not count
    /// [default: 0.02].
    #[arg(long)]
    pub epsilon: Option<f64>,
    /// Only these transforms (repeatable): branch-distribution,
    /// global-to-shared, global-to-shared-tiled, shared-memory-padding,
    /// load-hoisting, warp-shuffle-reduction, thread-remapping,
    /// staged-transposition.
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
    /// Most abstract-interpretation steps (statement visits) per analysis
    /// of a kernel, the deterministic work limit [default: 200000].
    #[arg(long)]
    pub max_absint_steps: Option<usize>,
    /// Most work units (simulated instructions, access lanes and array values) the
    /// checks of one kernel's candidates may use in all; the search stops
    /// at the end of the round that reaches it [default: 80000000].
    #[arg(long)]
    pub max_check_steps: Option<u64>,
    /// Wall-clock safety net: seconds one kernel's whole search may take
    /// [default: 200]. The work limits decide first, the same on every
    /// machine; what is cut here is reported as such.
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
    /// Compile each improving candidate with this CUDA compiler and drop
    /// those that fail; without PATH, copper.toml's `nvcc`, else `nvcc` on
    /// PATH; off by default.
    #[arg(long, num_args = 0..=1, value_name = "PATH")]
    pub nvcc: Option<Option<PathBuf>>,
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
    pub pre: PreprocessArgs,
}

/// Parses `name=value,name=value`.
fn parse_at(s: &str) -> Result<BTreeMap<String, f64>, ValueError> {
    let mut out = BTreeMap::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| ValueError::NotAssignment(part.to_string()))?;
        let x: f64 = v
            .trim()
            .parse()
            .map_err(|_| ValueError::NotNumber(v.to_string()))?;
        if !x.is_finite() {
            return Err(ValueError::NotFinite(v.to_string()));
        }
        out.insert(k.trim().to_string(), x);
    }
    if out.is_empty() {
        return Err(ValueError::NoValues);
    }
    Ok(out)
}

/// Output formats of `copper lint`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LintFormat {
    /// rustc/clang-style warnings with the source line and a caret.
    Text,
    /// JSON.
    Json,
    /// GitHub Actions annotations.
    Github,
    /// SARIF 2.1.0.
    Sarif,
}

/// Options of `copper lint`.
#[derive(clap::Args, Debug)]
pub struct LintArgs {
    /// `.cu` files, or directories to search for `.cu` and `.cuh` files.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Also write one JSON object per file to this file (JSON lines): its
    /// kernels, error and warning counts, findings and errors.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// How directories are searched and files spread over threads.
    #[command(flatten)]
    pub walk: WalkArgs,
    /// How kernels are launched.
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Preprocessing.
    #[command(flatten)]
    pub pre: PreprocessArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: LintFormat,
    /// Do not report this code (repeatable): uncoalesced-global,
    /// misaligned-global, bank-conflict, divergent-branch,
    /// block-size-dependent, index-overflow, data-race,
    /// divergent-barrier, warp-synchronous. One place: a comment
    /// `// copper: allow(CODE)` on its line, `// copper: allow-next-line(CODE)`
    /// on the line before, or either on a kernel's first line for the
    /// whole kernel.
    #[arg(long = "allow", value_name = "CODE", value_parser = Code::parse)]
    pub allow: Vec<Code>,
    /// For bank conflicts whose index comes from input data, search inputs
    /// that make one warp reach the worst case (confirmed by simulation on
    /// the parameter file's launch).
    #[arg(long)]
    pub witness: bool,
    /// With --witness: the number of transactions to reach (default: the
    /// analysis bound); above the bound it is proved impossible.
    #[arg(long, requires = "witness", value_parser = clap::value_parser!(u64).range(1..))]
    pub degree: Option<u64>,
    /// With --witness: most branch-and-bound nodes each witness MILP (one
    /// per warp) may solve past its root relaxation, a deterministic work
    /// limit [default: 100000].
    #[arg(long, requires = "witness", value_name = "N")]
    pub max_witness_nodes: Option<u64>,
    /// `copper.toml` to use (default: the nearest one upward from the
    /// current directory).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// With --format sarif: the directory file URIs are relative to
    /// (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub sarif_root: Option<PathBuf>,
    /// Most abstract-interpretation steps (statement visits) per analysis
    /// of a kernel, the deterministic work limit [default: 200000].
    #[arg(long)]
    pub max_absint_steps: Option<usize>,
    /// Wall-clock safety net: seconds one kernel's lint may take (its
    /// analysis and race search) [default: 200]. The work limits decide
    /// first, the same on every machine; what is cut here is reported as
    /// such.
    #[arg(long, value_parser = parse_seconds)]
    pub budget: Option<std::time::Duration>,
}

/// When to colour text output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// When the stream is a terminal and `NO_COLOR` is unset or empty.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Options of `copper bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// `.cu` file.
    pub file: PathBuf,
    /// Parameter file (default: FILE with `.toml`): each kernel's launch,
    /// arguments and array contents.
    #[arg(long)]
    pub params: Option<PathBuf>,
    /// Directory to write the program and its build script in.
    #[arg(long, default_value = "copper-bench")]
    pub out: PathBuf,
    /// Only this kernel.
    #[arg(long)]
    pub kernel: Option<String>,
    /// Time each kernel at several values of one scalar argument:
    /// `NAME=V1,V2,…` (positive integers; array lengths written as
    /// expressions in the parameter file follow).
    #[arg(long, value_parser = sweep::parse)]
    pub sweep: Option<Sweep>,
    /// Timed launches per kernel and size (the program's default).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub runs: u32,
    /// Launches before timing (the program's default).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub warmup: u32,
    /// How the search runs.
    #[command(flatten)]
    pub search: SearchArgs,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_checked() {
        assert_eq!(parse_block("32,8").map(Dims::to_array), Ok([32, 8, 1]));
        assert!(parse_block("2048").is_err());
        assert!(parse_block("0").is_err());
        assert!(parse_block("a").is_err());
        assert_eq!(parse_grid("100000").map(Dims::to_array), Ok([100000, 1, 1]));
        assert!(parse_grid("1,70000").is_err());
        assert_eq!(
            parse_seconds("0.5"),
            Ok(std::time::Duration::from_millis(500))
        );
        assert!(parse_seconds("NaN").is_err());
        assert!(parse_seconds("-1").is_err());
        assert!(parse_seconds("0").is_err());
    }
}
