//! The `copper` command.

use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    // Parsing and printing recurse over kernel syntax; give them room even
    // on hostile input (nesting is bounded before parsing as well).
    let worker = std::thread::Builder::new()
        .name("copper".into())
        .stack_size(256 * 1024 * 1024)
        .spawn(cli::run);
    match worker.map(|h| h.join()) {
        Ok(Ok(code)) => ExitCode::from(code),
        _ => {
            eprintln!("copper: internal error");
            ExitCode::from(2)
        }
    }
}
