//! The options that say how kernels are launched, shared by `analyze`,
//! `optimize` and `lint`.

use std::path::PathBuf;

use super::analyze::{parse_block, parse_grid};

/// Launch options.
#[derive(clap::Args, Debug)]
pub struct LaunchArgs {
    /// Block shape `X[,Y[,Z]]` (default: `copper.toml` for optimize and
    /// lint, else the file's launch site, else the parameter file; without
    /// any, bounds hold for every block and speak of `blockDim`).
    #[arg(long, value_parser = parse_block)]
    pub block: Option<[u64; 3]>,
    /// Grid shape `X[,Y[,Z]]` (default: as for the block).
    #[arg(long, value_parser = parse_grid)]
    pub grid: Option<[u64; 3]>,
    /// Parameter file (default: each FILE with `.toml`, when it exists):
    /// launch shapes, and the inputs copper simulates (checks of bounds and
    /// of rewrites, witnesses).
    #[arg(long)]
    pub params: Option<PathBuf>,
    /// Only this kernel.
    #[arg(long)]
    pub kernel: Option<String>,
}
