//! copper: the engine library.
//!
//! Reads CUDA source files, finds their kernels, parses them into copper's own
//! AST, prints and splices them back into the file, lowers them to an IR,
//! simulates them under the cost semantics and bounds their cost (abstract
//! interpretation and AARA), and lints their performance. See
//! `docs/ARCHITECTURE.md` for the design.

/// Implements `From<E> for String` (the error's `Display` message) for
/// each typed error `E`, so that callers whose errors are still messages
/// (the CLI) can use `?` on the engine's typed errors.
macro_rules! error_message {
    ($($error:ty),+ $(,)?) => {
        $(impl From<$error> for String {
            fn from(e: $error) -> String {
                e.to_string()
            }
        })+
    };
}

pub mod absint;
pub mod bound;
pub mod cost;
pub mod cuda;
pub mod diag;
pub mod input;
pub mod ir;
pub mod launch;
pub mod lint;
pub mod poly;
pub mod shown;
pub mod sim;
pub mod source;

/// Runs `f` on a thread with a small stack (4 MiB; a rayon worker's is
/// 2): a test that some pass is bounded on deep input aborts the test run
/// if the pass recurses without bound.
#[cfg(test)]
pub(crate) fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(4 * 1024 * 1024)
        .spawn(f)
        .expect("a thread starts")
        .join()
        .expect("the thread ends without a panic")
}
