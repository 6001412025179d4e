//! The `copper` command.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

mod cli;

/// Set when writing to standard output failed (the run then exits 2).
static OUTPUT_FAILED: AtomicBool = AtomicBool::new(false);

fn main() -> ExitCode {
    // Like other Unix tools, stop quietly when the reader of our output goes
    // away (`copper … | head`) instead of failing to print.
    #[cfg(unix)]
    // SAFETY: setting a signal disposition to its default before any other
    // thread exists has no memory-safety implications.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // A temporary file copper is writing is removed if a signal ends it.
    cli::leftovers::install();
    // `println!` panics when standard output cannot be written (a full
    // disk, a closed descriptor): say so in one line instead of a panic.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if let Some(why) = message.strip_prefix("failed printing to stdout: ") {
            OUTPUT_FAILED.store(true, Ordering::SeqCst);
            eprintln!("copper: error: cannot write the output: {why}");
        } else {
            default_hook(info);
        }
    }));
    // Parsing and printing recurse over kernel syntax; give them room even
    // on hostile input (nesting is bounded before parsing as well).
    let worker = std::thread::Builder::new()
        .name("copper".into())
        .stack_size(256 * 1024 * 1024)
        .spawn(cli::run);
    match worker.map(|h| h.join()) {
        Ok(Ok(code)) => ExitCode::from(code),
        _ if OUTPUT_FAILED.load(Ordering::SeqCst) => ExitCode::from(2),
        _ => {
            eprintln!("copper: internal error");
            ExitCode::from(2)
        }
    }
}
