//! The driver of `copper params`: the kernels whose parameters copper
//! writes (the user's file's kernels and instantiations, not its
//! headers') and each one's test launch ([`test_launch`]: the parameter
//! file's, the host code's, or one inferred from the kernel). Writing it
//! as TOML with comments is the command's.

use copper::cuda::include::in_user_file;
use copper::cuda::parse::ParsedFile;
use copper::diag::Diagnostic;
use copper::ir::lower::lower_kernel;
use copper::sim::params::ParamFile;

use crate::launch::{test_launch, TestedLaunch};

/// The kernels of the user's file in `parsed` (only the one named
/// `only`, if given; a template only by its instantiations), in file
/// order.
pub fn kernel_names(parsed: &ParsedFile, only: Option<&str>) -> Vec<String> {
    parsed
        .functions
        .iter()
        .filter(|f| in_user_file(f.item.span))
        .filter_map(|f| f.result.as_ref().ok())
        .filter(|f| f.is_kernel() && !f.is_uninstantiated())
        .filter(|f| only.is_none_or(|n| n == f.name))
        .map(|f| f.name.clone())
        .collect()
}

/// The test launch of kernel `name` of `parsed`, its launch in `params`
/// first; the diagnostic that stops the kernel from being lowered.
pub fn kernel_launch(
    parsed: &ParsedFile,
    name: &str,
    params: Option<&ParamFile>,
) -> Result<TestedLaunch, Diagnostic> {
    let kernel = lower_kernel(parsed, name)?;
    let spec = params.and_then(|p| p.kernel.get(name));
    Ok(test_launch(parsed, &kernel, spec))
}
