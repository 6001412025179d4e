//! `copper.toml`: project settings for `copper optimize`, found from the
//! current directory upward (or given with `--config`). Every setting has
//! a command-line option of the same name, which wins.
//!
//! ```toml
//! metric = "wsteps"        # the metric that ranks candidates
//! epsilon = 0.02           # relative tolerance of the ranking
//! at = { h = 4096 }        # rank by the bounds' values at these sizes
//! asymptotic = false       # rank by degree and coefficients alone
//! degree = 2               # highest degree of the bounds' base functions
//! block = [256, 1, 1]      # launch shape (overrides the file's launch sites)
//! grid = [64, 1, 1]
//! max_lp = 60000           # largest LP per metric
//! budget = 200.0           # wall-clock safety net, seconds per kernel (its whole search)
//! transforms = ["branch distribution", "global to shared"]
//! exit_zero = false        # exit 0 even when improvements are found
//! nvcc = "nvcc"            # compile improving candidates (found by searching: only with --nvcc)
//! nvcc_flags = ["-arch=sm_80", "-DN=1024"]
//! allow_reassociation = false   # float sums may change order (last bits)
//! defines = { N = "1024", BLOCK = 16 }   # as -D (every command that reads CUDA)
//! include_dirs = ["inc"]   # as -I, relative to this file
//! instantiate = ["reduce<256>"]   # templates to analyze besides those launched
//!
//! [hardware]               # the hardware model (defaults shown)
//! warp_size = 32
//! transaction_bytes = 32
//! banks = 32
//! bank_bytes = 4
//!
//! [lint]                   # copper lint: codes not to report
//! disable = ["divergent-branch"]
//!
//! [metrics.mine]           # user metrics, ranked with metric = "mine"
//! op = 1
//! gread = { per = 10 }
//! ```

use copper::shown::Shown;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use copper::cost::{metrics_from_toml, Hardware, Metric};
use copper::cuda::include::{parse_define, Preprocess};
use copper::input::{read_input_text, InputFileError};
use copper::launch::{self, Dims, Part, ShapeError};
use serde::Deserialize;

/// The file's name.
pub const FILE_NAME: &str = "copper.toml";

/// Settings from a `copper.toml` (each `None` when not set).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Ranking metric.
    pub metric: Option<String>,
    /// Relative tolerance of the ranking.
    pub epsilon: Option<f64>,
    /// Sizes to rank at.
    pub at: Option<BTreeMap<String, f64>>,
    /// Rank by degree and coefficients alone, whatever the sizes.
    pub asymptotic: Option<bool>,
    /// Highest degree of base functions.
    pub degree: Option<u32>,
    /// Block shape.
    pub block: Option<Vec<u64>>,
    /// Grid shape.
    pub grid: Option<Vec<u64>>,
    /// Largest LP per metric.
    pub max_lp: Option<usize>,
    /// Wall-clock safety net, seconds per kernel (its whole search).
    pub budget: Option<f64>,
    /// The transforms tried, in order.
    pub transforms: Option<Vec<String>>,
    /// Exit 0 even when improvements are found.
    pub exit_zero: Option<bool>,
    /// The CUDA compiler that checks improving candidates (run only with
    /// `--nvcc`, or when the file was given with `--config`).
    pub nvcc: Option<PathBuf>,
    /// Its flags.
    pub nvcc_flags: Option<Vec<String>>,
    /// Macro definitions, as `-D NAME=VALUE` (a string, number or boolean).
    pub defines: Option<BTreeMap<String, toml::Value>>,
    /// Header directories, as `-I` (relative to the `copper.toml`).
    pub include_dirs: Option<Vec<PathBuf>>,
    /// Template instantiations to analyze besides the file's launches, as
    /// `--instantiate` (`"reduce<256>"`).
    pub instantiate: Option<Vec<String>>,
    /// Hardware model.
    pub hardware: Option<Hardware>,
    /// `copper lint` settings.
    pub lint: Option<LintConfig>,
    /// Let rewrites sum floating-point values in another order.
    pub allow_reassociation: Option<bool>,
    /// User metrics, from `[metrics.NAME]` tables.
    #[serde(skip)]
    pub user_metrics: Vec<Metric>,
}

