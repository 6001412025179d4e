//! copper's search driver (DESIGN §12, `002_…` §3–§4): for each kernel,
//! the baseline analysis, then each transform in turn on the best kernel
//! so far: its candidates checked by differential simulation, analyzed in
//! parallel, ranked by their bounds; a candidate replaces the incumbent
//! only when its bound is better. The `copper` command is built on it.

pub mod bench;
pub mod config;
pub mod launch;
pub mod lint;
pub mod pipeline;
pub mod rank;
