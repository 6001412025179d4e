//! The `--at` check: every name it gives a value must be a scalar
//! parameter of a kernel searched, or a launch dimension.

use std::collections::BTreeMap;

use copper::cuda::ast::Function;

/// `--at` names that are no scalar parameter of the kernels searched.
#[derive(Debug, thiserror::Error)]
#[error("--at: {names} is not a scalar parameter of the kernels searched (parameters: {known})")]
pub struct UnknownAt {
    /// The names, quoted.
    names: String,
    /// The kernels' scalar parameters (or "none").
    known: String,
}

/// Refuses `--at` names that are no scalar parameter of any kernel
/// searched (nor a launch dimension such as `blockDim.x`): a misspelled
/// name would leave every bound unevaluated, and nothing would improve.
pub(super) fn check_at_names<'a>(
    values: &BTreeMap<String, f64>,
    searched: impl Iterator<Item = &'a Function>,
) -> Result<(), UnknownAt> {
    let mut known: Vec<String> = Vec::new();
    let mut any = false;
    for f in searched {
        any = true;
        known.extend(
            f.params
                .iter()
                .filter(|p| p.ty.pointers.is_empty() && p.dims.is_empty())
                .map(|p| p.name.clone()),
        );
    }
    known.sort();
    known.dedup();
    let launch_dimension = |n: &str| {
        ["blockDim.", "gridDim."].iter().any(|p| {
            n.strip_prefix(p)
                .is_some_and(|c| ["x", "y", "z"].contains(&c))
        })
    };
    let unknown: Vec<&str> = values
        .keys()
        .map(String::as_str)
        .filter(|n| !known.iter().any(|k| k == n) && !launch_dimension(n))
        .collect();
    if unknown.is_empty() || !any {
        return Ok(());
    }
    Err(UnknownAt {
        names: unknown
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", "),
        known: if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        },
    })
}
