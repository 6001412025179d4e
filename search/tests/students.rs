//! Student files (`testdata/students/`, no parameter files): the launch
//! copper infers or evaluates from the host code for each, candidates
//! checked on it (not `unchecked`), a race that makes the original
//! uncheckable named with its line, `copper params` output that the
//! parameter-file loader reads back and the simulator runs, and
//! differential checks on an inferred launch that catch a copy into shared
//! memory without its guard.

mod common;

use std::path::PathBuf;

use common::{copper_in, root, text};
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
        "every_thread_adds.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
    (
        "histogram_shared.cu",
        "assumed block 256×1×1 from `local[threadIdx.x]` at line 8",
    ),
    (
        "main_matmul.cu",
        "tested on the launch at line 30 (grid 3×3×1, block 16×16×1)",
    ),
    (
        "main_vec_add.cu",
        "tested on the launch at line 31 (grid 3×1×1, block 256×1×1)",
    ),
    (
        "matmul_naive.cu",
        "assumed block 16×16×1 (the kernel indexes in two dimensions)",
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
        "reduce_shared.cu",
        "assumed block 256×1×1 from `sdata[tid]` at line 8",
    ),
    (
        "saxpy_stride.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
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
        "stencil_macro.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
    (
        "transpose_naive.cu",
        "assumed block 16×16×1 (the kernel indexes in two dimensions)",
    ),
    (
        "vec_add.cu",
        "assumed block 256×1×1 (the default for a one-dimensional kernel)",
    ),
    (
        "warp_sum.cu",
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
    assert_eq!(kernels.len(), EXPECTED.len(), "{}", text(&out));
    for (file, launch) in EXPECTED {
        let k = kernels
            .iter()
            .find(|k| k["file"].as_str().unwrap().ends_with(&format!("/{file}")))
            .unwrap_or_else(|| panic!("{file} missing"));
        let notes = k["test_launch"].as_array().unwrap();
        let first = notes[0].as_str().unwrap();
        assert!(first.starts_with(launch), "{file}: {first}");
        if *file == RACY {
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
            assert!(
                k["checked_launches"].as_u64().unwrap() >= 3,
                "{file}: {}",
                k["check_error"]
            );
        }
    }
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
    let scratch = std::env::temp_dir().join(format!("copper-params-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    for (file, _) in EXPECTED {
        let out = copper_in(&students(), &["params", file]);
        assert!(out.status.success(), "{file}: {}", text(&out));
        let toml = String::from_utf8(out.stdout).unwrap();
        let params = ParamFile::from_toml(&toml).unwrap_or_else(|e| panic!("{file}: {e}\n{toml}"));
        assert_eq!(params.kernel.len(), 1, "{file}");
        assert!(toml.contains("# "), "{file}: no comments");
        if *file == RACY {
            assert!(toml.contains("it races at line 9"), "{toml}");
            continue;
        }
        // Saved beside a copy of the file, the simulator runs it.
        std::fs::copy(students().join(file), scratch.join(file)).unwrap();
        std::fs::write(scratch.join(file).with_extension("toml"), &toml).unwrap();
        let sim = copper_in(&scratch, &["simulate", file]);
        assert!(sim.status.success(), "{file}: {}\n{toml}", text(&sim));
    }
    // The host code's lengths: `n * sizeof(float)` bytes of floats.
    let out = copper_in(&students(), &["params", "main_vec_add.cu"]);
    let p = ParamFile::from_toml(&String::from_utf8_lossy(&out.stdout)).unwrap();
    let k = &p.kernel["addVectors"];
    assert_eq!((k.args["n"], k.arrays["a"].len), (641.0, 641));
    assert_eq!(
        (k.grid.clone(), k.block.clone()),
        (vec![3, 1, 1], vec![256, 1, 1])
    );
    let _ = std::fs::remove_dir_all(&scratch);
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
    let plan = copper_search::launch::test_plan(&file, &kernel, None, &shape);
    assert_eq!((plan.spec.is_none(), plan.block), (true, Some([256, 1, 1])));
    let checker = Checker::new(&file, "vecAdd", None, plan.block, None).unwrap();
    let candidate = |guard: bool| {
        let f = parse_source(SourceFile::new("c.cu", staged(guard)));
        f.function("vecAdd").unwrap().clone()
    };
    assert_eq!(checker.check(&candidate(true)), Ok(()));
    let err = checker.check(&candidate(false)).unwrap_err();
    assert!(
        err.contains("out-of-bounds") && err.contains("`a["),
        "{err}"
    );
}
