//! The `copper` command.

use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    // Like other Unix tools, stop quietly when the reader of our output goes
    // away (`copper … | head`) instead of failing to print.
    #[cfg(unix)]
    // SAFETY: setting a signal disposition to its default before any other
    // thread exists has no memory-safety implications.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
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
