//! The drivers the batch commands call, one per command: [`optimize`]
//! (files → kernels → template instantiations → the search → rewritten
//! files) and [`lint`] (per file: kernels, launch shapes, the lint,
//! suppressions). Each returns typed results; the command line, writing
//! files and every output format are the `copper` command's.

pub mod lint;
pub mod optimize;
