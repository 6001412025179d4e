//! How much of a folder of CUDA files copper understands: `__global__`
//! kernels found (a template kernel once per instantiation the file
//! launches), listed (parsed), lowered to the IR, and bounded per
//! metric (for a symbolic block, the hardest case, and where that gives no
//! bound, for the launch of the parameter file beside it, counted apart),
//! each file with the
//! `defines` and `include_dirs` of a `copper.toml` beside it. Over `testdata/` every
//! kernel must get through every stage, and a small folder built by the test
//! checks that each stage is counted where a kernel is lost.
//!
//! `cargo test --release --test coverage -- --nocapture` prints the table
//! for `testdata/`; `COPPER_COVERAGE_DIR=path cargo test --release --test
//! coverage -- --ignored --nocapture` prints it for any other folder (a
//! user's project, a course's kernels).

use std::path::{Path, PathBuf};
use std::time::Duration;

use copper::bound::{prepare, Config, Outcome};
use copper::cost::{Metric, BUILTIN_METRICS};
use copper::cuda::ast::FnKind;
use copper::cuda::excerpt::Excerpts;
use copper::cuda::include::{Define, Preprocess};
use copper::cuda::parse::parse_path_with;
use copper::ir::lower::lower_kernel;
use copper::sim::params::ParamFile;

/// Counts per stage.
#[derive(Default, Debug)]
struct Coverage {
    files: usize,
    unreadable_files: usize,
    found: usize,
    listed: usize,
    lowered: usize,
    bounded: Vec<usize>,
    /// Of `bounded`, those bounded only at the parameter file's launch.
    at_launch: Vec<usize>,
    /// Which: file, kernel and metric.
    only_at_launch: Vec<String>,
    /// The first reasons kernels were lost, with their location.
    lost: Vec<String>,
}

/// `.cu`/`.cuh` files below `dir`, sorted, leaving out folders named `bad`.
fn cuda_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        let meta = std::fs::symlink_metadata(&p);
        if meta.as_ref().is_ok_and(|m| m.is_dir()) {
            if p.file_name().is_some_and(|n| n != "bad") {
                cuda_files(&p, out);
            }
        } else if meta.is_ok_and(|m| m.is_file())
            && p.extension().is_some_and(|x| x == "cu" || x == "cuh")
        {
            out.push(p);
        }
    }
}

/// Whether `file` is a header (`.cuh`, `.h`), read here alone as well
/// as through the files that include it.
fn is_header(file: &Path) -> bool {
    file.extension().is_some_and(|x| x == "cuh" || x == "h")
}

