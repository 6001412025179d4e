//! The search driver of `copper bench`: each kernel to time is searched
//! for a rewrite at the parameter file's launch, and its
//! [`KernelBench`] gets the rewrite (if one is better) and the note the
//! program prints about it. Before that, the kernels to time are chosen
//! ([`select`]: those the parameter file launches, which copper can read
//! and nvcc compile as written) and, with `--sweep`, their launches
//! multiplied ([`sweep_launches`]). Writing the program and script is the
//! command's.

use copper::shown::Shown;
use std::path::{Path, PathBuf};

use copper::cuda::ast::FnKind;
use copper::cuda::parse::ParsedFile;
use copper::launch::ShapeError;
use copper::sim::params::{LaunchSpec, ParamFile};

use crate::bench::sweep::{self, Sweep};
use crate::bench::{optimized_name, KernelBench, SweepError};
use crate::launch::launch_shape;
use crate::pipeline::{optimize_kernel, Cache, Settings};

/// Why the kernels to time cannot be chosen, or their launches swept.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChoiceError {
    /// A kernel copper cannot read.
    #[error("copper cannot read kernel `{kernel}`: {message}")]
    Kernel {
        /// The kernel.
        kernel: String,
        /// The diagnostic's message.
        message: String,
    },
    /// A kernel the parameter file does not launch.
    #[error("kernel `{kernel}` is not in {} (add [kernel.{}] or choose kernels with --kernel)", params.shown(), copper::sim::params::kernel_key(kernel))]
    NotInParams {
        /// The kernel.
        kernel: String,
        /// The parameter file.
        params: PathBuf,
    },
    /// `--kernel` names no kernel of the file.
    #[error("no kernel named `{kernel}` in {}", file.shown())]
    NoKernel {
        /// The name given.
        kernel: String,
        /// The file.
        file: PathBuf,
    },
    /// The file has no kernel to time.
    #[error("no kernel to benchmark in {}", .0.shown())]
    NoKernels(PathBuf),
    /// A kernel uses a name the file does not define.
    #[error("`{kernel}` uses `{name}`, which the file does not define; the benchmark program is the file compiled by nvcc, so pass -D{name}=… (or set it in copper.toml's `defines`)")]
    Undefined {
        /// The kernel.
        kernel: String,
        /// The name.
        name: String,
    },
    /// A kernel's launches cannot be swept.
    #[error("kernel `{kernel}`: {source}")]
    Sweep {
        /// The kernel.
        kernel: String,
        /// Why.
        source: SweepError,
    },
    /// No kernel takes the swept argument.
    #[error("--sweep: `{name}` is not a scalar argument of the kernels benchmarked (arguments: {arguments})")]
    NotSwept {
        /// The argument.
        name: String,
        /// The kernels' scalar arguments (or "none").
        arguments: String,
    },
}

/// The kernels chosen for timing.
pub struct Chosen {
    /// Each with the parameter file's launch.
    pub kernels: Vec<KernelBench>,
    /// The kernels copper cannot read, left out.
    pub left_out: Vec<ChoiceError>,
}

/// Refuses a kernel that uses identifiers the file does not define: the
/// program is the file as written, which nvcc cannot compile without them.
fn needs_no_symbols(parsed: &ParsedFile, name: &str) -> Result<(), ChoiceError> {
    let Ok(k) = copper::ir::lower::lower_kernel(parsed, name) else {
        return Ok(());
    };
    match k.symbols.first() {
        None => Ok(()),
        Some(&v) => Err(ChoiceError::Undefined {
            kernel: name.to_string(),
            name: k.vars[v].name.clone(),
        }),
    }
}

/// The kernels of `parsed` to benchmark (only the one named `only`, if
/// given), each with its launch in `params` (read from `params_name`).
/// Kernels copper cannot read are left out (unless named), and said to
/// be; a kernel that uses a name the file does not define is an error.
pub fn select(
    parsed: &ParsedFile,
    params: &ParamFile,
    only: Option<&str>,
    params_name: &Path,
) -> Result<Chosen, ChoiceError> {
    let only = only.map(|k| parsed.kernel_name(k));
    let only = only.as_deref();
    let mut out = Vec::new();
    let mut left_out = Vec::new();
    for f in parsed
        .functions
        .iter()
        .filter(|f| f.item.kind == FnKind::Global && only.is_none_or(|k| k == f.item.name))
        // A template kernel is benchmarked by its instantiations.
        .filter(|f| f.result.as_ref().map_or(true, |k| !k.is_uninstantiated()))
    {
        let name = &f.item.name;
        if let Err(d) = &f.result {
            let why = ChoiceError::Kernel {
                kernel: name.clone(),
                message: d.message.clone(),
            };
            if only.is_some() {
                return Err(why);
            }
            left_out.push(why);
            continue;
        }
        let spec: &LaunchSpec =
            params
                .kernel
                .get(name)
                .ok_or_else(|| ChoiceError::NotInParams {
                    kernel: name.clone(),
                    params: params_name.to_path_buf(),
                })?;
        out.push(KernelBench {
            name: name.clone(),
            optimized: None,
            reshape: None,
            note: String::new(),
            launches: vec![spec.clone()],
        });
    }
    if out.is_empty() {
        let file = parsed.source.path.clone();
        return Err(match only {
            Some(k) => ChoiceError::NoKernel {
                kernel: k.to_string(),
                file,
            },
            None => ChoiceError::NoKernels(file),
        });
    }
    for k in &out {
        needs_no_symbols(parsed, &k.name)?;
    }
    Ok(Chosen {
        kernels: out,
        left_out,
    })
}

/// Replaces each kernel's launch by one per sweep value, for the kernels
/// that take the swept argument (at least one must).
pub fn sweep_launches(kernels: &mut [KernelBench], s: &Sweep) -> Result<(), ChoiceError> {
    let mut swept = false;
    for k in kernels.iter_mut() {
        if k.launches[0].args.contains_key(&s.name) {
            k.launches =
                sweep::launches(&k.launches[0], s).map_err(|source| ChoiceError::Sweep {
                    kernel: k.name.clone(),
                    source,
                })?;
            swept = true;
        }
    }
    if swept {
        return Ok(());
    }
    let mut names: Vec<&str> = kernels
        .iter()
        .flat_map(|k| k.launches[0].args.keys().map(String::as_str))
        .collect();
    names.sort_unstable();
    names.dedup();
    Err(ChoiceError::NotSwept {
        name: s.name.clone(),
        arguments: if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        },
    })
}

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
            Some(shape.block()),
            Some(shape.grid()),
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
                k.reshape = result.best.lineage.reshape();
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
