//! `copper bench`: the programs it writes for every testdata file are
//! well-formed (copper's own front end reads them, both kernels and the
//! comparison and timing are there), the inputs they generate are the
//! simulator's (checked with g++ when there is one), sweeps follow the
//! swept argument, and bad input fails cleanly with nothing written.

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output};

use common::{copper_in, root, text, Scratch};
use copper::cuda::ast::FnKind;
use copper::cuda::parse::{parse_path, parse_source, ParsedFile};
use copper::ir::Scalar;
use copper::sim::fill;
use copper::sim::params::{ArraySpec, InitKind, ParamFile};
use copper::source::SourceFile;
use copper_search::bench::{self, cxx, KernelBench, Options};

fn copper(args: &[&str]) -> Output {
    copper_in(&root(), args)
}

/// Every `testdata/*.cu` with a parameter file.
fn testdata() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join("testdata"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cu") && p.with_extension("toml").exists())
        .collect();
    out.sort();
    assert!(out.len() > 30);
    out
}

/// The kernels of a file copper reads.
fn readable_kernels(parsed: &ParsedFile) -> Vec<String> {
    parsed
        .functions
        .iter()
        .filter(|f| {
            f.item.kind == FnKind::Global && f.result.as_ref().is_ok_and(|k| !k.is_uninstantiated())
        })
        .map(|f| f.item.name.clone())
        .collect()
}

/// Checks what every program must have; `optimized` lists the kernels
/// that must have a rewrite in it.
fn check_program(program: &str, kernels: &[String], optimized: &[String]) {
    let p = parse_source(SourceFile::new("bench.cu", program));
    for k in kernels {
        let f = p.functions.iter().find(|f| &f.item.name == k);
        assert!(f.is_some_and(|f| f.result.is_ok()), "kernel {k} not read");
        assert!(
            program.contains(&format!("copper_bench_{}(", bench::identifier(k))),
            "{k} not benchmarked"
        );
    }
    for k in optimized {
        let name = bench::optimized_name(k);
        let f = p.functions.iter().find(|f| f.item.name == name);
        assert!(f.is_some_and(|f| f.result.is_ok()), "{name} not read");
        assert!(program.contains(&format!("\"{name}\", &copper_optimized_stats")));
        assert!(program.contains("copper_matches()"));
    }
    for needle in [
        "cudaEventElapsedTime",
        "copper_compare(",
        "int main(int copper_argc",
    ] {
        assert!(program.contains(needle), "no {needle}");
    }
}