/// The `-D`/`-I` settings of the `copper.toml` beside `file`, as a user
/// of that folder has them (`defines`, `include_dirs`).
fn preprocess_of(file: &Path) -> Preprocess {
    let dir = file.parent().unwrap_or(Path::new("."));
    let Ok(text) = std::fs::read_to_string(dir.join("copper.toml")) else {
        return Preprocess::default();
    };
    let table: toml::Table = toml::from_str(&text).expect("a valid copper.toml");
    let mut p = Preprocess::default();
    if let Some(toml::Value::Table(d)) = table.get("defines") {
        for (k, v) in d {
            let v = match v {
                toml::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            p.defines.push(Define::Set(k.clone(), v));
        }
    }
    if let Some(toml::Value::Array(dirs)) = table.get("include_dirs") {
        p.include_dirs
            .extend(dirs.iter().filter_map(|d| d.as_str()).map(|d| dir.join(d)));
    }
    p
}

/// The block and grid of kernel `name` in the parameter file beside
/// `file` (`X.toml` for `X.cu`), if it has one.
fn launch_of(file: &Path, name: &str) -> Option<(copper::launch::Dims, copper::launch::Dims)> {
    let text = std::fs::read_to_string(file.with_extension("toml")).ok()?;
    let params = ParamFile::from_toml(&text).ok()?;
    let shape = params.kernel.get(name)?.shape().ok()?;
    Some((shape.block(), shape.grid()))
}

fn measure(dir: &Path) -> Coverage {
    let metrics: Vec<Metric> = BUILTIN_METRICS
        .iter()
        .map(|m| Metric::builtin(m).expect("built-in"))
        .collect();
    let mut c = Coverage {
        bounded: vec![0; metrics.len()],
        at_launch: vec![0; metrics.len()],
        only_at_launch: Vec::new(),
        ..Coverage::default()
    };
    let mut files = Vec::new();
    cuda_files(dir, &mut files);
    for f in files {
        c.files += 1;
        let parsed = match parse_path_with(&f, &preprocess_of(&f)) {
            Ok(p) => p,
            Err(d) => {
                c.unreadable_files += 1;
                c.lost.push(d.render());
                continue;
            }
        };
        let never_instantiated = parsed.uninstantiated();
        for item in parsed
            .functions
            .iter()
            .filter(|f| f.item.kind == FnKind::Global)
        {
            // A template kernel counts by its instantiations.
            if let Ok(k) = &item.result {
                if k.is_uninstantiated() && !never_instantiated.iter().any(|u| std::ptr::eq(*u, k))
                {
                    continue;
                }
                // A header read alone does not instantiate its templates:
                // the file including it does, and counts them.
                if k.is_uninstantiated() && is_header(&f) {
                    continue;
                }
            }
            c.found += 1;
            if let Err(d) = &item.result {
                c.lost.push(d.render());
                continue;
            }
            c.listed += 1;
            let kernel = match lower_kernel(&parsed, &item.item.name) {
                Ok(k) => k,
                Err(d) => {
                    c.lost.push(d.render());
                    continue;
                }
            };
            // `optimize` searches on the kernel's excerpt of its file: it
            // must read the kernel as the whole file does.
            let excerpt = Excerpts::new(&parsed).kernel(&item.item.name);
            if let Some(Err(d)) = excerpt.as_ref().map(|e| lower_kernel(e, &item.item.name)) {
                c.lost
                    .push(format!("in the kernel's excerpt: {}", d.render()));
                continue;
            }
            c.lowered += 1;
            let config = Config {
                budget: Duration::from_secs(10),
                ..Config::default()
            };
            let prepared = prepare(&kernel, config);
            // A grid-stride loop over an unsigned counter needs its stride:
            // the launch a user gives.
            let launched = launch_of(&f, &item.item.name).map(|(block, grid)| {
                prepare(
                    &kernel,
                    Config {
                        block: Some(block),
                        grid: Some(grid),
                        ..config
                    },
                )
            });
            for (i, m) in metrics.iter().enumerate() {
                let at_launch = || launched.as_ref().map(|p| p.bound(m).work);
                match prepared.bound(m).work {
                    Outcome::Bound(_) => c.bounded[i] += 1,
                    Outcome::NoBound(..) if matches!(at_launch(), Some(Outcome::Bound(_))) => {
                        c.bounded[i] += 1;
                        c.at_launch[i] += 1;
                        c.only_at_launch.push(format!(
                            "{}: kernel {}: {}",
                            f.display(),
                            item.item.name,
                            m.name
                        ));
                    }
                    Outcome::NoBound(why, _) => c.lost.push(format!(
                        "{}: kernel {}: no {} bound: {why}",
                        f.display(),
                        item.item.name,
                        m.name
                    )),
                }
            }
        }
    }
    c
}

fn print(dir: &Path, c: &Coverage) {
    eprintln!(
        "{}: {} files ({} unreadable), {} kernels found, {} listed, {} lowered",
        dir.display(),
        c.files,
        c.unreadable_files,
        c.found,
        c.listed,
        c.lowered
    );
    for ((m, n), l) in BUILTIN_METRICS.iter().zip(&c.bounded).zip(&c.at_launch) {
        eprintln!("  bounded for {m:<10} {n} ({l} only at the parameter file's launch)");
    }
    for l in c.lost.iter().take(40) {
        eprintln!("  lost: {}", l.lines().next().unwrap_or(""));
    }
}

#[test]
fn every_testdata_kernel_is_listed_lowered_and_bounded() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let c = measure(&dir);
    print(&dir, &c);
    assert!(c.found >= 50, "only {} kernels in testdata", c.found);
    assert_eq!(c.unreadable_files, 0, "{:?}", c.lost);
    assert_eq!(c.listed, c.found, "{:?}", c.lost);
    assert_eq!(c.lowered, c.found, "{:?}", c.lost);
    for (m, n) in BUILTIN_METRICS.iter().zip(&c.bounded) {
        assert_eq!(*n, c.found, "{m}: {:?}", c.lost);
    }
    // Grid-stride loops over unsigned counters are bounded without their
    // launch too (under a printed assumption on the grid where their
    // stride is 32-bit), and so are loops stepped by a cooperative group's
    // size, a product of launch dimensions (`block.size()`,
    // `grid.size()`): a quotient of the grid's threads, or a logarithm of
    // the block's. No testdata kernel needs its launch to be bounded.
    const NEEDS_LAUNCH: [&str; 0] = [];
    let unexpected: Vec<&String> = c
        .only_at_launch
        .iter()
        .filter(|l| !NEEDS_LAUNCH.iter().any(|k| l.contains(k)))
        .collect();
    assert!(unexpected.is_empty(), "{unexpected:?}");
}

/// Each stage is counted where it is lost: a folder with one kernel that
/// gets through every stage, one that does not parse, and a file that
/// cannot be read.
#[test]
fn each_stage_is_counted() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    std::fs::create_dir_all(dir.join("bad")).unwrap();
    std::fs::write(
        dir.join("mixed.cu"),
        "__global__ void bad(int *a) { a[0] = ; }\n\
         __global__ void good(int *a, int n) {\n\
             int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
             if (i < n) a[i] = 0;\n\
         }\n",
    )
    .unwrap();
    std::fs::write(dir.join("missing.cu"), "#include \"nowhere.h\"\n").unwrap();
    // Folders named `bad` are left out.
    std::fs::write(dir.join("bad/skipped.cu"), "__global__ void k() {}\n").unwrap();
    let c = measure(dir);
    print(dir, &c);
    assert_eq!(c.files, 2, "{c:?}");
    assert_eq!(c.found, 2, "{c:?}");
    assert_eq!(c.listed, 1, "{c:?}");
    assert_eq!(c.lowered, 1, "{c:?}");
    assert_eq!(c.bounded, vec![1; BUILTIN_METRICS.len()], "{c:?}");
}

/// `COPPER_COVERAGE_DIR=path cargo test --release --test coverage --
/// --ignored --nocapture` prints the table for any folder; it asserts only
/// that the folder holds CUDA files and that no stage counts more kernels
/// than the one before it.
#[test]
#[ignore = "needs COPPER_COVERAGE_DIR=path; run with --ignored"]
fn coverage_of_another_folder() {
    let dir = PathBuf::from(
        std::env::var_os("COPPER_COVERAGE_DIR").expect("set COPPER_COVERAGE_DIR to a folder"),
    );
    let c = measure(&dir);
    print(&dir, &c);
    assert!(c.files > 0, "no .cu or .cuh files in {}", dir.display());
    assert!(c.listed <= c.found && c.lowered <= c.listed, "{c:?}");
    assert!(c.bounded.iter().all(|&n| n <= c.lowered), "{c:?}");
}