/// The `[lint]` table.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LintConfig {
    /// Finding codes not to report (`uncoalesced-global`, …).
    #[serde(default)]
    pub disable: Vec<String>,
}

/// The `copper.toml` that applies in `dir`: there or in the nearest
/// directory above it.
pub fn find(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .map(|d| d.join(FILE_NAME))
        .find(|p| p.is_file())
}

/// Why a `copper.toml` cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("{}: cannot read the configuration: {source}", path.shown())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: InputFileError,
    },
    /// The file was read, but its text is not a valid configuration.
    #[error("{}: {source}", path.shown())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with its text.
        source: Box<ConfigError>,
    },
    /// Not TOML, or a key or value of the wrong kind.
    #[error("{0}")]
    Syntax(String),
    /// A `[metrics.NAME]` table or the `[hardware]` model is invalid.
    #[error("{0}")]
    Model(String),
    /// A `block` or `grid` that is not 1 to 3 positive sizes within CUDA's
    /// limits: which, and the limit it breaks.
    #[error("{0}: {1}")]
    Shape(Part, ShapeError),
    /// A setting outside its range (`epsilon`, `degree`, `budget`).
    #[error("{0}")]
    OutOfRange(&'static str),
    /// A `defines` entry that is not a macro definition.
    #[error("{0}")]
    Define(String),
}

/// Reads a `copper.toml`.
pub fn load(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = read_input_text(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text).map_err(|e| ConfigError::Invalid {
        path: path.to_path_buf(),
        source: Box::new(e),
    })
}

/// Parses the text of a `copper.toml`.
pub fn parse(text: &str) -> Result<FileConfig, ConfigError> {
    let mut value: toml::Table =
        toml::from_str(text).map_err(|e: toml::de::Error| ConfigError::Syntax(e.to_string()))?;
    // `[metrics.NAME]` tables define user metrics, in the format of
    // `--metrics-file` (whose tables are `[metric.NAME]`).
    let definitions = match value.remove("metrics") {
        Some(t @ toml::Value::Table(_)) => {
            let mut wrapper = toml::Table::new();
            wrapper.insert("metric".into(), t);
            metrics_from_toml(&wrapper.to_string())
                .map_err(|e| ConfigError::Model(e.to_string()))?
        }
        Some(_) => {
            return Err(ConfigError::Syntax(
                "`metrics` must be a table of `[metrics.NAME]` tables".into(),
            ))
        }
        None => Vec::new(),
    };
    let mut c: FileConfig = toml::Value::Table(value)
        .try_into()
        .map_err(|e: toml::de::Error| ConfigError::Syntax(e.to_string()))?;
    c.user_metrics = definitions;
    if let Some(b) = &c.block {
        block(b)?;
    }
    if let Some(g) = &c.grid {
        grid(g)?;
    }
    if let Some(h) = &c.hardware {
        h.validate()
            .map_err(|e| ConfigError::Model(e.to_string()))?;
    }
    if c.epsilon.is_some_and(|e| !(0.0..1.0).contains(&e)) {
        return Err(ConfigError::OutOfRange(
            "epsilon must be at least 0 and below 1",
        ));
    }
    if c.degree.is_some_and(|d| !(1..=4).contains(&d)) {
        return Err(ConfigError::OutOfRange("degree must be 1 to 4"));
    }
    if c.budget.is_some_and(|b| !(b > 0.0 && b <= 1e6)) {
        return Err(ConfigError::OutOfRange(
            "budget must be more than 0 and at most 1000000 seconds",
        ));
    }
    Ok(c)
}

/// The definitions and include directories of a configuration read from
/// `path` (directories made relative to its directory).
pub fn preprocess(c: &FileConfig, path: Option<&Path>) -> Result<Preprocess, ConfigError> {
    let mut out = Preprocess::default();
    for (name, v) in c.defines.iter().flatten() {
        let value = match v {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => u8::from(*b).to_string(),
            _ => {
                return Err(ConfigError::Define(format!(
                    "defines.{name}: a string, number or boolean"
                )))
            }
        };
        out.defines.push(
            parse_define(&format!("{name}={value}"))
                .map_err(|e| ConfigError::Define(format!("defines: {e}")))?,
        );
    }
    let dir = path.and_then(Path::parent).unwrap_or(Path::new(""));
    out.include_dirs = c
        .include_dirs
        .iter()
        .flatten()
        .map(|d| dir.join(d))
        .collect();
    out.instantiate = c.instantiate.clone().unwrap_or_default();
    Ok(out)
}

