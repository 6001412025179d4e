//! `copper bench`: writes a CUDA program that times each kernel of a file
//! against copper's rewrite of it on the parameter file's inputs (see
//! `copper_search::bench`), and the script that builds it. The search
//! for each kernel's rewrite is the bench driver's
//! ([`copper_search::driver::bench`]).

use copper::shown::{shell_quote, Shown};
use std::path::{Path, PathBuf};

use copper::cuda::ast::FnKind;
use copper::cuda::parse::{parse_path_with, ParsedFile};
use copper::sim::params::{LaunchSpec, ParamFile, ShapeError};
use copper_search::bench::sweep::{self, Sweep};
use copper_search::bench::{self, BenchError, KernelBench, Options, SweepError};
use copper_search::driver::bench::search_rewrites;
use copper_search::launch::ParamsError;

use super::args::BenchArgs;
use super::files::write_new;
use super::settings::Settings;

/// Runs `copper bench`; returns the exit status (0, or 2 on bad input).
pub fn run(a: &BenchArgs, s: &Settings) -> u8 {
    match bench(a, s) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("copper: error: {e}");
            2
        }
    }
}

/// Why `copper bench` writes nothing; each message is printed after
/// `copper: error: `.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
enum Error {
    /// The settings lack the search (not a user error).
    #[error("internal error: no search settings")]
    NoSearch,
    /// A path with a control character.
    #[error("{0}: the path has a control character; rename it for `copper bench`")]
    ControlCharacter(String),
    /// The file cannot be read (the diagnostic, rendered).
    #[error("{0}")]
    Unreadable(String),
    /// The parameter file cannot be used.
    #[error(transparent)]
    Params(#[from] ParamsError),
    /// There is no parameter file.
    #[error("{}: no parameter file (create {} or give --params)", .0.shown(), .0.with_extension("toml").shown())]
    NoParams(PathBuf),
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
    /// A launch shape CUDA refuses.
    #[error(transparent)]
    Shape(#[from] ShapeError),
    /// The program cannot be generated.
    #[error(transparent)]
    Program(#[from] BenchError),
    /// The output directory is a symbolic link.
    #[error("{}: is a symbolic link; copper bench writes into a directory, not through a link (give --out the directory itself)", .0.shown())]
    LinkedOut(PathBuf),
    /// A file or directory cannot be read or written.
    #[error("{}: {source}", path.shown())]
    Io {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// An I/O error at `path`.
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Refuses a kernel that uses identifiers the file does not define: the
/// program is the file as written, which nvcc cannot compile without them.
fn needs_no_symbols(parsed: &ParsedFile, name: &str) -> Result<(), Error> {
    let Ok(k) = copper::ir::lower::lower_kernel(parsed, name) else {
        return Ok(());
    };
    match k.symbols.first() {
        None => Ok(()),
        Some(&v) => Err(Error::Undefined {
            kernel: name.to_string(),
            name: k.vars[v].name.clone(),
        }),
    }
}

fn bench(a: &BenchArgs, s: &Settings) -> Result<(), Error> {
    let search = s.search.as_ref().ok_or(Error::NoSearch)?;
    refuse_control_characters(&a.file)?;
    refuse_control_characters(&a.out)?;
    let parsed =
        parse_path_with(&a.file, &s.preprocess).map_err(|d| Error::Unreadable(d.render()))?;
    let params = s
        .params
        .of(&a.file)?
        .ok_or_else(|| Error::NoParams(a.file.clone()))?;
    let params_name = s.params.path(&a.file);
    let mut kernels = select(&parsed, &params, a.kernel.as_deref(), &params_name)?;
    for k in &kernels {
        needs_no_symbols(&parsed, &k.name)?;
    }
    // The search runs at the parameter file's sizes, whatever is swept.
    let searched: Vec<LaunchSpec> = kernels.iter().map(|k| k.launches[0].clone()).collect();
    if let Some(s) = &a.sweep {
        sweep_launches(&mut kernels, s)?;
    }
    let stem = a
        .file
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "kernels".into());
    let program_name = format!("{stem}_bench");
    let source_dir = a
        .file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let source_dir = source_dir.canonicalize().map_err(io(source_dir))?;
    let flags = s.preprocess.compiler_flags();
    let opts = Options {
        runs: a.runs,
        warmup: a.warmup,
        build_line: build_line(&program_name, &source_dir, &flags, "nvcc", "native"),
    };
    // Bad launches fail here, before the search.
    bench::program(&parsed, &kernels, &opts)?;
    search_rewrites(&parsed, &mut kernels, &searched, &search.pipeline)?;
    let text = bench::program(&parsed, &kernels, &opts)?;
    output_dir(&a.out)?;
    let cu = a.out.join(format!("{program_name}.cu"));
    let script = a.out.join(format!("build-{stem}.sh"));
    write_new(&cu, &text, false).map_err(io(&cu))?;
    let build = build_line(
        &program_name,
        &source_dir,
        &flags,
        "\"${NVCC:-nvcc}\"",
        "\"${CUDA_ARCH:-native}\"",
    );
    let script_text = format!(
        "#!/bin/sh\n# Builds {program_name} (generated by `copper bench {}`).\n# NVCC=/path/to/nvcc and CUDA_ARCH=sm_90 override the defaults.\nset -eu\ncd \"$(dirname \"$0\")\"\n{build}\necho \"built $(pwd)/\"{}\": run it with [--runs N] [--warmup N] [--profile]\"\n",
        a.file.shown(),
        shell_quote(&program_name)
    );
    write_new(&script, &script_text, true).map_err(io(&script))?;
    for k in &kernels {
        println!("{}: {}", k.name, k.note);
    }
    println!("wrote {} and {}", cu.shown(), script.shown());
    println!(
        "build: (cd {} && {})",
        shell_quote(&a.out.to_string_lossy()),
        opts.build_line
    );
    Ok(())
}

/// The kernels to benchmark, each with the parameter file's launch.
/// Kernels copper cannot read are left out with a warning unless named.
fn select(
    parsed: &ParsedFile,
    params: &ParamFile,
    only: Option<&str>,
    params_name: &Path,
) -> Result<Vec<KernelBench>, Error> {
    let only = only.map(|k| parsed.kernel_name(k));
    let only = only.as_deref();
    let mut out = Vec::new();
    for f in parsed
        .functions
        .iter()
        .filter(|f| f.item.kind == FnKind::Global && only.is_none_or(|k| k == f.item.name))
        // A template kernel is benchmarked by its instantiations.
        .filter(|f| f.result.as_ref().map_or(true, |k| !k.is_uninstantiated()))
    {
        let name = &f.item.name;
        if let Err(d) = &f.result {
            let why = Error::Kernel {
                kernel: name.clone(),
                message: d.message.clone(),
            };
            if only.is_some() {
                return Err(why);
            }
            eprintln!("copper: warning: {why}; left out");
            continue;
        }
        let spec: &LaunchSpec = params.kernel.get(name).ok_or_else(|| Error::NotInParams {
            kernel: name.clone(),
            params: params_name.to_path_buf(),
        })?;
        out.push(KernelBench {
            name: name.clone(),
            optimized: None,
            swapped: false,
            note: String::new(),
            launches: vec![spec.clone()],
        });
    }
    if out.is_empty() {
        let file = parsed.source.path.clone();
        return Err(match only {
            Some(k) => Error::NoKernel {
                kernel: k.to_string(),
                file,
            },
            None => Error::NoKernels(file),
        });
    }
    Ok(out)
}

/// Replaces each kernel's launch by one per sweep value, for the kernels
/// that take the swept argument (at least one must).
fn sweep_launches(kernels: &mut [KernelBench], s: &Sweep) -> Result<(), Error> {
    let mut swept = false;
    for k in kernels.iter_mut() {
        if k.launches[0].args.contains_key(&s.name) {
            k.launches = sweep::launches(&k.launches[0], s).map_err(|source| Error::Sweep {
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
    Err(Error::NotSwept {
        name: s.name.clone(),
        arguments: if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        },
    })
}

/// Creates the output directory, or checks the one there: a directory,
/// not a link to one (a link planted in a checkout would send the files
/// elsewhere).
fn output_dir(out: &Path) -> Result<(), Error> {
    match std::fs::symlink_metadata(out) {
        Ok(m) if m.file_type().is_symlink() => Err(Error::LinkedOut(out.to_path_buf())),
        Ok(m) if !m.is_dir() => Err(Error::Io {
            path: out.to_path_buf(),
            source: std::io::Error::other("not a directory"),
        }),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(out).map_err(io(out))
        }
        Err(e) => Err(io(out)(e)),
    }
}

/// Refuses a path with a control character (a newline would start a new
/// line in the generated script and program).
fn refuse_control_characters(path: &Path) -> Result<(), Error> {
    let text = path.to_string_lossy();
    if text.chars().any(char::is_control) {
        return Err(Error::ControlCharacter(text.escape_debug().to_string()));
    }
    Ok(())
}

/// The nvcc command that builds the program, run in its directory, with
/// the `-D`/`-U`/`-I` flags the file was read with; every name in it is
/// one quoted shell word (`nvcc` and `arch` are the caller's own shell
/// text).
fn build_line(
    program: &str,
    source_dir: &Path,
    flags: &[String],
    nvcc: &str,
    arch: &str,
) -> String {
    let flags: String = flags
        .iter()
        .map(|f| format!(" {}", shell_quote(f)))
        .collect();
    format!(
        "{nvcc} -O3 -std=c++17 -arch={arch} -lineinfo -Xcompiler -ffp-contract=off{flags} -I {} -o {} {}",
        shell_quote(&source_dir.to_string_lossy()),
        shell_quote(program),
        shell_quote(&format!("{program}.cu"))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_line_quotes_the_program_name() {
        let line = build_line(
            "$(touch PWNED)_bench",
            Path::new("/d"),
            &["-DN=1 2".to_string()],
            "nvcc",
            "native",
        );
        assert!(
            line.contains("-o '$(touch PWNED)_bench' '$(touch PWNED)_bench.cu'"),
            "{line}"
        );
        assert!(line.contains(" '-DN=1 2' -I /d "), "{line}");
    }
}
