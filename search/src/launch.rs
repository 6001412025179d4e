//! Where a kernel's launch shape and test inputs come from: the command
//! line, the file's own `<<<grid, block>>>` launches, or the parameter
//! file next to it.

use std::path::Path;

use copper::cuda::parse::ParsedFile;
use copper::sim::params::{LaunchSpec, ParamFile};

/// A kernel's launch shape and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Block shape, when known.
    pub block: Option<[u64; 3]>,
    /// Grid shape, when known.
    pub grid: Option<[u64; 3]>,
    /// Where it came from, for people ("the launch at line 40").
    pub source: String,
}

/// The launch shape of kernel `name`: the command line (`block`, `grid`),
/// else every literal launch site of the file (when they agree), else the
/// parameter file's entry `spec`.
pub fn launch_shape(
    block: Option<[u64; 3]>,
    grid: Option<[u64; 3]>,
    parsed: &ParsedFile,
    spec: Option<&LaunchSpec>,
    name: &str,
) -> Shape {
    if block.is_some() || grid.is_some() {
        return Shape {
            block,
            grid,
            source: "command line".into(),
        };
    }
    let sites: Vec<_> = parsed
        .launches
        .iter()
        .filter(|l| l.kernel == name && l.block.is_some())
        .collect();
    if let Some(first) = sites.first() {
        if sites.iter().all(|l| l.block == first.block) {
            let (line, _) = parsed.source.line_col(first.span.start);
            let grid = first
                .grid
                .filter(|_| sites.iter().all(|l| l.grid == first.grid));
            return Shape {
                block: first.block,
                grid,
                source: format!("the launch at line {line}"),
            };
        }
    }
    if let Some(s) = spec.and_then(|s| s.shape().ok()) {
        return Shape {
            block: Some(s.block),
            grid: Some(s.grid),
            source: "the parameter file".into(),
        };
    }
    Shape {
        block: None,
        grid: None,
        source: "no launch shape known: bounds hold for any block".into(),
    }
}

/// The parameter file of `file`: `explicit` when given (an error when it
/// cannot be read), else `file` with the extension `.toml` when it exists.
pub fn read_params(file: &Path, explicit: Option<&Path>) -> Result<Option<ParamFile>, String> {
    let path = explicit.map_or_else(|| file.with_extension("toml"), Path::to_path_buf);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(_) if explicit.is_none() => return Ok(None),
        Err(e) => {
            return Err(format!(
                "{}: cannot read parameter file: {e}",
                path.display()
            ))
        }
    };
    ParamFile::from_toml(&text)
        .map(Some)
        .map_err(|e| format!("{}: invalid parameter file: {e}", path.display()))
}

/// `X×Y×Z`
pub fn dims(d: [u64; 3]) -> String {
    format!("{}×{}×{}", d[0], d[1], d[2])
}

/// Checks a parameter file's launch of `kernel` as the simulator reads it
/// (shape, every argument given and in its type's range, every array
/// described), without filling any array, and whatever its size (a
/// benchmark runs on a GPU, beyond what the simulator takes).
pub fn check_launch(kernel: &copper::ir::Kernel, spec: &LaunchSpec) -> Result<(), String> {
    spec.shape()?;
    let mut empty = spec.clone();
    empty.grid = vec![1, 1, 1];
    for a in empty.arrays.values_mut() {
        a.len = 0;
    }
    copper::sim::inputs_from_spec(kernel, &empty).map(drop)
}
