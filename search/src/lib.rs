//! copper's search driver (after COpPER §3–§4): for each kernel,
//! the baseline analysis, then rounds in which every transform not applied
//! yet proposes candidates for the best kernel so far: checked by
//! differential simulation, analyzed in parallel, ranked by their bounds; a
//! candidate replaces the incumbent only when its bound is better. Also the
//! GPU benchmark generator, the configuration, and the drivers that
//! `copper optimize` and `copper lint` call ([`driver`]: files in, typed
//! results out). The `copper` command is built on it.

pub mod bench;
pub mod config;
pub mod driver;
pub mod launch;
pub mod nvcc;
pub mod pipeline;
pub mod rank;
