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

/// The student-style matrix multiplies of `testdata/tiling/` (with host
/// code, without, `int` accumulated into `C`) are each tiled by
/// `optimize --write`, and what it writes compiles.
#[test]
fn tiled_matmul_rewrites_compile() {
    let Some(nvcc) = nvcc() else { return };
    let tmp = Scratch::new();
    let dir = tmp.path().to_path_buf();
    let mut jobs = Vec::new();
    for e in std::fs::read_dir(root().join("testdata/tiling")).expect("testdata/tiling") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "cu") {
            let copy = dir.join(p.file_name().expect("name"));
            std::fs::copy(&p, &copy).expect("copy");
            let path = copy.to_string_lossy();
            // By degree: a matrix without sizes in use is tiled too.
            let args = ["optimize", "--write", "--exit-zero", "--asymptotic", &path];
            let out = copper_in(&dir, &args);
            assert!(out.status.success(), "{}", text(&out));
            let written = std::fs::read_to_string(&copy).expect("read");
            assert!(
                written.contains("_tile[threadIdx.y][threadIdx.x] =")
                    && written.matches("__syncthreads();").count() == 2,
                "{} is not tiled:\n{written}",
                p.display()
            );
            let extra = object_only(&dir, &copy);
            jobs.push((copy, extra));
        }
    }
    assert!(jobs.len() >= 3, "only {} files", jobs.len());
    assert_compiled(compile_all(&nvcc, &jobs));
}

/// Copies the students' files `names` into a scratch directory,
/// runs `optimize --write --exit-zero` with `flags` on each, and returns
/// the directory (removed when dropped) and each copy with the text
/// written to it.
fn students_rewritten(names: &[&str], flags: &[&str]) -> (Scratch, Vec<(PathBuf, String)>) {
    let tmp = Scratch::new();
    let dir = tmp.path().to_path_buf();
    let files = names
        .iter()
        .map(|name| {
            let copy = dir.join(name);
            std::fs::copy(root().join("testdata/students").join(name), &copy).expect("copy");
            let path = copy.to_string_lossy().to_string();
            let mut args = vec!["optimize", "--write", "--exit-zero"];
            args.extend(flags);
            args.push(&path);
            let out = copper_in(&dir, &args);
            assert!(out.status.success(), "{}", text(&out));
            let written = std::fs::read_to_string(&copy).expect("read");
            (copy, written)
        })
        .collect();
    (tmp, files)
}

/// Compiles each rewritten file to an object file.
fn compile_rewritten(nvcc: &Path, files: Vec<(PathBuf, String)>) {
    let jobs: Vec<(PathBuf, Vec<String>)> = files
        .into_iter()
        .map(|(copy, _)| {
            let dir = copy.parent().expect("a directory").to_path_buf();
            let extra = object_only(&dir, &copy);
            (copy, extra)
        })
        .collect();
    assert_compiled(compile_all(nvcc, &jobs));
}

/// The students' chunked kernels (`testdata/students/chunked_*.cu`, one
/// launched from its host code, one without a launch) are interleaved by
/// `optimize --write`, and what it writes compiles.
#[test]
fn chunk_interleaving_rewrites_compile() {
    let Some(nvcc) = nvcc() else { return };
    let (_scratch, files) = students_rewritten(&["chunked_rows.cu", "chunked_clamp.cu"], &[]);
    for (copy, written) in &files {
        assert!(
            written.contains("long long e = ") && written.contains("break;"),
            "{} is not interleaved:\n{written}",
            copy.display()
        );
    }
    compile_rewritten(&nvcc, files);
}

/// The students' row kernels (`testdata/students/matvec_rows.cu` and
/// `row_max.cu` without a launch, `main_row_sums.cu` launched from its
/// host code) get one warp per row from `optimize --write
/// --allow-reassociation` (the float matvec's sums cancel: its check
/// judges them by the size of their terms), and what it writes compiles.
#[test]
fn warp_per_row_rewrites_compile() {
    let Some(nvcc) = nvcc() else { return };
    let (_scratch, files) = students_rewritten(
        &["matvec_rows.cu", "row_max.cu", "main_row_sums.cu"],
        // By degree: `row_max` has no sizes in use.
        &["--allow-reassociation", "--asymptotic"],
    );
    for (copy, written) in &files {
        assert!(
            written.contains("__shfl_down_sync(0xffffffff") && written.contains("if (lane == 0)"),
            "{} has no warp per row:\n{written}",
            copy.display()
        );
    }
    compile_rewritten(&nvcc, files);
}

