//! The preprocessing options of every command that reads CUDA
//! ([`PreprocessArgs`]: `-D`, `-U` and `-I`, as nvcc takes them) over
//! `copper.toml`'s `defines` and `include_dirs`.

use std::path::Path;

use copper::cuda::include::Preprocess;
use copper::cuda::parse::{parse_path_with, ParsedFile};
use copper_search::config::{self, FileConfig};

use super::args::PreprocessArgs;

impl PreprocessArgs {
    /// The options over a configuration read from `cfg_path`.
    pub fn resolve(&self, cfg: &FileConfig, cfg_path: Option<&Path>) -> Result<Preprocess, String> {
        let from_cfg = config::preprocess(cfg, cfg_path).map_err(|e| e.to_string())?;
        let mut out = Preprocess {
            defines: from_cfg.defines,
            include_dirs: self.include_dirs.clone(),
            instantiate: from_cfg.instantiate,
        };
        out.instantiate.extend(self.instantiate.iter().cloned());
        out.defines.extend(self.defines.iter().cloned());
        out.defines.extend(self.undefines.iter().cloned());
        out.include_dirs.extend(from_cfg.include_dirs);
        out.check()?;
        Ok(out)
    }

    /// The options over `copper.toml` found from the current directory
    /// upward (`config` instead when given).
    pub fn resolve_found(&self, config: Option<&Path>) -> Result<Preprocess, String> {
        let path = match config {
            Some(p) => Some(p.to_path_buf()),
            None => std::env::current_dir().ok().and_then(|d| config::find(&d)),
        };
        let cfg = match &path {
            Some(p) => config::load(p).map_err(|e| e.to_string())?,
            None => FileConfig::default(),
        };
        self.resolve(&cfg, path.as_deref())
    }

    /// Reads and parses `file` under these options (over the `copper.toml`
    /// found from the current directory); the error is printed, ready to
    /// exit 2.
    pub fn parse(&self, file: &Path) -> Result<ParsedFile, String> {
        let pre = self
            .resolve_found(None)
            .map_err(|e| format!("copper: error: {e}"))?;
        parse_path_with(file, &pre).map_err(|d| d.render())
    }
}
