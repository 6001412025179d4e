//! Every kernel copper prints compiles with NVIDIA's compiler: the
//! `testdata/` files themselves, what `copper optimize --write` makes of
//! them (every transform represented), the rewrites recorded in `golden/`,
//! every `copper fmt --whole` reprint, the candidates and suggestions
//! `optimize` checks but seldom writes (per-warp shuffle reductions,
//! read-only `const __restrict__`), and every program `copper bench`
//! writes, linked against the CUDA runtime (`-cudart static`). All with `-arch=sm_90 -Werror
//! all-warnings`; no GPU is needed.
//!
//! nvcc is taken from `$COPPER_NVCC`, else from `PATH`
//! (`scripts/install-nvcc.sh` installs one from PyPI). Without one the
//! tests print why and pass, except under `COPPER_REQUIRE_NVCC=1` (CI),
//! where a missing compiler fails them.

mod common;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use common::{copper_in, root, text, Scratch};
use rewrites::proposed;

/// The flags every compilation gets.
const FLAGS: &[&str] = &["-arch=sm_90", "-Werror", "all-warnings", "-std=c++17"];

/// The compiler, or `None` (with the reason printed) when the tests
/// should be skipped.
fn nvcc() -> Option<PathBuf> {
    let program = std::env::var_os("COPPER_NVCC")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("nvcc"));
    let works = Command::new(&program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if works {
        return Some(program);
    }
    let why = format!(
        "{} does not run (install one with scripts/install-nvcc.sh and put it on PATH)",
        program.display()
    );
    if std::env::var("COPPER_REQUIRE_NVCC").is_ok_and(|v| v == "1") {
        panic!("COPPER_REQUIRE_NVCC=1 but {why}");
    }
    // Straight to stderr, past the test harness's capture, so the skip
    // shows in a plain `cargo test` run.
    let _ = writeln!(std::io::stderr(), "skipped: {why}");
    None
}

/// The `testdata/*.cu` files (not `testdata/bad/`).
fn testdata() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("testdata"))
        .expect("testdata")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .collect();
    files.sort();
    assert!(files.len() > 40, "testdata has {} files", files.len());
    files
}

/// A copy of `testdata/` (its `.cu` and `.toml` files) under `dir`.
fn copy_testdata(dir: &Path) -> PathBuf {
    let to = dir.join("testdata");
    std::fs::create_dir_all(&to).expect("copy");
    for e in std::fs::read_dir(root().join("testdata")).expect("testdata") {
        let p = e.expect("entry").path();
        if p.is_file() {
            std::fs::copy(&p, to.join(p.file_name().expect("name"))).expect("copy");
        }
    }
    to
}

/// Compiles each `(file, extra arguments)` with nvcc; returns one line
/// per failure (file and nvcc's first error lines).
fn compile_all(nvcc: &Path, jobs: &[(PathBuf, Vec<String>)]) -> Vec<String> {
    let start = Instant::now();
    let failures: Vec<String> = jobs
        .iter()
        .filter_map(|(file, extra)| {
            let out = Command::new(nvcc)
                .args(FLAGS)
                .arg("-I")
                .arg(root().join("testdata"))
                .args(extra)
                .arg(file)
                .output()
                .expect("nvcc runs");
            (!out.status.success()).then(|| {
                let msg = String::from_utf8_lossy(&out.stderr);
                let first: Vec<&str> = msg.lines().take(4).collect();
                format!("{}: {}", file.display(), first.join(" | "))
            })
        })
        .collect();
    eprintln!(
        "compiled {} files with nvcc in {:.1} s, {} failed",
        jobs.len(),
        start.elapsed().as_secs_f64(),
        failures.len()
    );
    failures
}

/// `-c -o /dev/null`-style arguments: compile only, object thrown away.
fn object_only(dir: &Path, file: &Path) -> Vec<String> {
    let stem = file.file_stem().expect("stem").to_string_lossy();
    vec![
        "-c".into(),
        "-o".into(),
        dir.join(format!("{stem}.o")).to_string_lossy().into(),
    ]
}

fn assert_compiled(failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "nvcc rejected {} files:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn testdata_files_compile() {
    let Some(nvcc) = nvcc() else { return };
    let tmp = Scratch::new();
    let dir = tmp.path().to_path_buf();
    let mut jobs: Vec<_> = testdata()
        .into_iter()
        .map(|f| {
            let extra = object_only(&dir, &f);
            (f, extra)
        })
        .collect();
    // The project with a header folder, built as its copper.toml says
    // (`-I inc -DN=256`).
    let project = root().join("testdata/projects/stencil");
    for name in ["stencil.cu", "scale_n.cu"] {
        let f = project.join(name);
        let mut extra = object_only(&dir, &f);
        extra.extend([
            "-I".into(),
            project.join("inc").to_string_lossy().into(),
            "-DN=256".into(),
        ]);
        jobs.push((f, extra));
    }
    // A project whose header sits beside its file (no -I), and course
    // files that leave N and BLOCKSIZE to the command line.
    let blur = root().join("testdata/projects/blur/blur.cu");
    jobs.push((blur.clone(), object_only(&dir, &blur)));
    for name in ["matvec_n.cu", "saxpy_n.cu"] {
        let f = root().join("testdata/projects/course").join(name);
        let mut extra = object_only(&dir, &f);
        extra.extend(["-DN=1024".into(), "-DBLOCKSIZE=128".into()]);
        jobs.push((f, extra));
    }
    // The student files, as nvcc compiles them with their default sizes.
    for f in students() {
        let extra = object_only(&dir, &f);
        jobs.push((f, extra));
    }
    // The modern C++ fixtures.
    for f in modern() {
        let extra = object_only(&dir, &f);
        jobs.push((f, extra));
    }
    assert_compiled(compile_all(&nvcc, &jobs));
}

