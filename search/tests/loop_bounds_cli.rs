//! Loop bounds end to end: `copper analyze` on counters a user names like
//! copper's jump flags, `int` bounds of unsigned counters and grid-stride
//! loops, bounded under the assumptions the output prints.

mod common;

use std::path::Path;
use std::process::Output;

use common::{copper_in, text, Scratch};

fn copper(args: &[&str]) -> Output {
    copper_in(Path::new("."), args)
}

fn testdata(name: &str) -> String {
    format!("{}/../testdata/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn a_user_variable_named_like_a_jump_flag_is_explained_as_a_counter() {
    let scratch = Scratch::new();
    // copper's own jump flags are told apart by identity, not by a name
    // prefix a user may also write.
    let f = scratch.file(
        "left_counter.cu",
        b"__global__ void k(float *a, int n, int s) {\n    for (int left_i = 0; left_i < n; left_i += s) a[threadIdx.x] += 1.0f;\n}\n",
    );
    let o = copper(&[
        "analyze",
        f.to_str().unwrap(),
        "--block",
        "32",
        "--grid",
        "1",
    ]);
    let t = text(&o);
    assert!(
        t.contains("`left_i` may not move toward the loop's bound by a constant step"),
        "{t}"
    );
}

#[test]
fn int_bounds_of_unsigned_counters_are_assumed_nonnegative() {
    let scratch = Scratch::new();
    let file = testdata("grid_stride_int_n.cu");
    let o = copper(&["analyze", &file, "--check"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    for line in [
        "assuming 0 ≤ n (a negative `n`, converted to unsigned, lets the counter `i` wrap around): the bounds hold only for such inputs",
        "assuming 0 ≤ cols (a negative `cols`, converted to unsigned, lets the counter `c` wrap around)",
        "check against the simulator at n = 20000, s = 0.5",
        "check against the simulator at cols = 300, rows = 64",
    ] {
        assert!(t.contains(line), "expected `{line}` in:\n{t}");
    }
    assert!(!t.contains("no bound"), "{t}");
    // A negative n runs the loop until the counter wraps around: outside
    // the assumption, so not compared.
    let params = scratch.file(
        "negative_n.toml",
        b"[kernel.scale_int_n]\ngrid = [32]\nblock = [256]\nargs = { s = 0.5, n = -5 }\n\
          [kernel.scale_int_n.arrays.data]\nlen = 16\n",
    );
    let o = copper(&[
        "analyze",
        &file,
        "--kernel",
        "scale_int_n",
        "--params",
        params.to_str().unwrap(),
        "--check",
    ]);
    let t = text(&o);
    assert!(
        t.contains(
            "check: the parameter file's n = -5 breaks the bounds' assumption 0 ≤ n: not compared"
        ),
        "{t}"
    );
    let o = copper(&[
        "analyze",
        &file,
        "--kernel",
        "scale_int_n",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let a = &v["kernels"][0]["input_assumptions"][0];
    assert_eq!(
        (a["param"].as_str(), a["at_least"].as_i64()),
        (Some("n"), Some(0))
    );
    assert!(a["at_most"].is_null(), "{a}");
}

#[test]
fn grid_stride_loops_are_bounded_without_a_launch() {
    let scratch = Scratch::new();
    // The file's launch is computed from the command line, and a scratch
    // copy has no parameter file: nothing is known of the launch.
    let src = std::fs::read(testdata("grid_stride_symbolic.cu")).unwrap();
    let file = scratch.file("grid_stride_symbolic.cu", &src);
    let o = copper(&["analyze", file.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(!t.contains("no bound"), "{t}");
    assert_eq!(t.matches("any block and grid").count(), 3, "{t}");
    // A 64-bit stride needs nothing of the launch; a 32-bit one needs a
    // grid small enough that it does not wrap around.
    let of = |kernel: &str| {
        let start = t.find(&format!("kernel {kernel}:")).expect(kernel);
        let rest = &t[start + 1..];
        rest[..rest.find("kernel ").unwrap_or(rest.len())].to_string()
    };
    assert!(of("axpy_sizet").contains("assuming n ≤ 2^63 − 1"), "{t}");
    assert!(!of("axpy_sizet").contains("assuming gridDim"), "{t}");
    // Without a block, each loop runs `⌈n/(blockDim.x·gridDim.x)⌉` times
    // per warp, not `n`.
    for (k, n) in [
        ("axpy_sizet", "n"),
        ("fill_u32", "n"),
        ("copy4_sizet", "n4"),
    ] {
        let q = format!("·⌈{n}/(blockDim.x·gridDim.x)⌉");
        assert!(of(k).contains(&q), "{k}: {t}");
        assert!(!of(k).contains(&format!("max(0, {n})")), "{k}: {t}");
    }
    for k in ["fill_u32", "copy4_sizet"] {
        assert!(
            of(k).contains("assuming gridDim.x ≤ 2^21 (a larger grid lets the stride of the counter `i` wrap around)"),
            "{k}: {t}"
        );
    }
    let o = copper(&[
        "analyze",
        file.to_str().unwrap(),
        "--kernel",
        "fill_u32",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let grid = v["kernels"][0]["input_assumptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["launch"] == true)
        .cloned()
        .expect("a launch assumption");
    assert_eq!(grid["param"], "gridDim.x");
    assert_eq!(grid["at_most"], 1 << 21);
}

#[test]
fn unsigned_grid_stride_loops_are_bounded_under_a_printed_assumption() {
    let scratch = Scratch::new();
    let file = testdata("grid_stride_sizet.cu");
    let o = copper(&["analyze", &file, "--check"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    for line in [
        "assuming n ≤ 2^63 − 1 (a larger `n` lets the counter `i` wrap around): the bounds hold only for such inputs",
        "assuming count ≤ 2^63 − 1 (a larger `count` lets the counter `k` wrap around)",
        "assuming n ≤ 2^31 − 1 (a larger `n` lets the counter `i` wrap around)",
        "check against the simulator at a = 2, n = 40000",
    ] {
        assert!(t.contains(line), "expected `{line}` in:\n{t}");
    }
    assert!(!t.contains("no bound"), "{t}");
    // In JSON, the assumption is the kernel's.
    let o = copper(&[
        "analyze",
        &file,
        "--kernel",
        "saxpy_sizet",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let a = &v["kernels"][0]["input_assumptions"][0];
    assert_eq!(a["param"], "n");
    assert_eq!(a["at_most"], i64::MAX);
    assert_eq!(a["text"], "n ≤ 2^63 − 1");
    // Inputs that break the assumption are not compared with the bound.
    let params = scratch.file(
        "outside_assumption.toml",
        b"[kernel.\"reduce_grid<256>\"]\ngrid = [64]\nblock = [256]\nargs = { n = 3000000000 }\n\
          [kernel.\"reduce_grid<256>\".arrays.g_idata]\nlen = 16\n\
          [kernel.\"reduce_grid<256>\".arrays.g_odata]\nlen = 64\n",
    );
    let o = copper(&[
        "analyze",
        &file,
        "--kernel",
        "reduce_grid<256>",
        "--params",
        params.to_str().unwrap(),
        "--check",
    ]);
    let t = text(&o);
    assert!(
        t.contains("check: the parameter file's n = 3000000000 breaks the bounds' assumption n ≤ 2^31 − 1: not compared"),
        "{t}"
    );
    assert!(!t.contains("panicked"), "{t}");
}
