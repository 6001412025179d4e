//! The search driver of `copper bench`: each kernel to time is searched
//! for a rewrite at the parameter file's launch, and its
//! [`KernelBench`] gets the rewrite (if one is better) and the note the
//! program prints about it. Choosing the kernels, sweeping launches and
//! writing the program and script are the command's.

use copper::cuda::parse::ParsedFile;
use copper::sim::params::{LaunchSpec, ShapeError};

use crate::bench::{optimized_name, KernelBench};
use crate::launch::launch_shape;
use crate::pipeline::{optimize_kernel, Cache, Settings};

/// Searches each of `kernels` (of `parsed`) for a rewrite under
/// `pipeline`, at its launch in `searched` (the parameter file's, in the
/// same order), and records the rewrite and what the program says of it;
/// a launch shape CUDA refuses is an error.
pub fn search_rewrites(
    parsed: &ParsedFile,
    kernels: &mut [KernelBench],
    searched: &[LaunchSpec],
    pipeline: &Settings,
) -> Result<(), ShapeError> {
    let cache = Cache::default();
    for (k, base) in kernels.iter_mut().zip(searched) {
        let shape = base.shape()?;
        let shape = launch_shape(
            Some(shape.block),
            Some(shape.grid),
            parsed,
            Some(base),
            &k.name,
        );
        match optimize_kernel(
            parsed,
            parsed,
            &k.name,
            Some(base),
            &shape,
            pipeline,
            &cache,
        ) {
            Ok(result) if result.improved() => {
                let applied: Vec<&str> = result.applied.iter().map(|x| x.transform).collect();
                k.note = format!(
                    "timed against {} ({})",
                    optimized_name(&k.name),
                    applied.join(", ")
                );
                k.optimized = Some(result.best.function.clone());
                k.swapped = result.best.lineage.relaunch.is_some();
            }
            Ok(result) => {
                k.note = match (result.unchecked(), &result.not_rewritten) {
                    (Some(why), _) => format!("unchecked: {why}; timed alone"),
                    (None, Some(why)) => format!("not rewritten: {why}; timed alone"),
                    (None, None) => {
                        "no suggestion: copper optimize found nothing faster; timed alone".into()
                    }
                }
            }
            Err(e) => {
                k.note = format!("no suggestion: the search failed ({e}); timed alone");
            }
        }
    }
    Ok(())
}