#[test]
fn every_testdata_file_gets_a_well_formed_program() {
    let tmp = Scratch::new();
    let out = tmp.path().join("all");
    let mut improved = 0;
    for file in testdata() {
        let dir = out.join(file.file_stem().unwrap());
        let o = copper(&[
            "bench",
            file.to_str().unwrap(),
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}: {}", file.display(), text(&o));
        let stem = file.file_stem().unwrap().to_string_lossy().to_string();
        let program = std::fs::read_to_string(dir.join(format!("{stem}_bench.cu"))).unwrap();
        assert!(dir.join(format!("build-{stem}.sh")).exists());
        let parsed = parse_path(&file).unwrap();
        let kernels = readable_kernels(&parsed);
        let stdout = String::from_utf8_lossy(&o.stdout);
        let optimized: Vec<String> = kernels
            .iter()
            .filter(|k| stdout.contains(&format!("timed against {}", bench::optimized_name(k))))
            .cloned()
            .collect();
        for k in kernels.iter().filter(|k| !optimized.contains(k)) {
            assert!(
                ["no suggestion", "unchecked", "not rewritten"]
                    .iter()
                    .any(|why| stdout.contains(&format!("{k}: {why}: "))),
                "{stdout}"
            );
        }
        improved += optimized.len();
        check_program(&program, &kernels, &optimized);
        let has_main = parsed.source.text.contains("int main(");
        let renamed = format!("{}(", bench::source::RENAMED_MAIN);
        assert_eq!(program.contains(&renamed), has_main, "{stem}");
    }
    assert!(improved >= 5, "only {improved} rewrites");
}

#[test]
fn gpu_sized_parameter_files_are_searched_on_scaled_down_launches() {
    // 4096×4096 images and 2^24-element reductions: the checks run on the
    // launch scaled down, so each kernel gets its rewrite in seconds.
    let tmp = Scratch::new();
    let out = tmp.path().join("gpu");
    for (stem, rewritten) in [
        ("brighten_rows", &["brighten"][..]),
        ("gauss_step", &["eliminate"]),
        ("naive_transpose", &["transpose_naive2d"]),
        ("tree_sum", &["sum_counts", "sum_squared_error"]),
        ("reduce0", &["reduce0"]),
    ] {
        let params = root().join(format!("bench/gpu/{stem}.toml"));
        let o = copper(&[
            "bench",
            &format!("testdata/{stem}.cu"),
            "--params",
            params.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{stem}: {}", text(&o));
        let stdout = String::from_utf8_lossy(&o.stdout);
        for k in rewritten {
            let want = format!("{k}: timed against {}", bench::optimized_name(k));
            assert!(stdout.contains(&want), "{stem}: {stdout}");
        }
    }
}

#[test]
fn a_kernel_whose_checks_cannot_run_is_reported_unchecked() {
    let tmp = Scratch::new();
    let dir = tmp.path().join("racy");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("racy.cu");
    std::fs::write(
        &file,
        "__global__ void racy(int *out, const int *a, int n) {\n\
         \x20   __shared__ int last;\n\
         \x20   int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
         \x20   if (i < n) last = a[i];\n\
         \x20   out[i] = last;\n\
         }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("racy.toml"),
        "[kernel.racy]\ngrid = [4]\nblock = [64]\n[kernel.racy.args]\nn = 256\n\
         [kernel.racy.arrays.out]\nlen = \"n\"\n\
         [kernel.racy.arrays.a]\nlen = \"n\"\ninit = \"random\"\n",
    )
    .unwrap();
    let o = copper(&[
        "bench",
        file.to_str().unwrap(),
        "--out",
        dir.join("out").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("racy: unchecked: "), "{stdout}");
    assert!(stdout.contains("races"), "{stdout}");
}

#[test]
fn every_kernel_can_be_compared() {
    // The rewrite is the original renamed: the comparison code is
    // generated for every kernel and array kind of testdata.
    for file in testdata() {
        let parsed = parse_path(&file).unwrap();
        let params =
            ParamFile::from_toml(&std::fs::read_to_string(file.with_extension("toml")).unwrap())
                .unwrap();
        // copper never rewrites a template instantiation or a kernel a
        // macro defines, so none is ever compared with a rewrite.
        let from_macro = |k: &str| {
            parsed.functions.iter().any(|f| {
                f.item.name == k && parsed.source.expansion_at(f.item.span.start).is_some()
            })
        };
        let kernels: Vec<String> = readable_kernels(&parsed)
            .into_iter()
            .filter(|k| parsed.function(k).is_some_and(|f| f.template.is_none()))
            .filter(|k| !from_macro(k))
            .collect();
        let benches: Vec<KernelBench> = kernels
            .iter()
            .map(|k| KernelBench {
                name: k.clone(),
                optimized: parsed.function(k).cloned(),
                reshape: None,
                note: "test".into(),
                launches: vec![params.kernel[k].clone()],
            })
            .collect();
        let opts = Options {
            runs: 3,
            warmup: 1,
            build_line: "nvcc".into(),
        };
        let program = bench::program(&parsed, &benches, &opts).unwrap();
        check_program(&program, &kernels, &kernels);
    }
}

#[test]
fn sweep_follows_the_argument() {
    let tmp = Scratch::new();
    let out = tmp.path().join("sweep");
    let o = copper(&[
        "bench",
        "testdata/addSub2.cu",
        "--out",
        out.to_str().unwrap(),
        "--sweep",
        "h=256,512,1024,2048",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let program = std::fs::read_to_string(out.join("addSub2_bench.cu")).unwrap();
    for h in [256u64, 512, 1024, 2048] {
        // B is w * h elements.
        let call = format!(
            "copper_bench_addSub2(\"addSub2 w=1024 h={h}\", dim3(4u, 1u, 1u), dim3(256u, 1u, 1u), 0ull, 1024ull, {}ull, 1024, {h})",
            1024 * h
        );
        assert!(program.contains(&call), "no {call}");
    }
}

#[test]
fn bad_input_fails_cleanly_and_writes_nothing() {
    let tmp = Scratch::new();
    let out = tmp.path().join("bad");
    let dir = tmp.path().join("inputs");
    std::fs::create_dir_all(&dir).unwrap();
    let bad_toml = dir.join("bad.toml");
    std::fs::write(&bad_toml, "[kernel.addSub2]\ngrid = [4]\n").unwrap();
    let other = dir.join("other.toml");
    std::fs::write(&other, "[kernel.other]\ngrid = [1]\nblock = [32]\n").unwrap();
    let bad_len = dir.join("bad_len.toml");
    std::fs::write(
        &bad_len,
        std::fs::read_to_string(root().join("testdata/addSub2.toml"))
            .unwrap()
            .replace("\"w * h\"", "\"w * rows\""),
    )
    .unwrap();
    let o = out.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["bench", "/nonexistent/k.cu", "--out", o],
            "cannot read",
        ),
        (
            vec![
                "bench",
                "testdata/addSub2.cu",
                "--params",
                "/nonexistent.toml",
                "--out",
                o,
            ],
            "cannot read parameter file",
        ),
        (
            vec![
                "bench",
                "testdata/addSub2.cu",
                "--params",
                bad_toml.to_str().unwrap(),
                "--out",
                o,
            ],
            "invalid parameter file",
        ),
        (
            vec![
                "bench",
                "testdata/addSub2.cu",
                "--params",
                bad_len.to_str().unwrap(),
                "--out",
                o,
            ],
            "unknown argument `rows`",
        ),
        (
            vec![
                "bench",
                "testdata/addSub2.cu",
                "--params",
                other.to_str().unwrap(),
                "--out",
                o,
            ],
            "kernel `addSub2` is not in",
        ),
        (
            vec![
                "bench",
                "testdata/addSub2.cu",
                "--kernel",
                "nope",
                "--out",
                o,
            ],
            "no kernel named `nope`",
        ),
        (
            vec!["bench", "testdata/addSub2.cu", "--sweep", "h=", "--out", o],
            "at least one value",
        ),
        (
            vec!["bench", "testdata/addSub2.cu", "--sweep", "x=1", "--out", o],
            "`x` is not a scalar argument",
        ),
        (
            vec![
                "bench",
                "testdata/addSub2.cu",
                "--sweep",
                "h=-5",
                "--out",
                o,
            ],
            "not a positive integer",
        ),
        (
            vec![
                "bench",
                "testdata/bad/malformed.cu",
                "--kernel",
                "broken_add",
                "--out",
                o,
            ],
            "copper cannot read kernel `broken_add`",
        ),
    ];
    for (args, needle) in cases {
        let r = copper(&args);
        let t = text(&r);
        assert_eq!(r.status.code(), Some(2), "{args:?}: {t}");
        assert!(t.contains(needle), "{args:?}: expected `{needle}` in {t}");
        assert!(!t.contains("panicked"), "{t}");
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
}

/// `g++`, when installed. Without it the C++ checks print "skipped: no
/// g++" and pass, except under `COPPER_REQUIRE_GXX=1` (CI), where a
/// missing g++ fails them.
fn gxx(check: &str) -> Option<&'static str> {
    let works = Command::new("g++")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if works {
        return Some("g++");
    }
    if std::env::var("COPPER_REQUIRE_GXX").is_ok_and(|v| v == "1") {
        panic!("COPPER_REQUIRE_GXX=1 but g++ does not run (the C++ check {check})");
    }
    // Straight to stderr, past the test harness's capture, so the skip
    // shows in a plain `cargo test` run.
    let _ = writeln!(std::io::stderr(), "skipped: no g++ (the C++ check {check})");
    None
}

/// Compiles `source` with g++ (warnings are errors) and runs it; `None`
/// without g++ (see [`gxx`]).
fn compile_and_run(name: &str, source: &str, run: bool) -> Option<String> {
    let gxx = gxx(name)?;
    let tmp = Scratch::new();
    let dir = tmp.path().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("main.cpp");
    std::fs::write(&src, source).unwrap();
    let exe = dir.join("main");
    let mut cmd = Command::new(gxx);
    cmd.args([
        "-std=c++17",
        "-O1",
        "-ffp-contract=off",
        "-Wall",
        "-Wextra",
        "-Wshadow",
        "-Wconversion",
        "-Werror",
    ])
    .arg("-I")
    .arg(root().join("search/tests/bench"))
    .arg(&src);
    if run {
        cmd.arg("-o").arg(&exe);
    } else {
        cmd.arg("-fsyntax-only");
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "g++ failed:\n{}", text(&o));
    let out = if run {
        let r = Command::new(&exe).output().unwrap();
        assert!(r.status.success());
        String::from_utf8(r.stdout).unwrap()
    } else {
        String::new()
    };
    Some(out)
}

const INCLUDES: &str = "#include <algorithm>\n#include <cmath>\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <limits>\n#include <type_traits>\n#include <vector>\n";

#[test]
fn generated_inputs_are_the_simulators() {
    let spec = |init: InitKind, seed: u64, min: f64, max: f64| ArraySpec {
        len: 40,
        len_expr: None,
        init,
        seed,
        min,
        max,
        value: -2.75,
        values: vec![1.5, -3.0, 300.0, 0.1],
        fields: Default::default(),
    };
    let types = [
        (Scalar::F32, "float"),
        (Scalar::F64, "double"),
        (Scalar::I32, "int"),
        (Scalar::U32, "unsigned int"),
        (Scalar::U8, "unsigned char"),
        (Scalar::I8, "char"),
        (Scalar::Bool, "bool"),
        (Scalar::I64, "long"),
        (Scalar::U64, "unsigned long"),
    ];
    let mut specs = Vec::new();
    for seed in [0, 1, 42, 0xDEAD_BEEF_u64] {
        specs.push(spec(InitKind::Random, seed, 0.0, 100.0));
        specs.push(spec(InitKind::Random, seed, -1.5, 1.0));
        specs.push(spec(InitKind::Random, seed, -1000.0, 1e6));
    }
    specs.push(spec(InitKind::Zero, 0, 0.0, 1.0));
    specs.push(spec(InitKind::Const, 0, 0.0, 1.0));
    specs.push(spec(InitKind::Values, 0, 0.0, 1.0));
    let mut body = String::new();
    let mut expected = String::new();
    for s in &specs {
        for (elem, ctype) in types {
            let code = cxx::fill(s, elem, ctype, "copper_buf", "40").unwrap();
            body.push_str(&format!(
                "    {{\n        {ctype} copper_buf[40];\n        {code}\n        for (int i = 0; i < 40; ++i) {{ print_bits(static_cast<double>(copper_buf[i])); }}\n    }}\n"
            ));
            for v in fill(s, elem).unwrap().values() {
                // As C converts the element to double.
                let d = if elem == Scalar::U64 {
                    v.as_i64() as u64 as f64
                } else {
                    v.as_f64()
                };
                expected.push_str(&format!("{:016x}\n", d.to_bits()));
            }
        }
    }
    let program = format!(
        "{INCLUDES}{}\nstatic void print_bits(double d) {{\n    unsigned long long b;\n    std::memcpy(&b, &d, sizeof b);\n    std::printf(\"%016llx\\n\", b);\n}}\nint main() {{\n{body}    return 0;\n}}\n",
        bench::FILL_H
    );
    if let Some(got) = compile_and_run("fill", &program, true) {
        assert_eq!(got.lines().count(), expected.lines().count());
        for (i, (g, e)) in got.lines().zip(expected.lines()).enumerate() {
            assert_eq!(g, e, "value {i} (case {})", i / 40);
        }
    }
}

#[test]
fn harness_compiles_without_warnings() {
    let harness = std::fs::read_to_string(root().join("search/src/bench/harness.cuh")).unwrap();
    let program = format!(
        "{INCLUDES}#include \"cuda_stub.h\"\n#define COPPER_DEFAULT_RUNS 100\n#define COPPER_DEFAULT_WARMUP 10\n{}\n{harness}\n{}",
        bench::FILL_H,
        r#"float sym[4];
typedef float real;
int main(int argc, char **argv) {
    if (!copper_parse_options(argc, argv)) {
        return 2;
    }
    copper_print_device();
    CopperArray<real> a("a", 8);
    copper_fill_random_real<real>(a.copper_init, 8, 1ull, -1.5, 2.0);
    CopperArray<bool> b("b", 8);
    copper_fill_random_int<bool>(b.copper_init, 8, 1ull, -1ll, 3ull, false);
    CopperArray<unsigned long> c("c", 2);
    copper_fill_const<unsigned long>(c.copper_init, 2, 5ull);
    CopperArray<float> s("sym", 4);
    s.copper_bind(sym);
    auto reset = [&]() { a.copper_reset(); s.copper_reset(); };
    auto run = [&]() {};
    copper_run_checked(reset, run);
    a.copper_save_expected();
    bool m = a.copper_matches() && b.copper_matches() && c.copper_matches();
    CopperStats st = copper_time(reset, run);
    copper_report("x", "k", &st, "k_copper", &st, m);
    copper_report("x", "k", &st, nullptr, nullptr, true);
    return 0;
}
"#
    );
    compile_and_run("harness", &program, false);
}

/// Runs `scripts/ncu-compare.sh` with `ncu` replaced by a script printing
/// `ncu_output`.
fn ncu_compare(name: &str, args: &[&str], ncu_output: &str) -> Output {
    let tmp = Scratch::new();
    let dir = tmp.path().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let ncu = dir.join("ncu");
    std::fs::write(&ncu, format!("#!/bin/sh\ncat <<'CSV'\n{ncu_output}CSV\n")).unwrap();
    let program = dir.join("prog_bench");
    std::fs::write(&program, "#!/bin/sh\n").unwrap();
    for p in [&ncu, &program] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("PROGRAM", program.to_str().unwrap()))
        .collect();
    let o = Command::new("bash")
        .arg(root().join("scripts/ncu-compare.sh"))
        .args(&args)
        .env("NCU", &ncu)
        .env("COPPER", env!("CARGO_BIN_EXE_copper"))
        .current_dir(root())
        .output()
        .unwrap();
    o
}

#[test]
fn ncu_script_extracts_the_counters() {
    let csv = "device 0: H100\naddSub2 w=1024 h=64: addSub2, addSub2_copper launched once each (--profile) | outputs match\n\
==PROF== Disconnected\n\
\"ID\",\"Process ID\",\"Kernel Name\",\"Block Size\",\"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum\",\"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum\",\"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum\",\"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum\"\n\
\"\",\"\",\"\",\"\",\"\",\"\",\"sector\",\"sector\"\n\
\"0\",\"77\",\"addSub2\",\"(256, 1, 1)\",\"0\",\"0\",\"66,560\",\"32,768\"\n\
\"1\",\"77\",\"addSub2_copper\",\"(256, 1, 1)\",\"3\",\"0\",\"33,280\",\"32,768\"\n";
    let o = ncu_compare("ncu-ok", &["PROGRAM"], csv);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("outputs match"), "{t}");
    let row = |name: &str| {
        t.lines()
            .skip_while(|l| !l.starts_with("== ncu"))
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row {name} in {t}"))
            .split_whitespace()
            .skip(1)
            .collect::<Vec<_>>()
    };
    assert_eq!(row("addSub2"), ["1", "66560", "32768", "0", "0"]);
    assert_eq!(row("addSub2_copper"), ["1", "33280", "32768", "3", "0"]);
    let o = ncu_compare("ncu-cu", &["--cu", "testdata/addSub2.cu", "PROGRAM"], csv);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("copper simulate testdata/addSub2.cu") && t.contains("sectors"),
        "{t}"
    );
}

