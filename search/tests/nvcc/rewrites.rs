//! What `optimize --write` makes of the student-style kernels, one test
//! per transform, compiles.

use super::*;

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
    rewritten_from("testdata/students", names, flags)
}

/// [`students_rewritten`] for the files `names` of the directory `from`.
fn rewritten_from(from: &str, names: &[&str], flags: &[&str]) -> (Scratch, Vec<(PathBuf, String)>) {
    let tmp = Scratch::new();
    let dir = tmp.path().to_path_buf();
    let files = names
        .iter()
        .map(|name| {
            let copy = dir.join(name);
            std::fs::copy(root().join(from).join(name), &copy).expect("copy");
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

/// The row kernels launched by their own files' `main`
/// (`testdata/*_launched.cu`: a matvec, integer row sums, a row maximum
/// and a row norm) get one row per warp with the launch's grid scaled by
/// 32 from `optimize --write --allow-reassociation`, and what it writes
/// (kernel and host code) compiles.
#[test]
fn warp_per_row_relaunched_rewrites_compile() {
    let Some(nvcc) = nvcc() else { return };
    let names = [
        "matvec_launched.cu",
        "row_sum_launched.cu",
        "row_max_norm_launched.cu",
    ];
    let (_scratch, files) = rewritten_from("testdata", &names, &["--allow-reassociation"]);
    for (copy, written) in &files {
        let kernels = written.matches("__global__").count();
        assert!(
            written.matches(" / 32;").count() == kernels
                && written.matches(") * 32").count() == kernels
                && written.contains("if (blockIdx.x < gridDim.x / 32)"),
            "{} has no warp per row with its launch scaled:\n{written}",
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
        let block = copper::launch::block(block).expect("a block CUDA runs");
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
pub(crate) fn proposed(
    parsed: &copper::cuda::parse::ParsedFile,
    f: &copper::cuda::ast::Function,
    t: &dyn copper_transforms::Transform,
    block: copper::launch::Dims,
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

/// The classic `reduce6` template (`testdata/students/reduce6_template.cu`,
/// `reduce6_switch.cu`, launched for blocks of 32 to 512, whose
/// shuffles' first step keeps its guard, and `reduce6_switch_all.cu`,
/// down to blocks of 1, whose shuffles run only where the block is a warp
/// or more) and `reduce5` (`reduce5_inline.cu`, no launch): their warp
/// tails become shuffles under `optimize --write`, and what it writes
/// compiles.
#[test]
fn classic_reduction_tail_rewrites_compile() {
    let Some(nvcc) = nvcc() else { return };
    let (_scratch, files) = students_rewritten(
        &[
            "reduce6_template.cu",
            "reduce6_switch.cu",
            "reduce6_switch_all.cu",
            "reduce5_inline.cu",
        ],
        &[],
    );
    for (copy, written) in &files {
        assert!(
            written.contains("+= __shfl_down_sync(0xffffffff, warp_sum, 16);"),
            "{} has no shuffles:\n{written}",
            copy.display()
        );
    }
    compile_rewritten(&nvcc, files);
}

/// The student projects whose kernel is in a header
/// (`testdata/projects/reduction/kernels.cuh`, the template of
/// `testdata/projects/templated/reduce.cuh` instantiated twice):
/// `optimize --write main.cu` rewrites the header (under the block guard),
/// and main.cu with it compiles.
#[test]
fn header_rewrites_compile() {
    let Some(nvcc) = nvcc() else { return };
    for (project, header) in [("reduction", "kernels.cuh"), ("templated", "reduce.cuh")] {
        let tmp = Scratch::new();
        let dir = tmp.path().to_path_buf();
        let from = root().join("testdata/projects").join(project);
        for name in ["main.cu", header] {
            std::fs::copy(from.join(name), dir.join(name)).expect("copy");
        }
        let out = copper_in(&dir, &["optimize", "--write", "--exit-zero", "main.cu"]);
        assert!(out.status.success(), "{}", text(&out));
        let written = std::fs::read_to_string(dir.join(header)).expect("read");
        assert!(
            written.contains("__shfl_down_sync") && written.contains("if (blockDim.x == 256"),
            "{project}: {written}"
        );
        let main = dir.join("main.cu");
        let extra = object_only(&dir, &main);
        assert_compiled(compile_all(&nvcc, &[(main, extra)]));
    }
}

/// The PolyBench-style kernels of `testdata/macro_types.cu`, whose element
/// type is the macro `DATA_TYPE`, are rewritten by `optimize --write
/// --allow-reassociation` without writing the macro's expansion `float`
/// anywhere new, so the patched file built with `-DDATA_TYPE=double`
/// computes in double, and it compiles that way and as written.
#[test]
fn rewrites_of_macro_typed_kernels_keep_the_macro_and_compile_in_double() {
    let Some(nvcc) = nvcc() else { return };
    let original = std::fs::read_to_string(root().join("testdata/macro_types.cu")).expect("read");
    let (_scratch, files) =
        rewritten_from("testdata", &["macro_types.cu"], &["--allow-reassociation"]);
    let mut jobs = Vec::new();
    for (copy, written) in &files {
        assert_ne!(
            written,
            &original,
            "nothing was rewritten in {}",
            copy.display()
        );
        let floats = |s: &str| s.lines().filter(|l| l.contains("float")).count();
        assert_eq!(
            floats(written),
            floats(&original),
            "a rewrite wrote `float` for `DATA_TYPE`:\n{written}"
        );
        let dir = copy.parent().expect("a directory");
        let double_object = dir.join("in_double.o").to_string_lossy().to_string();
        let double = vec![
            "-c".into(),
            "-o".into(),
            double_object,
            "-DDATA_TYPE=double".into(),
        ];
        jobs.push((copy.clone(), double));
        jobs.push((copy.clone(), object_only(dir, copy)));
    }
    assert_compiled(compile_all(&nvcc, &jobs));
}
