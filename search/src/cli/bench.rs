//! `copper bench`: writes a CUDA program that times each kernel of a file
//! against copper's rewrite of it on the parameter file's inputs (see
//! `copper_search::bench`), and the script that builds it. Choosing the
//! kernels, sweeping their launches and the search for each one's
//! rewrite are the bench driver's ([`copper_search::driver::bench`]).

use copper::shown::{shell_quote, Shown};
use std::path::{Path, PathBuf};

use copper::cuda::parse::parse_path_with;
use copper::launch::ShapeError;
use copper::sim::params::LaunchSpec;
use copper_search::bench::{self, BenchError, Options};
use copper_search::driver::bench::{search_rewrites, select, sweep_launches, ChoiceError};
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
    /// The kernels to time cannot be chosen, or their launches swept.
    #[error(transparent)]
    Choice(#[from] ChoiceError),
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
    let chosen = select(&parsed, &params, a.kernel.as_deref(), &params_name)?;
    for why in &chosen.left_out {
        eprintln!("copper: warning: {why}; left out");
    }
    let mut kernels = chosen.kernels;
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