/// The students' sliding windows (`testdata/students/window_sum.cu`
/// without a launch, `main_moving_average.cu` launched from its host code)
/// get a halo tile from `optimize --write`, and what it writes compiles.
#[test]
fn halo_tile_rewrites_compile() {
    let Some(nvcc) = nvcc() else { return };
    let (_scratch, files) = students_rewritten(&["window_sum.cu", "main_moving_average.cu"], &[]);
    for (copy, written) in &files {
        assert!(
            written.contains("__shared__ float in_halo[")
                && written.contains("in_halo[threadIdx.x + (k + "),
            "{} has no halo tile:\n{written}",
            copy.display()
        );
    }
    compile_rewritten(&nvcc, files);
}

/// The students' global-memory trees (`testdata/students/reduce_global.cu`,
/// launched from its host code, `reduce_global_index.cu` without a
/// launch, and `reduce_global_while.cu`, a `while` loop launched with
/// `dim3` sizes) run in a `__shared__` copy after `optimize --write`, and
/// what it writes compiles.
#[test]
fn global_tree_rewrites_compile() {
    let Some(nvcc) = nvcc() else { return };
    let (_scratch, files) = students_rewritten(
        &[
            "reduce_global.cu",
            "reduce_global_index.cu",
            "reduce_global_while.cu",
        ],
        &[],
    );
    for (copy, written) in &files {
        assert!(
            written.contains("_tree[1024];")
                && written
                    .contains("if (blockDim.x <= 1024 && blockDim.y == 1 && blockDim.z == 1) {"),
            "{} has no shared tree:\n{written}",
            copy.display()
        );
    }
    compile_rewritten(&nvcc, files);
}

/// The students' stencils written out as neighbour reads
/// (`testdata/students/main_smooth3.cu`, 3-point, launched from its host
/// code; `main_heat_rows.cu` and
/// `laplace512.cu`, their row length a local `const int`;
/// `main_smooth5_clamp.cu` and `smooth3_ternary.cu`, their reads clamped at
/// the ends with `min`/`max` or `?:` in locals the tile leaves unused),
/// and the windows in loops clamped or skipped through locals
/// (`conv1d_clamp_local.cu`: `if (j < 0) j = 0;` …; `blur_rows_continue.cu`:
/// a `continue` in the outer loop) get a halo tile
/// candidate, and
/// each compiles spliced into its file as `--write` would splice it (the
/// tiles seldom win: 1 or 2 neighbours per axis do not pay for the load).
#[test]
fn halo_tile_written_out_candidates_compile() {
    use copper::cuda::parse::parse_path;
    use copper::cuda::rewrite::edit_functions;
    use copper_transforms::halo_tile::HaloTile;

    let Some(nvcc) = nvcc() else { return };
    let tmp = Scratch::new();
    let dir = tmp.path().to_path_buf();
    let mut jobs = Vec::new();
    for (name, block, tile) in [
        (
            "main_smooth3.cu",
            [256, 1, 1],
            "__shared__ float in_halo[1026];",
        ),
        (
            "conv1d_clamp_local.cu",
            [256, 1, 1],
            "x_halo[x_t] = x[min(max((int)x_j, 0), n - 1)];",
        ),
        (
            "blur_rows_continue.cu",
            [16, 16, 1],
            "__shared__ float src_halo[36][48];",
        ),
        (
            "main_heat_rows.cu",
            [16, 16, 1],
            "T_halo[T_ty][T_tx] = T[T_jy * W + T_jx];",
        ),
        (
            "laplace512.cu",
            [16, 16, 1],
            "img_halo[img_ty][img_tx] = img[img_jy * N + img_jx];",
        ),
        (
            "main_smooth5_clamp.cu",
            [256, 1, 1],
            "in_halo[in_t] = in[min(max((int)in_j, 0), n - 1)];",
        ),
        (
            "smooth3_ternary.cu",
            [256, 1, 1],
            "in_halo[in_t] = in[min(max((int)in_j, 0), n - 1)];",
        ),
    ] {
        let path = root().join("testdata/students").join(name);
        let parsed = parse_path(&path).expect("parses");
        let found: Vec<String> = parsed
            .kernels()
            .flat_map(|f| proposed(&parsed, f, &HaloTile, block, false))
            .map(|c| edit_functions(&parsed, &[c.function]).expect("an edit"))
            .collect();
        assert_eq!(found.len(), 1, "{name}: {} candidates", found.len());
        let file = dir.join(name);
        std::fs::write(&file, &found[0]).expect("write");
        assert!(found[0].contains(tile), "{name}:\n{}", found[0]);
        let extra = object_only(&dir, &file);
        jobs.push((file, extra));
    }
    assert_compiled(compile_all(&nvcc, &jobs));
}

