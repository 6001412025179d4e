//! End-to-end tests of the `copper` binary: bad input gets a clear message
//! and the right exit status, never a panic.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{copper_in, root, text, Scratch};

fn copper(args: &[&str]) -> Output {
    copper_in(Path::new("."), args)
}

fn assert_clean_failure(o: &Output, status: i32, needle: &str) {
    let t = text(o);
    assert_eq!(o.status.code(), Some(status), "{t}");
    assert!(t.contains(needle), "expected `{needle}` in:\n{t}");
    assert!(!t.contains("panicked"), "{t}");
}

#[test]
fn missing_file_and_directory() {
    assert_clean_failure(
        &copper(&["parse", "/nonexistent/k.cu"]),
        2,
        "cannot read file",
    );
    let dir = std::env::temp_dir();
    assert_clean_failure(
        &copper(&["parse", dir.to_str().unwrap()]),
        2,
        "is a directory",
    );
}

#[test]
fn binary_non_utf8_and_huge_files() {
    let scratch = Scratch::new();
    let bin = scratch.file("bin.cu", &[0x7f, b'E', b'L', b'F', 0, 1, 2]);
    assert_clean_failure(&copper(&["parse", bin.to_str().unwrap()]), 2, "binary file");
    // A Latin-1 byte in a comment is fine; in code it is one diagnostic.
    let latin1 = scratch.file("latin1.cu", b"// caf\xe9\n__global__ void k() {}\n");
    let o = copper(&["parse", latin1.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let in_code = scratch.file("latin1_code.cu", b"__global__ void k() {}\nint caf\xe9;\n");
    assert_clean_failure(
        &copper(&["parse", in_code.to_str().unwrap()]),
        1,
        "latin1_code.cu:2:8: error[encoding]: a byte that is not UTF-8 in code",
    );
    let huge = scratch.file("huge.cu", &vec![b' '; 50 * 1024 * 1024]);
    assert_clean_failure(
        &copper(&["parse", huge.to_str().unwrap()]),
        2,
        "bytes, the most copper reads",
    );
    let _ = std::fs::remove_file(huge);
}

#[test]
fn deep_nesting_is_a_located_diagnostic() {
    let scratch = Scratch::new();
    let src = format!(
        "__global__ void k(int* a) {{\n  a[0] = {}1{};\n}}\n",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    let p = scratch.file("deep.cu", src.as_bytes());
    let o = copper(&["parse", p.to_str().unwrap()]);
    assert_clean_failure(&o, 1, "deep.cu:2:");
    assert!(text(&o).contains("error[too-deep]"));
}

#[test]
fn one_bad_kernel_does_not_stop_the_others() {
    let scratch = Scratch::new();
    let src = "#include <cstdio>\n__global__ void bad(int* a) {\n  a[0] = ;\n}\n\
               template <typename T>\n__global__ void tmpl(T* a) { a[0] = 0; }\n\
               __global__ void good(int* a, int n) { if (threadIdx.x < n) a[threadIdx.x] = 1; }\n\
               int main() { good<<<1, 32>>>(0, 3); }\n";
    let p = scratch.file("mixed.cu", src.as_bytes());
    let o = copper(&["parse", p.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("mixed.cu:3:10: error[syntax]"), "{t}");
    assert!(
        t.contains("mixed.cu:5:1: kernel template tmpl(T *a)"),
        "{t}"
    );
    assert!(
        t.contains("note: template never instantiated in the file; pass --instantiate 'tmpl<…>'"),
        "{t}"
    );
    assert!(t.contains("kernel good(int *a, int n)"), "{t}");
    assert!(t.contains("grid (1, 1, 1) block (32, 1, 1)"), "{t}");
    let fmt = copper(&["fmt", p.to_str().unwrap(), "--kernel", "good"]);
    assert!(String::from_utf8_lossy(&fmt.stdout).contains("__global__ void good(int *a, int n) {"));
}

#[test]
fn json_output_is_valid() {
    let scratch = Scratch::new();
    let p = scratch.file(
        "j.cu",
        b"__global__ void k(float* a) { a[threadIdx.x] = 0.0f; }\n",
    );
    let o = copper(&["kernels", "--format", "json", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(v["functions"][0]["name"], "k");
    assert_eq!(v["functions"][0]["kind"], "global");
}

const VADD: &str = "__global__ void vadd(const float *a, float *b, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) b[i] = a[i] * 2.0f;\n}\n";

fn vadd_params(extra: &str) -> String {
    format!("[kernel.vadd]\ngrid = [2]\nblock = [64]\n[kernel.vadd.args]\nn = 100\n{extra}")
}

const ARRAYS: &str =
    "[kernel.vadd.arrays.a]\nlen = 128\ninit = \"random\"\n[kernel.vadd.arrays.b]\nlen = 128\n";

#[test]
fn simulate_reports_costs_sites_and_dumps_arrays() {
    let scratch = Scratch::new();
    let cu = scratch.file("vadd.cu", VADD.as_bytes());
    scratch.file("vadd.toml", vadd_params(ARRAYS).as_bytes());
    let dump = cu.with_file_name("dump.json");
    let o = copper(&[
        "simulate",
        cu.to_str().unwrap(),
        "--dump",
        dump.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("2 blocks, 4 warps"), "{t}");
    assert!(
        t.contains("vadd.cu:3:14: b[i] (global write): 4 requests"),
        "{t}"
    );
    let d: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&dump).unwrap()).unwrap();
    assert_eq!(d["vadd"]["b"].as_array().unwrap().len(), 128);
    assert_eq!(d["vadd"]["b"][127], 0.0);
    let j = copper(&[
        "simulate",
        cu.to_str().unwrap(),
        "--format",
        "json",
        "--metric",
        "sectors",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).expect("json");
    assert_eq!(v["kernels"][0]["metrics"][0]["metric"], "sectors");
}

#[test]
fn simulate_bad_parameter_files() {
    let scratch = Scratch::new();
    let cu = scratch.file("vadd2.cu", VADD.as_bytes());
    let cases = [
        (
            vadd_params(ARRAYS).replace("n = 100\n", ""),
            2,
            "gives no value for argument `n`",
        ),
        (
            vadd_params(ARRAYS).replace("n = 100", "n = 1.5"),
            2,
            "argument `n` is an integer",
        ),
        (
            vadd_params(ARRAYS).replace("n = 100", "n = \"x\""),
            2,
            "invalid parameter file",
        ),
        (
            vadd_params(ARRAYS).replace("arrays.b]\nlen = 128", "arrays.b]\nlen = 50"),
            1,
            "out-of-bounds access `b[50]`",
        ),
        (
            vadd_params(ARRAYS).replace("grid = [2]", "grid = [0]"),
            2,
            "0 threads",
        ),
        (
            vadd_params(ARRAYS).replace("block = [64]", "block = [2048]"),
            2,
            "a block of 2048×1×1 threads is more than CUDA allows (x = 2048; at most 1024)",
        ),
        (
            vadd_params(ARRAYS).replace("block = [64]", "block = [0, 1, 1]"),
            2,
            "the launch has 0 threads: block.x is 0 (every dimension is at least 1)",
        ),
        (
            vadd_params(ARRAYS).replace("block = [64]", "block = [32, 32, 2]"),
            2,
            "(2048 threads; at most 1024 a block)",
        ),
        (
            vadd_params(ARRAYS).replace("grid = [2]", "grid = [1, 65536]"),
            2,
            "a grid of 1×65536×1 blocks is more than CUDA allows (y = 65536; at most 65535)",
        ),
        (vadd_params(""), 2, "describes no array `a`"),
    ];
    for (i, (params, status, needle)) in cases.iter().enumerate() {
        let p = scratch.file(&format!("bad{i}.toml"), params.as_bytes());
        let o = copper(&[
            "simulate",
            cu.to_str().unwrap(),
            "--params",
            p.to_str().unwrap(),
        ]);
        assert_clean_failure(&o, *status, needle);
    }
    let spin = scratch.file("spin.cu", b"__global__ void vadd(const float *a, float *b, int n) { while (n > 0) { b[0] = 1.0f; } }\n");
    let p = scratch.file(
        "spin.toml",
        vadd_params(ARRAYS)
            .replace("block = [64]", "block = [1]")
            .as_bytes(),
    );
    let o = copper(&[
        "simulate",
        spin.to_str().unwrap(),
        "--params",
        p.to_str().unwrap(),
        "--max-steps",
        "100000",
    ]);
    assert_clean_failure(&o, 1, "step budget");
    assert_clean_failure(
        &copper(&[
            "simulate",
            cu.to_str().unwrap(),
            "--params",
            "/nonexistent.toml",
        ]),
        2,
        "cannot read parameter file",
    );
    assert_clean_failure(
        &copper(&["simulate", cu.to_str().unwrap(), "--metric", "bogus"]),
        2,
        "unknown metric `bogus`",
    );
}

fn testdata(name: &str) -> String {
    format!("{}/../testdata/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn analyze_prints_bounds_and_checks_them() {
    let o = copper(&["analyze", &testdata("addSub2.cu"), "--check"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("steps      per warp ≤ 12 + 32·(h + 1)"), "{t}");
    assert!(t.contains("launch (32 warps) ≤"), "{t}");
    assert!(t.contains("block time ≤ W/4 + S"), "{t}");
    assert!(
        t.contains("check against the simulator at h = 64, w = 1024"),
        "{t}"
    );
    assert!(
        t.contains("steps      bound 2092, simulated worst warp 1932"),
        "{t}"
    );
    // One metric, a block from the command line, JSON.
    let o = copper(&[
        "analyze",
        &testdata("reduce2.cu"),
        "--metric",
        "divwarps",
        "--block",
        "256",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let m = &v["kernels"][0]["metrics"][0];
    assert_eq!(m["metric"], "divwarps");
    assert_eq!(m["per_warp"]["bound"], "9");
    assert_eq!(v["kernels"][0]["shape_from"], "command line");
}

#[test]
fn analyze_explains_missing_bounds_and_rejects_bad_input() {
    let scratch = Scratch::new();
    let src = "__global__ void forever(int *a) { while (a[0] > 0) { a[threadIdx.x] += 1; } }\n\
               __global__ void fine(int *a, int n) { for (int i = 0; i < n; i++) { a[i] = i; } }\n";
    let f = scratch.file("unbounded.cu", src.as_bytes());
    let o = copper(&[
        "analyze",
        f.to_str().unwrap(),
        "--metric",
        "steps",
        "--block",
        "64",
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("no bound: its condition bounds no counter"),
        "{t}"
    );
    assert!(t.contains("unbounded.cu:1:35"), "{t}");
    assert!(
        t.contains("per warp ≤"),
        "the other kernel is still bounded:\n{t}"
    );
    let path = f.to_str().unwrap();
    assert_clean_failure(
        &copper(&["analyze", "/nonexistent/k.cu"]),
        2,
        "cannot read file",
    );
    assert_clean_failure(
        &copper(&["analyze", path, "--metric", "nope"]),
        2,
        "unknown metric",
    );
    assert_clean_failure(
        &copper(&["analyze", path, "--kernel", "nope"]),
        2,
        "no kernel named `nope`",
    );
    // Nonsense launch shapes name the limit they break.
    for (block, limit) in [
        ("2048", "(x = 2048; at most 1024)"),
        ("32x32x2", "(2048 threads; at most 1024 a block)"),
        ("32,32,2", "(2048 threads; at most 1024 a block)"),
        ("1,1,65", "(z = 65; at most 64)"),
        ("32,0", "block.y is 0"),
        ("1,2,3,4", "expected 1 to 3 sizes"),
    ] {
        let o = copper(&["analyze", path, "--block", block]);
        assert_clean_failure(&o, 2, limit);
        assert_clean_failure(&o, 2, "--block");
    }
    assert_clean_failure(
        &copper(&["analyze", path, "--grid", "1x65536"]),
        2,
        "(y = 65536; at most 65535)",
    );
    assert_clean_failure(&copper(&["analyze", path, "--degree", "9"]), 2, "--degree");
    assert_clean_failure(&copper(&["analyze", path, "--budget=-1"]), 2, "budget");
    assert_clean_failure(
        &copper(&["analyze", path, "--params", "/nonexistent.toml"]),
        2,
        "cannot read parameter file",
    );
    // --check without a parameter entry is an error for that kernel.
    assert_clean_failure(
        &copper(&["analyze", path, "--check"]),
        1,
        "no parameter file entry",
    );
}

fn project() -> PathBuf {
    common::root().join("testdata/projects/stencil")
}

#[test]
fn headers_are_found_with_dash_i_or_copper_toml() {
    let p = project();
    let (inc, cu) = (p.join("inc"), p.join("stencil.cu"));
    let o = copper(&["parse", "-I", inc.to_str().unwrap(), cu.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("kernel blur_rows(const real *in, real *out, int w, int h)"),
        "{t}"
    );
    assert!(
        t.contains("stencil.h:24:1: device function square(real x) (from a header)"),
        "{t}"
    );
    // Without -I: one diagnostic naming the header and the path searched;
    // the rest of the file is still read.
    let o = copper(&["parse", cu.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert_eq!(t.matches("not found").count(), 1, "{t}");
    assert!(
        t.contains("stencil.cu:10:1: warning[include]: header `stencil.h` not found (searched "),
        "{t}"
    );
    assert!(t.contains("kernel scale_rows"), "{t}");
    // The project's copper.toml gives include_dirs and defines.
    let o = copper_in(&p, &["parse", "stencil.cu", "scale_n.cu"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = copper_in(&p, &["simulate", "scale_n.cu"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // The command line wins: -U removes the configuration's N.
    let o = copper_in(&p, &["simulate", "-U", "N", "scale_n.cu"]);
    assert_clean_failure(&o, 2, "pass -DN=");
    // -D as nvcc takes it, on every command that reads CUDA.
    let n = p.join("scale_n.cu");
    let n = n.to_str().unwrap();
    for args in [
        vec!["parse", "-DN=256", n],
        vec!["fmt", "-D", "N=256", n],
        vec!["simulate", "-DN=256", n],
        vec!["analyze", "-DN=256", n],
        vec!["lint", "-DN=256", n],
    ] {
        let o = copper(&args);
        let t = text(&o);
        assert!(
            o.status.code() == Some(0) || args[0] == "lint",
            "{args:?}: {t}"
        );
        assert!(!t.contains("error"), "{args:?}: {t}");
    }
    let o = copper(&["parse", n]);
    assert!(text(&o).contains("block (not literal)\n    note: `N` is not defined in the file or its headers; pass -DN="), "{}", text(&o));
    let o = copper(&["analyze", n]);
    assert_clean_failure(&o, 1, "array size needs the value of `N`: `N` is not defined in the file or its headers; pass -DN=");
    assert_clean_failure(
        &copper(&["parse", "-I", n, n]),
        2,
        "is a file; -I takes a directory",
    );
    assert_clean_failure(&copper(&["parse", "-D", "1X=2", n]), 2, "not a macro name");
}

#[test]
fn optimize_rewrites_only_the_user_file() {
    let scratch = Scratch::new();
    let dir = scratch.path();
    std::fs::create_dir_all(dir.join("inc")).unwrap();
    for f in [
        "stencil.cu",
        "stencil.toml",
        "copper.toml",
        "inc/stencil.h",
        "inc/clamp.h",
    ] {
        std::fs::copy(project().join(f), dir.join(f)).unwrap();
    }
    let header = std::fs::read(dir.join("inc/stencil.h")).unwrap();
    let o = copper_in(dir, &["optimize", "--write", "stencil.cu"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("scale_rows: improved"), "{t}");
    let cu = std::fs::read_to_string(dir.join("stencil.cu")).unwrap();
    assert!(cu.contains("factor_elem = factor[r];") && cu.contains("#include \"stencil.h\""));
    assert_eq!(std::fs::read(dir.join("inc/stencil.h")).unwrap(), header);
    // The rewritten file reads back as well as the original.
    let o = copper_in(dir, &["parse", "stencil.cu"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn include_cycles_depth_and_bad_headers_are_clear_errors() {
    let scratch = Scratch::new();
    let dir = scratch.path();
    let put = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    let kernel = "__global__ void k(int *x) { x[0] = A; }\n";
    put("a.h", "#include \"b.h\"\n#define A 1\n");
    put("b.h", "#include \"a.h\"\n");
    put("cycle.cu", &format!("#include \"a.h\"\n{kernel}"));
    let o = copper_in(dir, &["parse", "cycle.cu"]);
    assert_clean_failure(
        &o,
        1,
        "b.h:1:1: error[include]: include cycle: a.h → b.h → a.h; `a.h` is not included again",
    );
    assert!(text(&o).contains("kernel k(int *x)"), "{}", text(&o));
    // A header including the file itself.
    put("self.h", "#include \"selfish.cu\"\n#define A 1\n");
    put("selfish.cu", &format!("#include \"self.h\"\n{kernel}"));
    let o = copper_in(dir, &["parse", "selfish.cu"]);
    assert_clean_failure(&o, 1, "include cycle: selfish.cu → self.h → selfish.cu");
    // Guarded headers may include each other, as with nvcc.
    put("g1.h", "#pragma once\n#include \"g2.h\"\n#define A 1\n");
    put(
        "g2.h",
        "#ifndef G2_H\n#define G2_H\n#include \"g1.h\"\n#endif\n",
    );
    put("guarded.cu", &format!("#include \"g1.h\"\n{kernel}"));
    let o = copper_in(dir, &["parse", "guarded.cu"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // 70 nested headers: the 65th is not read.
    for i in 0..70 {
        put(&format!("d{i}.h"), &format!("#include \"d{}.h\"\n", i + 1));
    }
    put(
        "deep.cu",
        &format!("#define A 1\n#include \"d0.h\"\n{kernel}"),
    );
    let o = copper_in(dir, &["parse", "deep.cu"]);
    assert_clean_failure(
        &o,
        1,
        "d63.h:1:1: error[include]: `#include` nested more than 64 deep",
    );
    // A missing header inside a header points into that header.
    put("outer.h", "#define A 1\n#include \"missing.h\"\n");
    put("outer.cu", &format!("#include \"outer.h\"\n{kernel}"));
    let o = copper_in(dir, &["parse", "outer.cu"]);
    // A warning: every kernel is read, so parse succeeds.
    assert_clean_failure(
        &o,
        0,
        "outer.h:2:1: warning[include]: header `missing.h` not found",
    );
    assert!(text(&o).contains("included at outer.cu:1"), "{}", text(&o));
    // System headers are skipped; a header that is a directory is an error.
    std::fs::create_dir_all(dir.join("dir.h")).unwrap();
    put(
        "sys.cu",
        &format!("#include <cuda_runtime.h>\n#include <vector>\n#define A 1\n{kernel}"),
    );
    let o = copper_in(dir, &["parse", "sys.cu"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // The toolkit's headers are not read even from an -I directory, and a
    // header's definitions of CUDA's qualifiers are ignored.
    std::fs::create_dir_all(dir.join("toolkit")).unwrap();
    put(
        "toolkit/cuda_runtime.h",
        "#define __device__ __location__(device)\n",
    );
    put(
        "toolkit/mylib.h",
        "#define __global__ __location__(global)\n#define A 1\n",
    );
    put(
        "toolkit.cu",
        &format!("#include <cuda_runtime.h>\n#include <mylib.h>\n{kernel}"),
    );
    let o = copper_in(dir, &["parse", "-I", "toolkit", "toolkit.cu"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("kernel k(int *x)"), "{}", text(&o));
}

#[test]
fn headers_over_the_size_limit_are_clear_errors() {
    let scratch = Scratch::new();
    let dir = scratch.path();
    let comment =
        |mib: usize| "// filler line of a generated header\n".repeat(mib * 1024 * 1024 / 37);
    let kernel = "#define A 1\n__global__ void k(int *x) { x[0] = A; }\n";
    // One header over the 16 MiB file limit.
    std::fs::write(dir.join("huge.h"), comment(17)).unwrap();
    std::fs::write(dir.join("one.cu"), format!("#include \"huge.h\"\n{kernel}")).unwrap();
    let start = std::time::Instant::now();
    let o = copper_in(dir, &["parse", "one.cu"]);
    assert_clean_failure(
        &o,
        1,
        "one.cu:1:1: error[include]: cannot read header `huge.h`",
    );
    assert!(text(&o).contains("kernel k(int *x)"), "{}", text(&o));
    // Two headers each under it, over it together: the second is not read.
    std::fs::write(dir.join("half1.h"), comment(9)).unwrap();
    std::fs::write(dir.join("half2.h"), comment(9)).unwrap();
    std::fs::write(
        dir.join("two.cu"),
        format!("#include \"half1.h\"\n#include \"half2.h\"\n{kernel}"),
    )
    .unwrap();
    let o = copper_in(dir, &["parse", "two.cu"]);
    assert_clean_failure(
        &o,
        1,
        "two.cu:2:1: error[include]: headers of more than 16777216 bytes in all; `half2.h` is not read",
    );
    assert!(text(&o).contains("kernel k(int *x)"), "{}", text(&o));
    assert!(start.elapsed().as_secs() < 60, "{:?}", start.elapsed());
}

#[test]
fn undefined_identifiers_conditionals_and_header_kernels_on_the_command_line() {
    let course = root().join("testdata/projects/course");
    // analyze: one note per symbol, the bound in N, checked at the
    // parameter file's N.
    let o = copper_in(&course, &["analyze", "matvec_n.cu", "--check"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert_eq!(t.matches("warning[symbol]").count(), 1, "{t}");
    assert!(t.contains("matvec_n.cu:10:15: warning[symbol]: `N` is not defined in the file: treated as an unknown constant; pass -DN=… to fix it"), "{t}");
    assert!(
        t.contains("wsteps     per warp ≤ 41 + 183·max(0, N)"),
        "{t}"
    );
    assert!(t.contains("check against the simulator at N = 200"), "{t}");
    // -D makes it a constant: no note, no N.
    let o = copper_in(&course, &["analyze", "matvec_n.cu", "-DN=200"]);
    let t = text(&o);
    assert!(!t.contains("warning[symbol]") && !t.contains('N'), "{t}");
    // simulate takes N from [kernel.matvec.defines].
    let o = copper_in(&course, &["simulate", "matvec_n.cu"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // Without a parameter file, the synthesized test launches give N
    // values (optimize simulates only when a candidate beats the
    // original; the lint's race search always runs them).
    let scratch = Scratch::new();
    let dir = scratch.path();
    std::fs::copy(course.join("saxpy_n.cu"), dir.join("saxpy_n.cu")).unwrap();
    let o = copper_in(dir, &["lint", "saxpy_n.cu", "--block", "128"]);
    let t = text(&o);
    assert!(
        t.contains(
            "independent of block size (assuming no data race; none found in 3 simulated launches)"
        ),
        "{t}"
    );
    // A header's kernel is analyzed at the header's lines, and searched there.
    let blur = root().join("testdata/projects/blur");
    let o = copper_in(&blur, &["analyze", "blur.cu", "--kernel", "zero_borders"]);
    assert!(
        text(&o).contains("blur.h:20:1: kernel zero_borders"),
        "{}",
        text(&o)
    );
    let o = copper_in(&blur, &["optimize", "blur.cu", "--kernel", "zero_borders"]);
    assert!(
        text(&o).contains("blur.h:20:1: kernel zero_borders")
            && text(&o).contains("`zero_borders` is defined in a header shared by every file that includes it (a rewrite changes the header)"),
        "{}",
        text(&o)
    );
}

#[test]
fn crlf_and_byte_order_mark_files() {
    let scratch = Scratch::new();
    let src = "\u{feff}#define N 4\r\n#define ADD(a, b) \\\r\n    ((a) + (b))\r\n__global__ void k(int *x) {\r\n    x[threadIdx.x] = ADD(N, 1);\r\n}\r\n";
    let f = scratch.file("crlf_bom.cu", src.as_bytes());
    let o = copper(&["parse", f.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("crlf_bom.cu:4:1: kernel k(int *x)"), "{t}");
    let o = copper(&["fmt", "--whole", f.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("\u{feff}#define N 4\r\n"));
}

#[test]
fn a_launch_cuda_would_refuse_is_not_used_as_the_shape() {
    let scratch = Scratch::new();
    let p = scratch.file(
        "big-launch.cu",
        b"__global__ void k(float *a) { a[threadIdx.x] = 1; }\nvoid host(float *a) { k<<<1, 100000>>>(a); }\n",
    );
    let o = copper(&["analyze", p.to_str().unwrap()]);
    let t = text(&o);
    // Before: "block 100000x1x1 (from the launch at line 2)" and a bound
    // for a launch of 3125 warps.
    assert!(
        t.contains("the launch at line 2 is not one CUDA runs"),
        "{t}"
    );
    assert!(t.contains("more than CUDA allows"), "{t}");
    assert!(!t.contains("3125 warps"), "{t}");
}

#[test]
fn a_launch_cuda_would_refuse_is_not_tested_on() {
    let scratch = Scratch::new();
    // A block over 1024 threads small enough to simulate, and a grid
    // over CUDA's 65535 in y.
    for (launch, why) in [
        ("k<<<1, 2048>>>(a)", "a block of 2048×1×1 threads"),
        ("k<<<dim3(1, 70000), 32>>>(a)", "a grid of 1×70000×1 blocks"),
    ] {
        let src = format!(
            "__global__ void k(float *a) {{ a[threadIdx.x] = 1; }}\nvoid host(float *a) {{ {launch}; }}\n"
        );
        let p = scratch.file("refused-launch.cu", src.as_bytes());
        let p = p.to_str().unwrap();
        let o = copper(&["parse", p]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(0), "{t}");
        assert!(t.contains("note: CUDA refuses this launch"), "{t}");
        assert!(t.contains(why), "{t}");
        // Before: `params` wrote this launch, which copper then refused
        // as "the parameter file's launch".
        let o = copper(&["params", p]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(0), "{t}");
        assert!(
            t.contains("the launch at line 2 is not one CUDA runs") && t.contains(why),
            "{t}"
        );
        assert!(
            t.contains("block = [256, 1, 1]\n") && t.contains("grid = [2, 1, 1]\n"),
            "{t}"
        );
        let o = copper(&["optimize", p]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(0), "{t}");
        assert!(!t.contains("parameter file"), "{t}");
    }
}

#[test]
fn a_header_named_only_in_a_branch_not_taken_is_not_looked_for() {
    let scratch = Scratch::new();
    let f = scratch.file(
        "inactive_include.cu",
        b"#ifdef USE_EXTRA\n#include \"extra.h\"\n#endif\n__global__ void k(float *a) { a[0] = 1; }\n",
    );
    let f = f.to_str().unwrap();
    let o = copper(&["parse", f]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(!t.contains("extra.h"), "{t}");
    // Taken, the branch's missing header is reported at its directive.
    let o = copper(&["parse", "-DUSE_EXTRA", f]);
    let t = text(&o);
    assert!(
        t.contains("inactive_include.cu:2:1: warning[include]: header `extra.h` not found"),
        "{t}"
    );
    // A warning alone, every kernel read: parse succeeds (it exited 1).
    assert_eq!(o.status.code(), Some(0), "{t}");
}

#[test]
fn a_kernel_is_placed_at_its_first_line_by_every_command() {
    let scratch = Scratch::new();
    scratch.file(
        "lud.cu",
        b"__global__ void\nlud_diagonal(float *m, int n)\n{\n    m[threadIdx.x] = 0;\n}\n",
    );
    let dir = scratch.path();
    // parse placed it at its name's line (2) where analyze says line 1.
    let t = text(&copper_in(dir, &["parse", "lud.cu"]));
    assert!(
        t.contains("lud.cu:1:1: kernel lud_diagonal(float *m, int n)"),
        "{t}"
    );
    let o = copper_in(dir, &["parse", "--format", "json", "lud.cu"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["functions"][0]["line"], 1, "{doc}");
    let args = ["lud.cu", "--block", "32", "--grid", "1"];
    let t = text(&copper_in(dir, &[&["analyze"][..], &args].concat()));
    assert!(t.contains("lud.cu:1:1: kernel lud_diagonal:"), "{t}");
    let t = text(&copper_in(dir, &[&["lint"][..], &args].concat()));
    assert!(t.contains("lud.cu:1:1: note: kernel `lud_diagonal`"), "{t}");
    let o = copper_in(
        dir,
        &[&["optimize", "--format", "json"][..], &args].concat(),
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["kernels"][0]["line"], 1, "{doc}");
}

#[test]
fn a_cooperative_group_parameter_is_listed_with_its_type() {
    let scratch = Scratch::new();
    scratch.file(
        "cg.cu",
        b"#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n\n__device__ float first(cg::thread_block block, float *s, float v) {\n    s[block.thread_rank()] = v;\n    block.sync();\n    return s[0];\n}\n\n__global__ void k(float *a) {\n    __shared__ float s[256];\n    cg::thread_block block = cg::this_thread_block();\n    a[threadIdx.x] = first(block, s, a[threadIdx.x]);\n}\n",
    );
    let dir = scratch.path();
    // It was listed as `int block`, the stand-in copper reads it as.
    let t = text(&copper_in(dir, &["parse", "cg.cu"]));
    assert!(
        t.contains("device function first(cg::thread_block block, float *s, float v)"),
        "{t}"
    );
    let o = copper_in(dir, &["parse", "--format", "json", "cg.cu"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        doc["functions"][0]["params"][0]["type"], "cg::thread_block",
        "{doc}"
    );
}

#[test]
fn a_missing_header_names_each_directory_searched_once() {
    let scratch = Scratch::new();
    scratch.file(
        "k.cu",
        b"#include \"gone.h\"\n__global__ void k(float *a) { a[0] = 1; }\n",
    );
    let dir = scratch.path();
    std::fs::create_dir(dir.join("inc")).unwrap();
    // `-I` naming the file's own directory, twice, as `.` and as `./`.
    let o = copper_in(dir, &["parse", "-I", ".", "-I", "./", "-I", "inc", "k.cu"]);
    let t = text(&o);
    assert!(
        t.contains("header `gone.h` not found (searched ., inc); pass -I DIR"),
        "{t}"
    );
    assert_eq!(o.status.code(), Some(0), "{t}");
    // An error (a kernel not read) still fails.
    scratch.file(
        "bad.cu",
        b"#include \"gone.h\"\n__global__ void k(float *a) { a[0] = @; }\n",
    );
    let o = copper_in(dir, &["parse", "bad.cu"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
}

#[test]
fn kernel_option_names_an_instantiation_as_the_user_writes_it() {
    let scratch = Scratch::new();
    let f = scratch.file(
        "default_args.cu",
        b"template <typename T, int BS = 32>\n__global__ void scale(T *a, T s, int n) {\n    int i = blockIdx.x * BS + threadIdx.x;\n    if (i < n) a[i] = a[i] * s;\n}\nvoid host(float *d, int n) { scale<float><<<n / 32, 32>>>(d, 2.0f, n); }\n",
    );
    let f = f.to_str().unwrap();
    for k in ["scale<float>", "scale<float,32>", "scale< float , 32 >"] {
        let o = copper(&["analyze", f, "--kernel", k, "--block", "32", "--grid", "2"]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(0), "{k}: {t}");
        assert!(
            t.contains("kernel scale<float, 32>: block 32×1×1"),
            "{k}: {t}"
        );
        let o = copper(&["params", f, "--kernel", k]);
        assert!(
            text(&o).contains("[kernel.\"scale<float, 32>\"]"),
            "{k}: {}",
            text(&o)
        );
        // The parameter file copper writes is one copper reads back.
        let toml = f.replace(".cu", ".toml");
        std::fs::write(&toml, &o.stdout).unwrap();
        let o = copper(&["simulate", f, "--kernel", k]);
        assert_eq!(o.status.code(), Some(0), "{k}: {}", text(&o));
    }
    let o = copper(&["analyze", f, "--kernel", "scale<double>"]);
    assert_clean_failure(
        &o,
        2,
        "no kernel named `scale<double, 32>` (kernels: scale<float, 32>)",
    );
}
