//! copper: the engine library.
//!
//! Reads CUDA source files, finds their kernels, parses them into copper's own
//! AST, prints and splices them back into the file, lowers them to an IR,
//! simulates them under the cost semantics and bounds their cost (abstract
//! interpretation and AARA), and lints their performance. See
//! `docs/ARCHITECTURE.md` for the design.

pub mod absint;
pub mod bound;
pub mod cost;
pub mod cuda;
pub mod diag;
pub mod ir;
pub mod lint;
pub mod poly;
pub mod sim;
pub mod source;