/// The candidates `t` proposes for kernel `f` of `parsed` on `block`.
fn proposed(
    parsed: &copper::cuda::parse::ParsedFile,
    f: &copper::cuda::ast::Function,
    t: &dyn copper_transforms::Transform,
    block: [u64; 3],
    allow_reassociation: bool,
) -> Vec<copper_transforms::Candidate> {
    use copper::bound::{prepare, Config};
    use copper::ir::lower::lower_kernel;
    use copper_transforms::Context;

    let Ok(kernel) = lower_kernel(parsed, &f.name) else {
        return Vec::new();
    };
    let config = Config {
        block: Some(block),
        ..Config::default()
    };
    let analysis = prepare(&kernel, config);
    let cx = Context {
        file: parsed,
        host: parsed,
        function: f,
        kernel: &kernel,
        analysis: &analysis,
        block: Some(block),
        params: None,
        allow_reassociation,
    };
    t.propose(&cx).candidates
}

/// The students' 2-D windows (`testdata/students/box_blur.cu` without a
/// launch, clamped at the border; `main_blur5.cu` launched from its host
/// code with `dim3(16, 16)` blocks, guarded) get a 2-D halo tile from
/// `optimize --write`, and what it writes compiles.
#[test]
fn halo_tile_2d_rewrites_compile() {
    let Some(nvcc) = nvcc() else { return };
    let (_scratch, files) = students_rewritten(&["box_blur.cu", "main_blur5.cu"], &[]);
    for ((copy, written), array) in files.iter().zip(["src", "img"]) {
        assert!(
            written.contains(&format!("__shared__ float {array}_halo[36][48];"))
                && written
                    .contains("if (blockDim.x <= 32 && blockDim.y <= 32 && blockDim.z == 1) {")
                && written.contains(&format!("{array}_halo[threadIdx.y + (dy + ")),
            "{} has no 2-D halo tile:\n{written}",
            copy.display()
        );
    }
    compile_rewritten(&nvcc, files);
}

/// The students' 3 × 3 filters clamped at the borders
/// (`main_blur3_clamp.cu` with host code, `sharpen_clamp.cu` without) get
/// a 2-D halo tile loaded clamped from `optimize --write`, and what it
/// writes compiles.
#[test]
fn clamped_halo_tile_2d_rewrites_compile() {
    let Some(nvcc) = nvcc() else { return };
    let (_scratch, files) = students_rewritten(&["main_blur3_clamp.cu", "sharpen_clamp.cu"], &[]);
    for ((copy, written), (array, h, w)) in files
        .iter()
        .zip([("img", "h", "w"), ("src", "height", "width")])
    {
        let load = format!("{array}_halo[{array}_ty][{array}_tx] = {array}[(long long)min(max((int){array}_jy, 0), {h} - 1) * {w} + min(max((int){array}_jx, 0), {w} - 1)];");
        assert!(
            written.contains(&load),
            "{} has no clamped 2-D halo tile:\n{written}",
            copy.display()
        );
    }
    compile_rewritten(&nvcc, files);
}