#[test]
fn ncu_script_rejects_bad_use() {
    for (args, needle) in [
        (vec![], "usage:"),
        (vec!["--bogus", "PROGRAM"], "unknown option"),
        (vec!["/nonexistent/prog"], "is not an executable"),
        (vec!["--cu", "/nonexistent.cu", "PROGRAM"], "no such file"),
        (
            vec!["--params", "testdata/addSub2.toml", "PROGRAM"],
            "--params needs --cu",
        ),
    ] {
        let o = ncu_compare("ncu-bad", &args, "");
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {t}");
        assert!(t.contains(needle), "{args:?}: {t}");
    }
    let o = ncu_compare("ncu-nocsv", &["PROGRAM"], "no csv here\n");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no CSV"), "{}", text(&o));
}

/// An array of structs whose fields have different types (`Node { int
/// start; int degree; float weight; }`) goes to the GPU as bytes: the
/// statements the program fills it with, run by g++, put the simulator's
/// values at the C offsets, each in its field's type; the two versions
/// are compared field by field.
#[test]
fn mixed_struct_arrays_are_filled_as_the_simulator_fills_them() {
    let file = root().join("testdata/graph_weighted.cu");
    let tmp = Scratch::new();
    let dir = tmp.path().join("mixed-structs");
    let o = copper(&[
        "bench",
        file.to_str().unwrap(),
        "--kernel",
        "neighbour_weight",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let program = std::fs::read_to_string(dir.join("graph_weighted_bench.cu")).unwrap();
    assert!(program.contains("CopperArray<unsigned char> copper_a_g_nodes("));
    assert!(program.contains("reinterpret_cast<Node *>(copper_a_g_nodes.copper_dev)"));
    // Compared field by field, each in its own type.
    for field in [
        "copper_compare_field<int>(\"g_nodes.start\"",
        "copper_compare_field<float>(\"g_nodes.weight\"",
    ] {
        assert!(program.contains(field), "no {field}");
    }
    let fills: String = program
        .lines()
        .filter(|l| l.contains("copper_a_g_nodes.copper_init +"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(fills.lines().count(), 3, "{fills}");
    let parsed = parse_path(&file).unwrap();
    let kernel = copper::ir::lower::lower_kernel(&parsed, "neighbour_weight").unwrap();
    let params =
        ParamFile::from_toml(&std::fs::read_to_string(file.with_extension("toml")).unwrap())
            .unwrap();
    let inputs =
        copper::sim::inputs_from_spec(&kernel, &params.kernel["neighbour_weight"]).unwrap();
    let nodes = &inputs.arrays["g_nodes"];
    assert_eq!(nodes.types, [Scalar::I32, Scalar::I32, Scalar::F32]);
    let expected: String = nodes
        .values()
        .map(|v| format!("{:016x}\n", v.as_f64().to_bits()))
        .collect();
    let n = nodes.len() / 3;
    let program = format!(
        "{INCLUDES}{}\nstatic void print_bits(double d) {{\n    unsigned long long b;\n    std::memcpy(&b, &d, sizeof b);\n    std::printf(\"%016llx\\n\", b);\n}}\n\
         struct Buffer {{ unsigned char *copper_init; }};\n\
         int main() {{\n    size_t copper_len_g_nodes = {n} * 12;\n    std::vector<unsigned char> copper_bytes(copper_len_g_nodes);\n    Buffer copper_a_g_nodes{{copper_bytes.data()}};\n{fills}\
         for (size_t i = 0; i < {n}; ++i) {{\n        int start;\n        int degree;\n        float weight;\n        std::memcpy(&start, copper_bytes.data() + i * 12, 4);\n        std::memcpy(&degree, copper_bytes.data() + i * 12 + 4, 4);\n        std::memcpy(&weight, copper_bytes.data() + i * 12 + 8, 4);\n        print_bits(start);\n        print_bits(degree);\n        print_bits(static_cast<double>(weight));\n    }}\n    return 0;\n}}\n",
        bench::FILL_H
    );
    if let Some(got) = compile_and_run("mixed-fill", &program, true) {
        assert_eq!(got.lines().count(), expected.lines().count());
        for (i, (g, e)) in got.lines().zip(expected.lines()).enumerate() {
            assert_eq!(g, e, "value {i}");
        }
    }
}
