//! Command-line interface: argument parsing and dispatch to subcommands.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

mod fmt;
mod parse;

/// copper: makes CUDA kernels faster without running them.
///
/// copper reads `.cu` files (host code and all), finds their kernels, and
/// analyzes, simulates, lints and rewrites them under a cost model.
#[derive(Parser, Debug)]
#[command(name = "copper", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
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
    },
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
    match cli.command {
        Command::Parse { files, format } => parse::run(&files, format),
        Command::Fmt { file, kernel, whole } => fmt::run(&file, kernel.as_deref(), whole),
    }
}