/// The students' 5 × 5 filters clamped or skipped through statements on
/// locals (`box_blur_clamp_local.cu` with host code, `?:` and `if`
/// clamps; `gauss_guard_continue.cu` without, `continue` guards) get a
/// 2-D halo tile from `optimize --write`, the locals the tile leaves
/// unused gone with their updates (nvcc warns of a local set but never
/// used), and what it writes compiles.
#[test]
fn halo_tiles_through_locals_compile() {
    let Some(nvcc) = nvcc() else { return };
    let (_scratch, files) =
        students_rewritten(&["box_blur_clamp_local.cu", "gauss_guard_continue.cu"], &[]);
    for ((copy, written), array) in files.iter().zip(["in", "img"]) {
        assert!(
            written.contains(&format!("__shared__ float {array}_halo[36][48];"))
                && written.contains(&format!(
                    "{array}_halo[threadIdx.y + (dy + R)][threadIdx.x + (dx + R)]"
                )),
            "{} has no 2-D halo tile:\n{written}",
            copy.display()
        );
    }
    compile_rewritten(&nvcc, files);
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

/// A stand-in compiler: says it is nvcc, and fails (printing an error in
/// nvcc's format) on any source file containing `refuse`.
#[cfg(unix)]
fn fake_nvcc(dir: &Path, refuse: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("fake-nvcc");
    let script = format!(
        "#!/bin/sh\n\
         if [ \"$1\" = --version ]; then echo 'Cuda compilation tools, release 13.0, V13.0.0'; exit 0; fi\n\
         for a in \"$@\"; do last=\"$a\"; done\n\
         if grep -q '{refuse}' \"$last\"; then echo \"$last(3): error: refused by the test\" >&2; exit 1; fi\n\
         exit 0\n"
    );
    std::fs::write(&path, script).expect("write fake nvcc");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

#[cfg(unix)]
#[test]
fn optimize_nvcc_drops_candidates_that_do_not_compile() {
    let tmp = Scratch::new();
    let dir = tmp.path().to_path_buf();
    let file = root().join("testdata/addSub0.cu");
    let file = file.to_string_lossy();
    // Branch distribution introduces `B_elem`: a compiler refusing it
    // leaves nothing to suggest, and --explain says why.
    let refusing = fake_nvcc(&dir, "B_elem");
    let out = copper_in(
        &root(),
        &[
            "optimize",
            &file,
            "--explain",
            "--nvcc",
            &refusing.to_string_lossy(),
        ],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("no improvement found"), "{said}");
    assert!(
        said.contains("improving candidates compiled with nvcc"),
        "{said}"
    );
    assert!(
        said.contains("nvcc rejects it: addSub0.cu(3): error: refused by the test"),
        "{said}"
    );
    // A compiler accepting it changes nothing.
    let accepting = fake_nvcc(&dir, "no such text anywhere");
    let out = copper_in(
        &root(),
        &["optimize", &file, "--nvcc", &accepting.to_string_lossy()],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("improved"));
    // When the file as written does not compile, nothing can be checked.
    let broken = fake_nvcc(&dir, "addSub0");
    let out = copper_in(
        &root(),
        &[
            "optimize",
            &file,
            "--format",
            "json",
            "--nvcc",
            &broken.to_string_lossy(),
        ],
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let k = &report["kernels"][0];
    assert_eq!(k["status"], "unchecked", "{k}");
    assert_eq!(k["nvcc_checked"], true);
    assert!(
        k["nvcc_error"]
            .as_str()
            .is_some_and(|e| e.contains("refused")),
        "{k}"
    );
}

#[test]
fn optimize_nvcc_refuses_what_is_not_a_compiler() {
    let file = root().join("testdata/addSub0.cu");
    let file = file.to_string_lossy();
    for (args, says) in [
        (vec!["--nvcc", "/nonexistent/nvcc"], "cannot run it"),
        (vec!["--nvcc", "true"], "not NVIDIA's CUDA compiler"),
        (vec!["--nvcc-flags", "-DN=4"], "--nvcc-flags needs --nvcc"),
    ] {
        let mut all = vec!["optimize", &*file];
        all.extend(args);
        let out = copper_in(&root(), &all);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {}", text(&out));
        assert!(text(&out).contains(says), "{all:?}: {}", text(&out));
    }
}

#[test]
fn optimize_nvcc_with_the_real_compiler() {
    let Some(nvcc) = nvcc() else { return };
    let out = copper_in(
        &root(),
        &[
            "optimize",
            "testdata/addSub0.cu",
            "--nvcc",
            &nvcc.to_string_lossy(),
            "--nvcc-flags",
            "-arch=sm_90",
        ],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("improved;"), "{said}");
    assert!(
        said.contains("improving candidates compiled with nvcc"),
        "{said}"
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

/// The classic `reduce6` template (`testdata/students/reduce6_template.cu`)
/// and `reduce5` (`reduce5_inline.cu`, no launch): their warp tails become
/// shuffles under `optimize --write`, and what it writes compiles.
#[test]
fn classic_reduction_tail_rewrites_compile() {
    let Some(nvcc) = nvcc() else { return };
    let (_scratch, files) = students_rewritten(&["reduce6_template.cu", "reduce5_inline.cu"], &[]);
    for (copy, written) in &files {
        assert!(
            written.contains("+= __shfl_down_sync(0xffffffff, warp_sum, 16);"),
            "{} has no shuffles:\n{written}",
            copy.display()
        );
    }
    compile_rewritten(&nvcc, files);
}