/// The `testdata/modern/*.cu` files, except `version_guards.cu`: it
/// defines a kernel only for the device pass (`#if __CUDA_ARCH__ >= 700`),
/// which nvcc's host pass then cannot launch.
fn modern() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("testdata/modern"))
        .expect("testdata/modern")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .filter(|p| !p.ends_with("version_guards.cu"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 7,
        "testdata/modern has {} files",
        files.len()
    );
    files
}

/// The `testdata/students/*.cu` files.
fn students() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("testdata/students"))
        .expect("testdata/students")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 15,
        "testdata/students has {} files",
        files.len()
    );
    files
}

#[test]
fn fmt_whole_reprints_compile() {
    let Some(nvcc) = nvcc() else { return };
    let tmp = Scratch::new();
    let dir = tmp.path().to_path_buf();
    let mut jobs = Vec::new();
    for f in testdata() {
        let out = copper_in(&root(), &["fmt", "--whole", &f.to_string_lossy()]);
        assert!(out.status.success(), "fmt {}: {}", f.display(), text(&out));
        let printed = dir.join(f.file_name().expect("name"));
        std::fs::write(&printed, &out.stdout).expect("write reprint");
        let extra = object_only(&dir, &printed);
        jobs.push((printed, extra));
    }
    assert_compiled(compile_all(&nvcc, &jobs));
}

