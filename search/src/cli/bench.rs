//! `copper bench`: writes a CUDA program that times each kernel of a file
//! against copper's rewrite of it on the parameter file's inputs (see
//! `copper_search::bench`), and the script that builds it.

use std::path::Path;

use copper::cuda::ast::FnKind;
use copper::cuda::parse::{parse_path_with, ParsedFile};
use copper::sim::params::{LaunchSpec, ParamFile};
use copper_search::bench::sweep::{self, Sweep};
use copper_search::bench::{self, KernelBench, Options};
use copper_search::launch::{launch_shape, read_params};
use copper_search::pipeline::{optimize_kernel, Cache};

use super::args::BenchArgs;
use super::files::write_atomically;
use super::settings::resolve;

/// Runs `copper bench`; returns the exit status (0, or 2 on bad input).
pub fn run(a: &BenchArgs) -> u8 {
    match bench(a) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("copper: error: {e}");
            2
        }
    }
}

/// Refuses a kernel that uses identifiers the file does not define: the
/// program is the file as written, which nvcc cannot compile without them.
fn needs_no_symbols(parsed: &ParsedFile, name: &str) -> Result<(), String> {
    let Ok(k) = copper::ir::lower::lower_kernel(parsed, name) else {
        return Ok(());
    };
    match k.symbols.first() {
        None => Ok(()),
        Some(&v) => {
            let n = &k.vars[v].name;
            Err(format!(
                "`{name}` uses `{n}`, which the file does not define; the benchmark program is the file compiled by nvcc, so pass -D{n}=… (or set it in copper.toml's `defines`)"
            ))
        }
    }
}

fn bench(a: &BenchArgs) -> Result<(), String> {
    refuse_control_characters(&a.file)?;
    refuse_control_characters(&a.out)?;
    let pre = a.search.pre.resolve_found(a.search.config.as_deref())?;
    let parsed = parse_path_with(&a.file, &pre).map_err(|d| d.render())?;
    let params = read_params(&a.file, a.params.as_deref())
        .map_err(|e| e.to_string())?
        .ok_or_else(|| {
            format!(
                "{}: no parameter file (create {} or give --params)",
                a.file.display(),
                a.file.with_extension("toml").display()
            )
        })?;
    let params_name = a
        .params
        .clone()
        .unwrap_or_else(|| a.file.with_extension("toml"));
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
    let source_dir = source_dir
        .canonicalize()
        .map_err(|e| format!("{}: {e}", source_dir.display()))?;
    let flags = pre.compiler_flags();
    let opts = Options {
        runs: a.runs,
        warmup: a.warmup,
        build_line: build_line(&program_name, &source_dir, &flags, "nvcc", "native"),
    };
    // Bad launches fail here, before the search.
    bench::program(&parsed, &kernels, &opts)?;
    let r = resolve(&a.search, None, None, true)?;
    let cache = Cache::default();
    for (k, base) in kernels.iter_mut().zip(&searched) {
        let shape = base.shape()?;
        let shape = launch_shape(
            Some(shape.block),
            Some(shape.grid),
            &parsed,
            Some(base),
            &k.name,
        );
        match optimize_kernel(
            &parsed,
            &parsed,
            &k.name,
            Some(base),
            &shape,
            &r.settings,
            &cache,
        ) {
            Ok(result) if result.improved() => {
                let applied: Vec<&str> = result.applied.iter().map(|x| x.transform).collect();
                k.note = format!(
                    "timed against {} ({})",
                    bench::optimized_name(&k.name),
                    applied.join(", ")
                );
                k.optimized = Some(result.best.function.clone());
                k.swapped = result.best.lineage.relaunch.is_some();
            }
            Ok(_) => {
                k.note = "no suggestion: copper optimize found nothing faster; timed alone".into()
            }
            Err(e) => {
                k.note = format!("no suggestion: the search failed ({e}); timed alone");
            }
        }
    }
    let text = bench::program(&parsed, &kernels, &opts)?;
    std::fs::create_dir_all(&a.out).map_err(|e| format!("{}: {e}", a.out.display()))?;
    let cu = a.out.join(format!("{program_name}.cu"));
    let script = a.out.join(format!("build-{stem}.sh"));
    write_atomically(&cu, &text).map_err(|e| format!("{}: {e}", cu.display()))?;
    let build = build_line(
        &program_name,
        &source_dir,
        &flags,
        "\"${NVCC:-nvcc}\"",
        "\"${CUDA_ARCH:-native}\"",
    );
    let script_text = format!(
        "#!/bin/sh\n# Builds {program_name} (generated by `copper bench {}`).\n# NVCC=/path/to/nvcc and CUDA_ARCH=sm_90 override the defaults.\nset -eu\ncd \"$(dirname \"$0\")\"\n{build}\necho \"built $(pwd)/\"{}\": run it with [--runs N] [--warmup N] [--profile]\"\n",
        a.file.display(),
        shell_quote(&program_name)
    );
    write_atomically(&script, &script_text).map_err(|e| format!("{}: {e}", script.display()))?;
    make_executable(&script);
    for k in &kernels {
        println!("{}: {}", k.name, k.note);
    }
    println!("wrote {} and {}", cu.display(), script.display());
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
) -> Result<Vec<KernelBench>, String> {
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
            let why = format!("copper cannot read kernel `{name}`: {}", d.message);
            if only.is_some() {
                return Err(why);
            }
            eprintln!("copper: warning: {why}; left out");
            continue;
        }
        let spec: &LaunchSpec = params.kernel.get(name).ok_or_else(|| {
            format!(
                "kernel `{name}` is not in {} (add [kernel.{}] or choose kernels with --kernel)",
                params_name.display(),
                copper::sim::params::kernel_key(name)
            )
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
        return Err(match only {
            Some(k) => format!("no kernel named `{k}` in {}", parsed.source.path.display()),
            None => format!("no kernel to benchmark in {}", parsed.source.path.display()),
        });
    }
    Ok(out)
}

/// Replaces each kernel's launch by one per sweep value, for the kernels
/// that take the swept argument (at least one must).
fn sweep_launches(kernels: &mut [KernelBench], s: &Sweep) -> Result<(), String> {
    let mut swept = false;
    for k in kernels.iter_mut() {
        if k.launches[0].args.contains_key(&s.name) {
            k.launches = sweep::launches(&k.launches[0], s)
                .map_err(|e| format!("kernel `{}`: {e}", k.name))?;
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
    Err(format!(
        "--sweep: `{}` is not a scalar argument of the kernels benchmarked (arguments: {})",
        s.name,
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    ))
}

/// Refuses a path with a control character (a newline would start a new
/// line in the generated script and program).
fn refuse_control_characters(path: &Path) -> Result<(), String> {
    let text = path.to_string_lossy();
    if text.chars().any(char::is_control) {
        return Err(format!(
            "{}: the path has a control character; rename it for `copper bench`",
            text.escape_debug()
        ));
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

/// `s` as one shell word.
fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(unix)]
fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    // Not being able to set the mode leaves `sh build-….sh` working.
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755));
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_paths_for_the_shell() {
        assert_eq!(shell_quote("/a/b-c_d.e"), "/a/b-c_d.e");
        assert_eq!(shell_quote("/a b/it's"), "'/a b/it'\\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("$(touch x)"), "'$(touch x)'");
    }

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
