//! Command-line interface: argument parsing and dispatch to subcommands.

use clap::Parser;

use args::{Cli, Command};

mod analyze;
mod args;
mod bench;
mod ci;
mod files;
mod fmt;
mod lint;
mod optimize;
mod outcome;
mod output;
mod params;
mod parse;
mod patch;
mod preprocess;
mod report;
mod settings;
mod simulate;
mod walk;

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
        Command::Simulate(args) => simulate::run(&args),
    }
}
