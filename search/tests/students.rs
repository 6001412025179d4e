//! Student files (`testdata/students/`, no parameter files): the launch
//! copper infers or evaluates from the host code for each, candidates
//! checked on it (not `unchecked`), a race that makes the original
//! uncheckable named with its line, `copper params` output that the
//! parameter-file loader reads back and the simulator runs (array lengths
//! as expressions of the arguments where the host code gives them),
//! differential checks on an inferred launch that catch a copy into shared
//! memory without its guard, the assumed block reaching the analysis and
//! the transforms as a parameter file's would, and the lint on the same
//! launch (`data-race`, findings that depend on the assumed block), and
//! the bounds of the 2-D halo tiles of the students' blurs.

mod common;

use std::path::PathBuf;

use common::{copper_in, root, text, Scratch};
use copper::cuda::parse::parse_source;
use copper::ir::lower::lower_kernel;
use copper::sim::params::ParamFile;
use copper::source::SourceFile;
use copper_transforms::check::Checker;

fn students() -> PathBuf {
    root().join("testdata/students")
}

/// Per file: the start of its first test-launch note.
const EXPECTED: &[(&str, &str)] = &[
    (
        "blur_macro2d.cu",
        "assumed block 16×16×1 (the kernel indexes in two dimensions)",
    ),
    (
        "box_blur_clamp_local.cu",
        "tested on the launch at line 39 (grid 3×3×1, block 16×16×1)",
    ),
    (
        "box_blur.cu",
        "assumed block 16×16×1 (the kernel indexes in two dimensions)",
    ),
    (
        "chunked_clamp.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
    (
        "chunked_rows.cu",
        "tested on the launch at line 32 (grid 8×1×1, block 128×1×1)",
    ),
    (
        "conv1d_clamp_local.cu",
        "tested on the launch at line 32 (grid 4×1×1, block 256×1×1)",
    ),
    (
        "blur_rows_continue.cu",
        "assumed block 16×16×1 (the kernel indexes in two dimensions)",
    ),
    (
        "smooth_minmax_local.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
    (
        "smooth_ternary_local.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
    (
        "window_skip1d.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
    (
        "count_atomic.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
    (
        "dot_while.cu",
        "assumed block 256×1×1 from `cache[cacheIndex]` at line 16",
    ),
    (
        "every_thread_adds.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
    (
        "histogram_shared.cu",
        "assumed block 256×1×1 from `local[threadIdx.x]` at line 8",
    ),
    (
        "gauss_guard_continue.cu",
        "assumed block 16×16×1 (the kernel indexes in two dimensions)",
    ),
    (
        "main_matmul.cu",
        "tested on the launch at line 30 (grid 3×3×1, block 16×16×1)",
    ),
    (
        "main_blur5.cu",
        "tested on the launch at line 43 (grid 3×3×1, block 16×16×1)",
    ),
    (
        "jacobi5.cu",
        "assumed block 16×16×1 (the kernel indexes in two dimensions)",
    ),
    (
        "main_heat_rows.cu",
        "tested on the launch at line 44 (grid 3×3×1, block 16×16×1)",
    ),
    (
        "laplace512.cu",
        "assumed block 16×16×1 (the kernel indexes in two dimensions)",
    ),
    (
        "main_blur3_clamp.cu",
        "tested on the launch at line 44 (grid 7×3×1, block 16×16×1)",
    ),
    (
        "sharpen_clamp.cu",
        "assumed block 16×16×1 (the kernel indexes in two dimensions)",
    ),
    (
        "main_smooth5_clamp.cu",
        "tested on the launch at line 36 (grid 3×1×1, block 256×1×1)",
    ),
    (
        "smooth3_ternary.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
    (
        "main_smooth3.cu",
        "tested on the launch at line 27 (grid 3×1×1, block 256×1×1)",
    ),
    (
        "main_moving_average.cu",
        "tested on the launch at line 33 (grid 20×1×1, block 256×1×1)",
    ),
    (
        "main_vec_add.cu",
        "tested on the launch at line 31 (grid 3×1×1, block 256×1×1)",
    ),
    (
        "main_row_sums.cu",
        "tested on the launch at line 30 (grid 4×1×1, block 256×1×1)",
    ),
    (
        "matvec_rows.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
    (
        "row_max.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
    (
        "matmul_naive.cu",
        "assumed block 16×16×1 (the kernel indexes in two dimensions)",
    ),
    (
        "main_particles.cu",
        "tested on the launch at line 26 (grid 40×1×1, block 128×1×1)",
    ),
    (
        "main_scale_matrix.cu",
        "tested on the launch at line 21 (grid 36×1×1, block 128×1×1)",
    ),
    (
        "matmul_tiled16.cu",
        "assumed block 16×16×1 from `As[threadIdx.y][threadIdx.x]` at line 16",
    ),
    (
        "racy_max.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
    (
        "reduce5_inline.cu",
        "assumed block 256×1×1 from `sdata[tid]` at line 16",
    ),
    (
        "reduce6_template.cu",
        "the launch at line 42 could not be evaluated from the host code before it",
    ),
    (
        "reduce6_switch.cu",
        "the launch at line 44 could not be evaluated from the host code before it",
    ),
    (
        "reduce6_switch_all.cu",
        "the launch at line 45 could not be evaluated from the host code before it",
    ),
    (
        "reduce_global.cu",
        "the launch at line 36 could not be evaluated from the host code before it",
    ),
    (
        "reduce_global_index.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
    (
        "reduce_global_while.cu",
        "the launch at line 43 could not be evaluated from the host code before it",
    ),
    (
        "reduce_shared.cu",
        "assumed block 256×1×1 from `sdata[tid]` at line 8",
    ),
    (
        "saxpy_stride.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
    (
        "scale_row_threads.cu",
        "assumed block 128×1×1 from the thread index compared with constants in `if (row < rows && c < COLS) {` at line 11",
    ),
    (
        "scale_rows_same_work.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
    (
        "softmax_rows.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
    (
        "staged_scale.cu",
        "tested on the launch at line 23 (grid 4×1×1, block 256×1×1)",
    ),
    (
        "stencil_macro.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
    (
        "tile_add8.cu",
        "assumed block 8×8×1 from the thread index compared with constants in `if (tx < TILE && ty < TILE && row < n && col < n) {` at line 12",
    ),
    (
        "transpose_naive.cu",
        "assumed block 16×16×1 (the kernel indexes in two dimensions)",
    ),
    (
        "transpose_tile32.cu",
        "assumed block 32×8×1: 32×32×1 from `tile[threadIdx.y + j][threadIdx.x]` at line 14 runs out of bounds at line 14 (`tile[1024]`)",
    ),
    (
        "vec_add.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
    (
        "warp_sum.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
    (
        "window_sum.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
];

/// The file that races: the original cannot be checked.
const RACY: &str = "racy_max.cu";

#[test]
fn every_student_file_is_checked_on_the_launch_copper_finds() {
    let dir = students();
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".cu"))
        .collect();
    assert!(files.len() >= 15, "{files:?}");
    for f in &files {
        assert!(EXPECTED.iter().any(|(n, _)| n == f), "{f} is not listed");
        let toml = dir.join(f).with_extension("toml");
        assert!(
            !toml.exists(),
            "{} must have no parameter file",
            toml.display()
        );
    }
    let out = copper_in(&dir, &["optimize", ".", "--format", "json", "--exit-zero"]);
    assert!(out.status.success(), "{}", text(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let kernels = json["kernels"].as_array().unwrap();
    // One entry per file (a template's instantiations are one file's).
    let files_found: std::collections::BTreeSet<&str> =
        kernels.iter().filter_map(|k| k["file"].as_str()).collect();
    assert_eq!(files_found.len(), EXPECTED.len(), "{}", text(&out));
    let mut checked = 0;
    for (file, launch) in EXPECTED {
        let k = kernels
            .iter()
            .find(|k| k["file"].as_str().unwrap().ends_with(&format!("/{file}")))
            .unwrap_or_else(|| panic!("{file} missing"));
        let notes = k["test_launch"].as_array().unwrap();
        let first = notes[0].as_str().unwrap();
        assert!(first.starts_with(launch), "{file}: {first}");
        if *file == RACY && k["candidates"] == 0 {
            // Nothing to check, so the original is not simulated: the
            // race is the lint's to report
            // (`lint_uses_the_assumed_block_and_reports_races`).
            assert_eq!(k["status"], "unchanged", "{file}: {k}");
            assert!(k["checked_launches"].is_null(), "{file}: {k}");
        } else if *file == RACY {
            assert_eq!(k["status"], "unchecked", "{file}: {k}");
            let why = k["check_error"].as_str().unwrap();
            assert!(
                why.contains("it races at line 9")
                    && why.contains("`result[0]`")
                    && why.contains("copper params"),
                "{why}"
            );
        } else {
            assert_ne!(k["status"], "unchecked", "{file}: {k}");
            // The original is simulated only when a candidate beats it.
            match k["checked_launches"].as_u64() {
                Some(n) => {
                    assert!(n >= 3, "{file}: {}", k["check_error"]);
                    checked += 1;
                }
                None => assert!(
                    k["status"] == "unchanged" && k["check_error"].is_null(),
                    "{file}: {k}"
                ),
            }
        }
    }
    assert!(checked >= 6, "only {checked} files were checked");
}

#[test]
fn host_code_launches_are_cut_to_test_size() {
    let main = kernels_of("main_vec_add.cu");
    let notes = main["test_launch"].to_string();
    assert!(notes.contains("`n` = 1048576 cut to 641"), "{notes}");
    assert_eq!(main["grid"], serde_json::json!([4096, 1, 1]));
    assert_eq!(main["block"], serde_json::json!([256, 1, 1]));
}

fn kernels_of(file: &str) -> serde_json::Value {
    let out = copper_in(
        &students(),
        &["optimize", file, "--format", "json", "--exit-zero"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    json["kernels"][0].clone()
}

#[test]
fn params_output_reads_back_and_runs() {
    let tmp = Scratch::new();
    let scratch = tmp.path();
    for (file, _) in EXPECTED {
        let out = copper_in(&students(), &["params", file]);
        assert!(out.status.success(), "{file}: {}", text(&out));
        let toml = String::from_utf8(out.stdout).unwrap();
        let params = ParamFile::from_toml(&toml).unwrap_or_else(|e| panic!("{file}: {e}\n{toml}"));
        // One entry per kernel: the templates' instantiations.
        let kernels = match *file {
            "reduce6_template.cu" => 3,
            "reduce6_switch.cu" => 5,
            "reduce6_switch_all.cu" => 10,
            _ => 1,
        };
        assert_eq!(params.kernel.len(), kernels, "{file}");
        assert!(toml.contains("# "), "{file}: no comments");
        if *file == RACY {
            assert!(toml.contains("it races at line 9"), "{toml}");
            continue;
        }
        // Saved beside a copy of the file, the simulator runs it.
        std::fs::copy(students().join(file), scratch.join(file)).unwrap();
        std::fs::write(scratch.join(file).with_extension("toml"), &toml).unwrap();
        let sim = copper_in(scratch, &["simulate", file]);
        assert!(sim.status.success(), "{file}: {}\n{toml}", text(&sim));
    }
    // The host code's lengths: `n * sizeof(float)` bytes of floats, as the
    // expression `n` of the argument.
    let out = copper_in(&students(), &["params", "main_vec_add.cu"]);
    let p = ParamFile::from_toml(&String::from_utf8_lossy(&out.stdout)).unwrap();
    let k = &p.kernel["addVectors"];
    assert_eq!((k.args["n"], k.arrays["a"].len), (641.0, 641));
    assert_eq!(k.arrays["a"].len_expr.as_deref(), Some("n"));
    assert_eq!(
        (k.grid.clone(), k.block.clone()),
        (vec![3, 1, 1], vec![256, 1, 1])
    );
}

/// `vec_add.cu` with `a` staged through shared memory, as global-to-shared
/// does, with or without the guard that keeps the copy in bounds.
fn staged(guard: bool) -> String {
    let copy = if guard {
        "if (i < n) {\n        a_s[threadIdx.x] = a[i];\n    }"
    } else {
        "a_s[threadIdx.x] = a[i];"
    };
    format!(
        "__global__ void vecAdd(const float *a, const float *b, float *c, int n) {{\n    \
         __shared__ float a_s[256];\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    \
         {copy}\n    __syncthreads();\n    if (i < n) {{\n        c[i] = a_s[threadIdx.x] + b[i];\n    }}\n}}\n"
    )
}

#[test]
fn inferred_launches_catch_a_copy_in_without_its_guard() {
    let path = students().join("vec_add.cu");
    let file = parse_source(SourceFile::new(
        path.to_str().unwrap(),
        std::fs::read_to_string(&path).unwrap(),
    ));
    let kernel = lower_kernel(&file, "vecAdd").unwrap();
    let shape = copper_search::launch::launch_shape(None, None, &file, None, "vecAdd");
    let plan = copper_search::launch::test_plan(&file, &kernel, None, &shape, None);
    assert_eq!(
        (plan.spec.is_none(), plan.block.map(|b| b.to_array())),
        (true, Some([256, 1, 1]))
    );
    let checker = Checker::new(&file, "vecAdd", None, plan.block, None).unwrap();
    let candidate = |guard: bool| {
        let f = parse_source(SourceFile::new("c.cu", staged(guard)));
        f.function("vecAdd").unwrap().clone()
    };
    assert_eq!(checker.check(&candidate(true)), Ok(()));
    let err = checker.check(&candidate(false)).unwrap_err().to_string();
    assert!(
        err.contains("out-of-bounds") && err.contains("`a["),
        "{err}"
    );
}

/// The length expression `copper params` writes for each array of `file`'s
/// only kernel.
fn length_exprs(file: &str) -> Vec<(String, Option<String>, u64)> {
    let out = copper_in(&students(), &["params", file]);
    assert!(out.status.success(), "{}", text(&out));
    let p = ParamFile::from_toml(&String::from_utf8_lossy(&out.stdout)).unwrap();
    let k = p.kernel.values().next().unwrap();
    k.arrays
        .iter()
        .map(|(n, a)| (n.clone(), a.len_expr.clone(), a.len))
        .collect()
}

#[test]
fn params_write_lengths_as_expressions_of_the_arguments() {
    // `rows * cols * sizeof(float)`, with rows and cols cut to 67.
    assert_eq!(
        length_exprs("main_scale_matrix.cu"),
        [("m".to_string(), Some("rows * cols".to_string()), 67 * 67)]
    );
    // `bytes = N * N * sizeof(float)`, N passed as `n`.
    for (_, expr, len) in length_exprs("main_matmul.cu") {
        assert_eq!((expr.as_deref(), len), (Some("n * n"), 41 * 41));
    }
    // `n * sizeof(Particle)`: the struct's C size (28 bytes) divides out.
    assert_eq!(
        length_exprs("main_particles.cu"),
        [
            ("energy".to_string(), Some("n".to_string()), 5000),
            ("p".to_string(), Some("n".to_string()), 5000)
        ]
    );
    // The struct array's allocation is known, so it is known not to alias
    // `energy`: the read-only path is suggested for it.
    let out = copper_in(
        &students(),
        &[
            "optimize",
            "main_particles.cu",
            "--format",
            "json",
            "--exit-zero",
        ],
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let suggested = &doc["kernels"][0]["suggestions"][0]["description"];
    assert!(
        suggested
            .as_str()
            .is_some_and(|d| d.starts_with("declare `const Particle *__restrict__ p`")),
        "{suggested}"
    );
    // No host code: plain lengths.
    assert!(length_exprs("vec_add.cu")
        .iter()
        .all(|(_, e, _)| e.is_none()));
}

/// The kernels of `copper optimize` on `dir` (JSON).
fn optimized(dir: &std::path::Path, args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = vec!["optimize", ".", "--format", "json", "--exit-zero"];
    all.extend(args);
    let out = copper_in(dir, &all);
    assert!(out.status.success(), "{}", text(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    json["kernels"].as_array().unwrap().clone()
}

fn kernel_in<'a>(kernels: &'a [serde_json::Value], file: &str) -> &'a serde_json::Value {
    kernels
        .iter()
        .find(|k| k["file"].as_str().unwrap().ends_with(&format!("/{file}")))
        .unwrap_or_else(|| panic!("{file} missing"))
}

#[test]
fn the_assumed_block_reaches_the_analysis_and_the_transforms() {
    // By degree: without sizes in use, the staged rewrites below are
    // higher at the test launches' sizes, and not taken by default.
    let kernels = optimized(&students(), &["--asymptotic"]);
    // Without a launch, the block is assumed, said so, and analyzed with.
    for (file, block) in [
        ("matmul_tiled16.cu", [16, 16, 1]),
        ("transpose_tile32.cu", [32, 8, 1]),
        ("tile_add8.cu", [8, 8, 1]),
        ("vec_add.cu", [256, 1, 1]),
    ] {
        let k = kernel_in(&kernels, file);
        assert_eq!(k["block_assumed"], true, "{file}: {k}");
        assert_eq!(k["block"], serde_json::json!(block), "{file}");
        assert!(
            k["shape_from"]
                .as_str()
                .unwrap()
                .starts_with("assumed block"),
            "{file}: {}",
            k["shape_from"]
        );
        // Bounds for that block: no `blockDim` left in them.
        assert!(!k["bounds"].to_string().contains("blockDim"), "{file}: {k}");
    }
    let k = kernel_in(&kernels, "main_vec_add.cu");
    assert_eq!(k["block_assumed"], false);
    // Rewrites that need the block now apply: the 32×32 tile read by
    // columns is padded, work every thread repeats is staged in shared
    // memory.
    let improved = |k: &serde_json::Value| -> Vec<String> {
        assert_eq!(k["status"], "improved", "{k}");
        k["applied"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["transform"].as_str().unwrap().to_string())
            .collect()
    };
    let file = "transpose_tile32.cu";
    let transforms = improved(kernel_in(&kernels, file));
    assert_eq!(transforms, ["shared-memory padding"]);
    improved(kernel_in(&kernels, "every_thread_adds.cu"));
    improved(kernel_in(&kernels, "scale_rows_same_work.cu"));
    // The same rewrites as with a hand-written parameter file at the real
    // launch shape.
    let tmp = Scratch::new();
    let scratch = tmp.path();
    std::fs::copy(students().join(file), scratch.join(file)).unwrap();
    std::fs::write(
        scratch.join("transpose_tile32.toml"),
        "[kernel.transposeTile]\ngrid = [3, 3, 1]\nblock = [32, 8, 1]\n\
         [kernel.transposeTile.args]\nwidth = 96\nheight = 96\n\
         [kernel.transposeTile.arrays.idata]\nlen = \"width * height\"\ninit = \"random\"\n\
         [kernel.transposeTile.arrays.odata]\nlen = \"width * height\"\n",
    )
    .unwrap();
    let by_hand = optimized(scratch, &[]);
    assert_eq!(by_hand[0]["block_assumed"], false);
    assert_eq!(improved(&by_hand[0]), transforms);
}

#[test]
fn lint_uses_the_assumed_block_and_reports_races() {
    let out = copper_in(
        &students(),
        &[
            "lint",
            "racy_max.cu",
            "every_thread_adds.cu",
            "blur_macro2d.cu",
            "main_vec_add.cu",
            "--format",
            "json",
        ],
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let file = |name: &str| {
        json["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["file"] == name)
            .unwrap_or_else(|| panic!("{name}: {json}"))
            .clone()
    };
    let codes = |f: &serde_json::Value| -> Vec<String> {
        f["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["code"].as_str().unwrap().to_string())
            .collect()
    };
    // A race whose outcome depends on the schedule: an error naming both
    // threads and the element.
    let racy = file("racy_max.cu");
    let race = racy["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["code"] == "data-race")
        .unwrap_or_else(|| panic!("{racy}"));
    assert_eq!(
        (race["severity"].as_str(), race["line"].as_u64()),
        (Some("error"), Some(9))
    );
    let message = race["message"].as_str().unwrap();
    assert!(
        message.contains("threads (")
            && message.contains(" and (")
            && message.contains("`result[0]`"),
        "{message}"
    );
    // Every thread writing the same values is no race.
    assert!(!codes(&file("every_thread_adds.cu")).contains(&"data-race".to_string()));
    // The assumed block is said per kernel, and the finding found only
    // for it says so; a launch from host code is no assumption.
    let blur = file("blur_macro2d.cu");
    let assumed = blur["kernels"][0]["assumed_block"].as_str().unwrap();
    assert!(assumed.starts_with("assumed block 16×16×1"), "{assumed}");
    assert!(
        blur["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["code"] == "misaligned-global" && x["depends_on_assumed_block"] == true),
        "{blur}"
    );
    let main = file("main_vec_add.cu");
    assert!(main["kernels"][0]["assumed_block"].is_null(), "{main}");
    // Text: the error and the note.
    let out = copper_in(&students(), &["lint", "racy_max.cu"]);
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(t.contains("racy_max.cu:9:9: error[data-race]"), "{t}");
    assert!(
        t.contains("note: kernel `racyMax`: assumed block 256×1×1"),
        "{t}"
    );
}

/// The students' 3 × 3 filters written out and clamped at the image's
/// borders (`main_blur3_clamp.cu`, launched from its host code with
/// `dim3` 16 × 16 blocks over a 100 × 37 image; `sharpen_clamp.cu`,
/// `?:` clamps for the rows, no host code) get a halo tile loaded
/// clamped: the sectors per warp fall by over 40% (268 → 142.2 on the
/// assumed and the launched 16 × 16 blocks), and the `wsteps` the search
/// ranks by fall too.
#[test]
fn halo_tiles_of_clamped_filters_lower_both_bounds() {
    assert_halo_tiles(&["main_blur3_clamp.cu", "sharpen_clamp.cu"], 0.6);
}

/// Each of `files` is improved by a halo tile first, with the sectors
/// bound below `ratio` of the original's and a lower `wsteps` bound.
fn assert_halo_tiles(files: &[&str], ratio: f64) {
    let kernels = optimized(&students(), &[]);
    for file in files {
        let k = kernel_in(&kernels, file);
        assert_eq!(k["status"], "improved", "{file}: {k}");
        assert_eq!(k["applied"][0]["transform"], "halo tile", "{file}: {k}");
        let bound = |metric: &str, at: &str| bound_value(k, metric, at);
        let (before, after) = (
            bound("sectors", "before_value"),
            bound("sectors", "after_value"),
        );
        assert!(after < before * ratio, "{file}: sectors {before} → {after}");
        assert!(
            bound("wsteps", "after_value") < bound("wsteps", "before_value"),
            "{file}: {k}"
        );
    }
}

/// The students' 2-D windows get a halo tile and the bounds say why: the
/// sectors per warp fall to under a third (each pixel of the block's tile
/// read from global memory once instead of once per window), and so do
/// the `wsteps` the search ranks by.
#[test]
fn halo_tiles_of_2d_windows_lower_the_sectors_bound() {
    // Under a third: each pixel of the block's tile is read once.
    assert_halo_tiles(&["box_blur.cu", "main_blur5.cu"], 1.0 / 3.0);
}

/// The students' 5 × 5 filters that clamp or skip the neighbours through
/// statements on locals of the position (`box_blur_clamp_local.cu`:
/// `xx = xx < 0 ? 0 : (…)` and `if (yy < 0) yy = 0;`, launched from its
/// host code; `gauss_guard_continue.cu`: `if (xx < 0 || xx >= w)
/// continue;`, no host code) get a halo tile: the sectors per warp fall
/// to under a third (806 → 159.2 and 181 → 59.72), and so do or nearly
/// do the `wsteps` the search ranks by.
#[test]
fn halo_tiles_of_windows_clamped_or_skipped_through_locals() {
    assert_halo_tiles(
        &["box_blur_clamp_local.cu", "gauss_guard_continue.cu"],
        1.0 / 3.0,
    );
}

/// The students' 1-D windows clamped to the array through a local of the
/// position (`conv1d_clamp_local.cu`: `if (j < 0) j = 0; if (j >= n) j =
/// n - 1;`, launched from its host code; `smooth_minmax_local.cu`: `j =
/// min(max(j, 0), n - 1);`; `smooth_ternary_local.cu`: `j = j < 0 ? 0 :
/// …`), or skipped by `continue` (`window_skip1d.cu`),
/// and the 5 × 5 blur that skips the rows past the image by a `continue`
/// in its outer loop (`blur_rows_continue.cu`) get a halo tile: the
/// sectors per warp fall by more than half (235 → 75.63, 164 → 68.38
/// twice, 49 → 14.14, 156 → 34.72), and the `wsteps` fall too.
#[test]
fn halo_tiles_of_1d_clamps_through_locals_and_rows_skipped_in_the_outer_loop() {
    assert_halo_tiles(
        &[
            "conv1d_clamp_local.cu",
            "smooth_minmax_local.cu",
            "smooth_ternary_local.cu",
            "window_skip1d.cu",
            "blur_rows_continue.cu",
        ],
        0.5,
    );
}

/// The students' stencils written out as neighbour reads get a halo tile
/// candidate: on `main_smooth3.cu` (3-point, launched with 256 threads) it
/// lowers the sectors bound, so ranked by sectors it wins, while it loses
/// on `wsteps` (three reads do not pay for the load loop), the default
/// ranking; on `jacobi5.cu` (4 reads around the center, 16 × 16 blocks
/// assumed) a warp may run 4 rounds of the tile's load, as many accesses
/// as its reads, and the tile is refused with that reason; on `main_heat_rows.cu` (9-point, its row length
/// a local `const int W = width;`) the tile halves the sectors but loses
/// on `wsteps` too.
#[test]
fn halo_tiles_of_stencils_written_out_are_ranked_by_their_bounds() {
    let by_sectors = optimized(&students(), &["--metric", "sectors", "--explain"]);
    let k = kernel_in(&by_sectors, "main_smooth3.cu");
    assert_eq!(k["status"], "improved", "{k}");
    assert_eq!(k["applied"][0]["transform"], "halo tile", "{k}");
    let bound = bound_value;
    let (before, after) = (
        bound(k, "sectors", "before_value"),
        bound(k, "sectors", "after_value"),
    );
    assert!(after < before * 0.8, "sectors {before} → {after}");
    assert!(
        bound(k, "wsteps", "after_value") > bound(k, "wsteps", "before_value"),
        "{k}"
    );
    let jacobi = kernel_in(&by_sectors, "jacobi5.cu");
    assert_eq!(jacobi["status"], "unchanged", "{jacobi}");
    let explained = copper_in(&students(), &["optimize", "jacobi5.cu", "--explain"]);
    assert!(
        text(&explained).contains("`grid` is not loaded into a halo tile for its reads at line 14: each thread reads 4 elements of it, and on a 16×16 block a warp may run 4 rounds of the tile's load"),
        "{}",
        text(&explained)
    );
    // The 9-point heat step, its row length a `const int W = width;`.
    let heat = kernel_in(&by_sectors, "main_heat_rows.cu");
    assert_eq!(heat["status"], "improved", "{heat}");
    assert_eq!(heat["applied"][0]["transform"], "halo tile", "{heat}");
    let (before, after) = (
        bound(heat, "sectors", "before_value"),
        bound(heat, "sectors", "after_value"),
    );
    assert!(after * 1.5 < before, "sectors {before} → {after}");
    let by_wsteps = optimized(&students(), &[]);
    for file in ["main_smooth3.cu", "jacobi5.cu", "main_heat_rows.cu"] {
        assert_eq!(kernel_in(&by_wsteps, file)["status"], "unchanged", "{file}");
    }
}

/// The students' clamped 5-point smoothing (`in[max(i - 2, 0)]` …
/// `in[min(i + 2, n - 1)]`, launched from its host code) gets a halo tile
/// loaded clamped the same way, taken on `wsteps`: the analysis charges a
/// clamped index a sector per lane, so five clamped reads cost more than
/// the tile's two clamped load rounds.
#[test]
fn a_clamped_stencil_gets_a_halo_tile_loaded_clamped() {
    let kernels = optimized(&students(), &[]);
    let k = kernel_in(&kernels, "main_smooth5_clamp.cu");
    assert_eq!(k["status"], "improved", "{k}");
    assert_eq!(k["applied"][0]["transform"], "halo tile", "{k}");
    for metric in ["wsteps", "sectors"] {
        let (before, after) = (
            bound_value(k, metric, "before_value"),
            bound_value(k, metric, "after_value"),
        );
        assert!(after < before * 0.8, "{metric} {before} → {after}");
    }
}

/// The value at the sizes in use (`at`: `before_value` or `after_value`)
/// of `metric`'s bound in kernel result `k`.
fn bound_value(k: &serde_json::Value, metric: &str, at: &str) -> f64 {
    k["bounds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["metric"] == metric)
        .and_then(|b| b[at].as_f64())
        .unwrap_or_else(|| panic!("no {metric} {at}: {k}"))
}