/// A block shape from a list of one to three positive sizes, within
/// CUDA's limits ([`launch::block`]).
pub fn block(v: &[u64]) -> Result<Dims, ConfigError> {
    launch::listed(v, Part::Block)
        .and_then(launch::block)
        .map_err(|e| ConfigError::Shape(Part::Block, e))
}

/// A grid shape from a list of one to three positive sizes, within CUDA's
/// limits ([`launch::grid`]).
pub fn grid(v: &[u64]) -> Result<Dims, ConfigError> {
    launch::listed(v, Part::Grid)
        .and_then(launch::grid)
        .map_err(|e| ConfigError::Shape(Part::Grid, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_settings_and_user_metrics() {
        let c = parse(
            "metric = \"mine\"\nepsilon = 0.05\nblock = [128]\nat = { h = 4096 }\n\
             [hardware]\nwarp_size = 32\ntransaction_bytes = 128\nbanks = 32\nbank_bytes = 4\n",
        )
        .unwrap();
        assert_eq!(c.metric.as_deref(), Some("mine"));
        assert_eq!(c.block, Some(vec![128]));
        assert_eq!(c.hardware.unwrap().transaction_bytes, 128);
        let d = parse("metric = \"mine\"\n[metrics.mine]\nop = 2\n").unwrap();
        assert_eq!(d.user_metrics.len(), 1);
        assert_eq!(d.user_metrics[0].name, "mine");
        let n = parse("nvcc = \"tools/nvcc\"\nnvcc_flags = [\"-arch=sm_80\"]\n").unwrap();
        assert_eq!(n.nvcc, Some(PathBuf::from("tools/nvcc")));
        assert_eq!(n.nvcc_flags, Some(vec!["-arch=sm_80".to_string()]));
        let p = parse("defines = { N = \"1024\", B = 16, D = true }\ninclude_dirs = [\"inc\"]\n")
            .unwrap();
        let pre = preprocess(&p, Some(Path::new("proj/copper.toml"))).unwrap();
        assert_eq!(
            pre.command_line_text(),
            "#define B 16\n#define D 1\n#define N 1024\n"
        );
        assert_eq!(pre.include_dirs, [PathBuf::from("proj/inc")]);
        let bad = parse("defines = { N = [1] }").unwrap();
        assert!(preprocess(&bad, None).is_err());
        let l = parse("[lint]\ndisable = [\"divergent-branch\"]\n").unwrap();
        assert_eq!(
            l.lint.unwrap().disable,
            vec!["divergent-branch".to_string()]
        );
    }

    #[test]
    fn rejects_nonsense() {
        assert!(parse("epsilon = 2").is_err());
        assert!(parse("degree = 9").is_err());
        assert!(parse("block = [0]").is_err());
        assert!(parse("colour = \"red\"").is_err());
        assert!(parse("budget = -1").is_err());
        assert!(parse("[lint]\nignore = []").is_err());
    }

    /// A shape whose product wraps around 2^64 (to 4 threads) is refused,
    /// as on the command line and in parameter files.
    #[test]
    fn shapes_beyond_cuda_limits_are_refused() {
        let wraps = parse("block = [4611686018427387905, 4]")
            .unwrap_err()
            .to_string();
        assert!(wraps.contains("more than CUDA allows"), "{wraps}");
        assert!(parse("block = [2048]").is_err());
        assert!(parse("block = [32, 32, 128]").is_err());
        assert!(parse("grid = [1, 70000]").is_err());
        assert!(parse("block = [32, 32]\ngrid = [100000, 2]").is_ok());
        let zero = parse("block = [0, 1, 1]").unwrap_err().to_string();
        assert_eq!(
            zero,
            "block: the launch has 0 threads: block.x is 0 (every dimension is at least 1)"
        );
        let deep = parse("block = [1, 1, 65]").unwrap_err().to_string();
        assert!(deep.ends_with("(z = 65; at most 64)"), "{deep}");
    }
}
