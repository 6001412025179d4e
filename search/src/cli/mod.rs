//! Command-line interface: parses the command line, resolves its
//! [`Settings`] once, and runs the subcommand with them.

use clap::Parser;

use args::{Cli, Command};
use settings::Settings;

mod analyze;
mod annotate;
mod args;
mod bench;
mod files;
mod fmt;
pub mod leftovers;
mod lint;
mod optimize;
mod output;
mod params;
mod parse;
mod patch;
mod settings;
mod simulate;
mod stdin;
mod walk;

/// Parses the command line and runs the subcommand; returns the exit status.
pub fn run() -> u8 {
    let mut cli = Cli::parse();
    if cli.quiet {
        output::set_quiet();
    }
    output::set_color(cli.color);
    if let Err(e) = stdin::read_if_named(&mut cli.command, &cli.stdin_filename) {
        eprintln!("copper: error: {e}");
        return 2;
    }
    if let Command::Explain { code } = cli.command {
        print!("{}", copper::lint::explain::explain(code).text());
        return 0;
    }
    let settings = match Settings::resolve(&cli.command) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("copper: error: {e}");
            return 2;
        }
    };
    let s = &settings;
    match cli.command {
        Command::Parse { files, format, .. } => parse::run(&files, format, s),
        Command::Fmt {
            file,
            kernel,
            whole,
            ..
        } => fmt::run(&file, kernel.as_deref(), whole, s),
        Command::Params { file, kernel, .. } => params::run(&file, kernel.as_deref(), s),
        Command::Annotate {
            file,
            kernel,
            html,
            rewrite,
            ..
        } => annotate::run(&file, kernel.as_deref(), html.as_deref(), rewrite, s),
        Command::Analyze(args) => analyze::run(&args, s),
        Command::Optimize(args) => optimize::run(&args, s),
        Command::Lint(args) => lint::run(&args, s),
        Command::Bench(args) => bench::run(&args, s),
        Command::Simulate(args) => simulate::run(&args, s),
        Command::Explain { .. } => 0,
    }
}
