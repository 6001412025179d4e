//! The drivers the commands call, one per command: [`optimize`]
//! (files → kernels → template instantiations → the search → rewritten
//! files), [`lint`] (per file: kernels, launch shapes, the lint,
//! suppressions), [`analyze`] (per kernel: bounds, launch and block-time
//! bounds, the `--check` simulation), [`simulate`] (per kernel: the
//! parameter file's launch and inputs, the run), [`annotate`] (per
//! kernel: the test launch, costs per statement and line, the bound at
//! that launch), [`bench`] (the kernels to time, their swept launches,
//! the search for each one's rewrite) and [`params`] (each kernel's test
//! launch). Each returns typed results; the command line, writing files
//! and every output format are the `copper` command's.

pub mod analyze;
pub mod annotate;
pub mod bench;
pub mod lint;
pub mod optimize;
pub mod params;
pub mod simulate;
