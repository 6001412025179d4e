//! copper: the engine library.
//!
//! Reads CUDA source files, finds their kernels, parses them into copper's own
//! AST, prints and splices them back into the file, and (in later modules)
//! analyzes their cost. See `DESIGN.md` for the architecture.

pub mod absint;
pub mod bound;
pub mod cost;
pub mod cuda;
pub mod diag;
pub mod ir;
pub mod poly;
pub mod sim;
pub mod source;
