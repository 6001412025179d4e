//! Command-line interface: argument parsing and dispatch to subcommands.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

mod analyze;
mod bench;
mod ci;
mod files;
mod fmt;
mod launch_args;
mod lint;
mod optimize;
mod output;
mod params;
mod parse;
mod patch;
mod preprocess;
mod report;
mod simulate;
mod walk;

/// copper: makes CUDA kernels faster without running them.
///
/// copper reads `.cu` files (host code and all), finds their kernels, and
/// analyzes, simulates, lints and rewrites them under a cost model.
#[derive(Parser, Debug)]
#[command(name = "copper", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Print only errors and warnings (on stderr): no results, notes or
    /// progress; the exit status tells the outcome.
    #[arg(long, short, global = true)]
    quiet: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the kernels and device functions of each file, with their
    /// parameters, launch shapes and diagnostics.
    ///
    /// Exit status: 0 when every function parsed, 1 when some function has a
    /// diagnostic, 2 when a file cannot be read.
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
        pre: preprocess::PreprocessArgs,
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
        pre: preprocess::PreprocessArgs,
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
        pre: preprocess::PreprocessArgs,
    },
    /// Run kernels on concrete inputs under the cost semantics (evaluation
    /// mode): cost per metric (max per warp, total, block work and span),
    /// per access site transactions and bank conflicts, final arrays.
    ///
    /// Exit status: 0 on success, 1 when the simulation found an error in a
    /// kernel (out-of-bounds access, division by zero, barrier divergence,
    /// data race, step budget), 2 on bad input.
    Simulate {
        /// `.cu` file.
        file: PathBuf,
        /// Parameter file (TOML; default: the `.cu` file with `.toml`).
        #[arg(long)]
        params: Option<PathBuf>,
        /// Metric to report (repeatable; default: all built-in metrics).
        #[arg(long = "metric")]
        metrics: Vec<String>,
        /// TOML file defining user metrics (`[metric.NAME]` tables).
        #[arg(long)]
        metrics_file: Option<PathBuf>,
        /// Only this kernel.
        #[arg(long)]
        kernel: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// Write the final contents of every global array here (JSON).
        #[arg(long)]
        dump: Option<PathBuf>,
        /// Most instructions a warp may execute (catches non-terminating kernels).
        #[arg(long, default_value_t = copper::sim::DEFAULT_STEP_BUDGET)]
        max_steps: u64,
        /// Count 128-byte transactions instead of 32-byte sectors.
        #[arg(long)]
        lines: bool,
        /// Hardware model (TOML: `warp_size`, `transaction_bytes`, `banks`,
        /// `bank_bytes`; defaults 32, 32, 32, 4).
        #[arg(long)]
        hardware: Option<PathBuf>,
        /// Fail on a race between blocks (a block writing a global element
        /// another block reads or writes): results would depend on block order.
        #[arg(long)]
        races: bool,
        /// Preprocessing.
        #[command(flatten)]
        pre: preprocess::PreprocessArgs,
    },
    /// Sound worst-case cost bound per warp, as a polynomial in the
    /// kernel's parameters, for each metric; the whole launch's bound when
    /// the launch shape is known, and the block-time bound W/P + S.
    ///
    /// Exit status: 0 on success (a kernel without a bound is a result, not
    /// an error), 1 when a kernel could not be read or `--check` could not
    /// simulate it, 2 on bad input.
    Analyze(analyze::AnalyzeArgs),
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
    Optimize(optimize::OptimizeArgs),
    /// Findings about each kernel's performance with `file:line:col`:
    /// uncoalesced and misaligned global accesses, bank conflicts (with
    /// input witnesses under --witness), divergent branches, and whether
    /// the results depend on the block size.
    ///
    /// Exit status: 2 on bad input; else 1 with findings, even when some
    /// file or kernel could not be read; else 2 when one could not be read;
    /// else 0.
    Lint(lint::LintArgs),
    /// Write a CUDA program that times each kernel against the rewrite
    /// `copper optimize` finds for it, on the parameter file's inputs
    /// (compared after one launch of each), and the script that builds it.
    /// `--sweep NAME=V1,V2,…` times each value of one scalar argument.
    ///
    /// Exit status: 0 when the program was written, 2 on bad input
    /// (nothing is written then).
    Bench(bench::BenchArgs),
}

/// Output formats.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Human-readable text.
    Text,
    /// JSON.
    Json,
}

/// Parses the command line and runs the subcommand; returns the exit status.
pub fn run() -> u8 {
    let cli = Cli::parse();
    if cli.quiet {
        output::set_quiet();
    }
    match cli.command {
        Command::Parse { files, format, pre } => parse::run(&files, format, &pre),
        Command::Fmt {
            file,
            kernel,
            whole,
            pre,
        } => fmt::run(&file, kernel.as_deref(), whole, &pre),
        Command::Params { file, kernel, pre } => params::run(&file, kernel.as_deref(), &pre),
        Command::Analyze(args) => analyze::run(&args),
        Command::Optimize(args) => optimize::run(&args),
        Command::Lint(args) => lint::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Simulate {
            file,
            params,
            metrics,
            metrics_file,
            kernel,
            format,
            dump,
            max_steps,
            lines,
            hardware,
            races,
            pre,
        } => simulate::run(&simulate::SimulateArgs {
            file,
            params,
            metrics,
            metrics_file,
            kernel,
            format,
            dump,
            max_steps,
            lines,
            hardware,
            races,
            pre,
        }),
    }
}