#[test]
fn optimize_write_results_compile() {
    let Some(nvcc) = nvcc() else { return };
    let tmp = Scratch::new();
    let dir = tmp.path().to_path_buf();
    let copy = copy_testdata(&dir);
    // By degree: every transform's rewrite, including the tiles that win
    // only at sizes larger than the parameter files'.
    let out = copper_in(
        &dir,
        &[
            "optimize",
            "--asymptotic",
            "testdata",
            "--write",
            "--format",
            "json",
            "--exit-zero",
        ],
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("optimize printed no JSON ({e}): {}", text(&out)));
    let applied: BTreeSet<String> = report["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .flat_map(|k| k["applied"].as_array().cloned().unwrap_or_default())
        .filter_map(|a| a["transform"].as_str().map(str::to_string))
        .collect();
    for t in [
        "branch distribution",
        "global to shared",
        "global to shared (tiled)",
        "cooperative load",
        "shared-memory padding",
        "load hoisting",
        "warp-shuffle reduction",
        "thread remapping",
        "tiled matrix multiply",
    ] {
        assert!(
            applied.contains(t),
            "no testdata rewrite uses {t}: {applied:?}"
        );
    }
    let mut jobs = Vec::new();
    for original in testdata() {
        let written = copy.join(original.file_name().expect("name"));
        let changed =
            std::fs::read(&written).expect("read") != std::fs::read(&original).expect("read");
        if changed {
            let extra = object_only(&dir, &written);
            jobs.push((written, extra));
        }
    }
    assert!(jobs.len() >= 5, "only {} files rewritten", jobs.len());
    assert_compiled(compile_all(&nvcc, &jobs));
}

#[test]
fn golden_rewrites_compile() {
    let Some(nvcc) = nvcc() else { return };
    let tmp = Scratch::new();
    let dir = tmp.path().to_path_buf();
    let copy = copy_testdata(&dir);
    let mut jobs = Vec::new();
    let mut goldens: Vec<PathBuf> = std::fs::read_dir(root().join("golden/optimize"))
        .expect("golden/optimize")
        .map(|e| e.expect("entry").path())
        .collect();
    goldens.sort();
    for g in goldens {
        let recorded = std::fs::read_to_string(&g).expect("read golden");
        // The recorded output ends with the winner's patch, when there is one.
        let Some(at) = recorded.find("\n--- a/") else {
            continue;
        };
        let patch = dir.join("change.patch");
        std::fs::write(&patch, &recorded[at + 1..]).expect("write patch");
        let applied = Command::new("git")
            .arg("apply")
            .arg(&patch)
            .current_dir(&dir)
            .output()
            .expect("git runs");
        assert!(
            applied.status.success(),
            "{}: its patch does not apply: {}",
            g.display(),
            text(&applied)
        );
        let target = recorded[at + 7..]
            .lines()
            .next()
            .expect("patch header")
            .trim()
            .to_string();
        let file = dir.join(&target);
        assert!(file.starts_with(&copy), "{target} is not a testdata file");
        let extra = object_only(&dir, &file);
        jobs.push((file, extra));
    }
    assert!(jobs.len() >= 5, "only {} golden rewrites", jobs.len());
    assert_compiled(compile_all(&nvcc, &jobs));
}

#[test]
fn bench_programs_build_and_link() {
    let Some(nvcc) = nvcc() else { return };
    let tmp = Scratch::new();
    let dir = tmp.path().to_path_buf();
    let mut jobs = Vec::new();
    for f in testdata() {
        if !f.with_extension("toml").exists() {
            continue;
        }
        let out = copper_in(
            &root(),
            &[
                "bench",
                &f.to_string_lossy(),
                "--out",
                &dir.to_string_lossy(),
            ],
        );
        assert!(
            out.status.success(),
            "bench {}: {}",
            f.display(),
            text(&out)
        );
        let stem = f.file_stem().expect("stem").to_string_lossy().to_string();
        let program = dir.join(format!("{stem}_bench.cu"));
        assert!(program.exists(), "no program for {}", f.display());
        let binary = dir.join(format!("{stem}_bench"));
        let extra = vec![
            "-o".into(),
            binary.to_string_lossy().into(),
            // The runtime from the same packages (they ship it as a static
            // library and `libcudart.so.13`, with no `libcudart.so` for `-l`).
            "-cudart".into(),
            "static".into(),
        ];
        jobs.push((program, extra));
    }
    assert!(jobs.len() > 30, "only {} programs", jobs.len());
    assert_compiled(compile_all(&nvcc, &jobs));
    for (program, _) in &jobs {
        let binary = program.with_extension("");
        assert!(binary.is_file(), "{} was not linked", binary.display());
    }
    // The build script copper writes builds its program too.
    let script = dir.join("build-addSub0.sh");
    let built = Command::new("sh")
        .arg(&script)
        .env("NVCC", &nvcc)
        .env("CUDA_ARCH", "sm_90")
        .output()
        .expect("sh runs");
    assert!(
        built.status.success(),
        "{}: {}",
        script.display(),
        text(&built)
    );
}

/// The rewrites `copper optimize` checks but seldom writes compile too:
/// every per-warp-first shuffle reduction (`--allow-reassociation`, so
/// float and double sums get one as well; the tail usually outranks it)
/// and every read-only data path suggestion (printed, never written), each
/// spliced into its testdata file as `--write` would.
#[test]
fn unwritten_candidates_and_suggestions_compile() {
    use copper::cuda::parse::parse_path;
    use copper::cuda::rewrite::edit_functions;
    use copper_search::launch::{launch_shape, read_params};
    use copper_transforms::read_only;
    use copper_transforms::warp_shuffle::WarpShuffle;

    let Some(nvcc) = nvcc() else { return };
    let tmp = Scratch::new();
    let dir = tmp.path().to_path_buf();
    let (mut per_warp, mut suggestions) = (0, 0);
    let mut jobs = Vec::new();
    for path in testdata() {
        let parsed = parse_path(&path).expect("parses");
        let params = read_params(&path, None).expect("parameter file");
        let reduces = parsed.source.text.contains("__shared__");
        for f in parsed.kernels().filter(|f| f.template.is_none()) {
            let spec = params.as_ref().and_then(|p| p.kernel.get(&f.name));
            let mut versions = Vec::new();
            if let Ok(Some(s)) = read_only::suggest(&parsed, f, spec) {
                suggestions += 1;
                versions.push(("read_only", s.function));
            }
            let shape = launch_shape(None, None, &parsed, spec, &f.name);
            if let (true, Some(block)) = (reduces, shape.block) {
                for c in proposed(&parsed, f, &WarpShuffle, block, true) {
                    if c.description.contains("each warp sums its 32 elements") {
                        per_warp += 1;
                        versions.push(("per_warp", c.function));
                    }
                }
            }
            for (what, version) in versions {
                let text = edit_functions(&parsed, &[version]).expect("an edit");
                let stem = path.file_stem().expect("stem").to_string_lossy();
                let file = dir.join(format!("{stem}-{}-{what}.cu", f.name));
                std::fs::write(&file, text).expect("write");
                let extra = object_only(&dir, &file);
                jobs.push((file, extra));
            }
        }
    }
    // tree_sum (int and float), block_dot (float) and the reduce kernels.
    assert!(per_warp >= 3, "only {per_warp} per-warp candidates");
    assert!(
        suggestions >= 20,
        "only {suggestions} read-only suggestions"
    );
    assert_compiled(compile_all(&nvcc, &jobs));
}

#[path = "nvcc/rewrites.rs"]
mod rewrites;

#[path = "nvcc/gate.rs"]
mod gate;
