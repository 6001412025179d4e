//! The preprocessing options of every command that reads CUDA: `-D`, `-U`
//! and `-I`, as nvcc takes them, over `copper.toml`'s `defines` and
//! `include_dirs`.

use std::path::{Path, PathBuf};

use copper::cuda::include::{parse_define, parse_undef, Define, Preprocess};
use copper::cuda::parse::{parse_path_with, ParsedFile};
use copper_search::config::{self, FileConfig};

/// Preprocessing options.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PreprocessArgs {
    /// Define a macro, as nvcc does: `-D N=1024`, `-DN=1024`, `-D DEBUG`
    /// (value 1) (repeatable; wins over `defines` in `copper.toml`).
    #[arg(short = 'D', long = "define", value_name = "NAME[=VALUE]", value_parser = parse_define)]
    pub defines: Vec<Define>,
    /// Remove a macro definition given by `-D` or `copper.toml` (applied
    /// after every `-D`; repeatable).
    #[arg(short = 'U', long = "undefine", value_name = "NAME", value_parser = parse_undef)]
    pub undefines: Vec<Define>,
    /// Search this directory for headers, after the including file's own
    /// directory (repeatable; before `include_dirs` in `copper.toml`).
    #[arg(short = 'I', long = "include-dir", value_name = "DIR")]
    pub include_dirs: Vec<PathBuf>,
    /// Analyze this instantiation of a template kernel besides those the
    /// file launches: `--instantiate 'reduce<256>'` (repeatable; added to
    /// `instantiate` in `copper.toml`).
    #[arg(long = "instantiate", value_name = "NAME<ARGS>")]
    pub instantiate: Vec<String>,
}

impl PreprocessArgs {
    /// The options over a configuration read from `cfg_path`.
    pub fn resolve(&self, cfg: &FileConfig, cfg_path: Option<&Path>) -> Result<Preprocess, String> {
        let from_cfg = config::preprocess(cfg, cfg_path)?;
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
            Some(p) => config::load(p)?,
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
