//! Identifiers a file uses without defining them (`N` in a course file
//! built with `nvcc -DN=1024`): each becomes a symbol of the kernel, an
//! unknown `int` the bound is written in, valued by the parameter file's
//! `[kernel.K.defines]`; and the preprocessor's conditionals and headers
//! around them.

use std::path::{Path, PathBuf};

use copper::bound::{prepare, Config, Outcome};
use copper::cost::{Metric, BUILTIN_METRICS};
use copper::cuda::include::{parse_define, Preprocess};
use copper::cuda::parse::{parse_path, parse_path_with, parse_source};
use copper::ir::lower::{lower_kernel, symbol_notes};
use copper::ir::VarKind;
use copper::sim::params::ParamFile;
use copper::sim::{inputs_from_spec, simulate_owned, SimOptions};
use copper::source::SourceFile;

fn course(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/projects/course")
        .join(name)
}

fn metrics() -> Vec<Metric> {
    BUILTIN_METRICS
        .iter()
        .filter_map(|m| Metric::builtin(m))
        .collect()
}

/// Checks every metric's bound of `file`'s kernel `name` (analyzed for the
/// parameter file's block, and for any block) against simulations with
/// the define `sym` at each of `values` (grid enough blocks to cover it);
/// returns how many (value, metric) cases were checked.
fn sound_at(file: &Path, name: &str, sym: &str, values: &[u64]) -> usize {
    let parsed = parse_path(file).unwrap();
    let kernel = lower_kernel(&parsed, name).unwrap_or_else(|d| panic!("{}", d.render()));
    let params =
        ParamFile::from_toml(&std::fs::read_to_string(file.with_extension("toml")).unwrap())
            .unwrap();
    let base = &params.kernel[name];
    let block = base.shape().unwrap().block();
    let metrics = metrics();
    let mut cases = 0;
    for config_block in [Some(block), None] {
        let prepared = prepare(
            &kernel,
            Config {
                block: config_block,
                ..Config::default()
            },
        );
        let bounds: Vec<_> = metrics.iter().map(|m| prepared.bound(m)).collect();
        for b in &bounds {
            let Outcome::Bound(e) = &b.work else {
                panic!("{name}: no {} bound", b.metric);
            };
            if ["steps", "wsteps", "sectors"].contains(&b.metric.as_str()) {
                assert!(e.to_string().contains(sym), "{name} {}: {e}", b.metric);
            }
        }
        for &v in values {
            let mut spec = base.with_arg(sym, v as f64).unwrap();
            spec.grid[0] = v.div_ceil(block[0]).clamp(1, 8);
            let inputs = inputs_from_spec(&kernel, &spec).unwrap();
            let at = inputs.bound_point();
            assert_eq!(at[sym], v as f64);
            let r = simulate_owned(&kernel, inputs, &SimOptions::default())
                .unwrap_or_else(|e| panic!("{name} at {sym} = {v}: {e:?}"));
            for (b, m) in bounds.iter().zip(&r.metrics) {
                let Outcome::Bound(e) = &b.work else {
                    unreachable!()
                };
                let bound = e.eval(&at).expect("every input named");
                assert!(
                    !copper::bound::check::exceeds(m.max_warp, bound),
                    "{name} {} at {sym} = {v}: simulated {} > bound {bound} = {e}",
                    b.metric,
                    m.max_warp
                );
                cases += 1;
            }
        }
    }
    cases
}

#[test]
fn an_undefined_n_is_a_symbol_of_the_bound_and_the_bound_holds_at_every_n() {
    let values = [1, 5, 63, 64, 65, 200, 333];
    let n = sound_at(&course("matvec_n.cu"), "matvec", "N", &values);
    assert_eq!(n, 2 * values.len() * BUILTIN_METRICS.len());
    let n = sound_at(
        &course("saxpy_n.cu"),
        "saxpy_n",
        "N",
        &[1, 100, 1023, 1024, 5000],
    );
    assert!(n > 0);
}

#[test]
fn a_symbol_is_an_int_the_launch_gives_and_is_noted_once() {
    let parsed = parse_path(&course("matvec_n.cu")).unwrap();
    let k = lower_kernel(&parsed, "matvec").unwrap();
    assert_eq!(k.symbols.len(), 1, "N is used four times, one symbol");
    let n = &k.vars[k.symbols[0]];
    assert_eq!((n.name.as_str(), n.kind), ("N", VarKind::Symbol));
    let notes = symbol_notes(&parsed, &k);
    assert_eq!(notes.len(), 1);
    assert_eq!((notes[0].line, notes[0].col), (10, 15));
    assert!(
        notes[0].message.contains(
            "`N` is not defined in the file: treated as an unknown constant; pass -DN=… to fix it"
        ),
        "{}",
        notes[0].message
    );
    // Not a guess of its value: without one, the launch cannot run.
    let mut spec = ParamFile::from_toml(&std::fs::read_to_string(course("matvec_n.toml")).unwrap())
        .unwrap()
        .kernel["matvec"]
        .clone();
    spec.defines.clear();
    let err = inputs_from_spec(&k, &spec).unwrap_err().to_string();
    assert!(
        err.contains("[kernel.matvec.defines]") && err.contains("-DN="),
        "{err}"
    );
    spec.defines.insert("N".into(), 2.5);
    assert!(inputs_from_spec(&k, &spec)
        .unwrap_err()
        .to_string()
        .contains("`int`"));
}

#[test]
fn with_a_define_there_is_no_symbol() {
    let pre = Preprocess {
        defines: vec![parse_define("N=200").unwrap()],
        include_dirs: Vec::new(),
        ..Preprocess::default()
    };
    let parsed = parse_path_with(&course("matvec_n.cu"), &pre).unwrap();
    let k = lower_kernel(&parsed, "matvec").unwrap();
    assert!(k.symbols.is_empty());
    let p = prepare(&k, Config::default());
    let Outcome::Bound(e) = p.bound(&Metric::builtin("steps").unwrap()).work else {
        panic!("no bound")
    };
    assert!(!e.to_string().contains('N'), "{e}");
}

#[test]
fn a_define_inside_a_kernel_holds_from_there_to_its_undef() {
    // Students define index helpers inside the kernel, and two kernels of
    // a file may define the same helper differently: each kernel reads
    // its own, from its `#define` on (`k` uses `W` before defining it).
    let src = "__global__ void k(int *a, int n) {\n\
               int W = 3;\n\
               #define AT(r, c) a[(r) * 8 + (c)]\n\
                 int t = threadIdx.x;\n\
                 if (t < n) AT(t, 1) = W;\n\
               #undef AT\n\
               }\n\
               __global__ void k2(int *a, int n) {\n\
               #define AT(r, c) a[(c) * 8 + (r)]\n\
                 AT(threadIdx.x, 1) = 5;\n\
               }\n";
    let parsed = parse_source(SourceFile::new("s.cu", src));
    assert!(
        parsed.all_diagnostics().is_empty(),
        "{:?}",
        parsed.all_diagnostics()
    );
    let written = |name: &str| {
        let k = lower_kernel(&parsed, name).unwrap_or_else(|d| panic!("{}", d.render()));
        assert!(k.symbols.is_empty(), "{name}: no undefined names");
        let spec = ParamFile::from_toml(&format!(
            "[kernel.{name}]\ngrid=[1]\nblock=[2]\n[kernel.{name}.args]\nn=2\n[kernel.{name}.arrays.a]\nlen=24\n"
        ))
        .unwrap()
        .kernel[name]
            .clone();
        let inputs = inputs_from_spec(&k, &spec).unwrap();
        let r = simulate_owned(&k, inputs, &SimOptions::default()).unwrap();
        let a: Vec<f64> = r.arrays[0].1.values().map(|v| v.as_f64()).collect();
        (0..24)
            .filter(|&i| a[i] != 0.0)
            .map(|i| (i, a[i]))
            .collect::<Vec<_>>()
    };
    assert_eq!(written("k"), vec![(1, 3.0), (9, 3.0)]);
    assert_eq!(written("k2"), vec![(8, 5.0), (9, 5.0)]);
}

#[test]
fn an_include_inside_a_kernel_is_refused_not_dropped() {
    // Its statements would be missing: no bound may be given without them.
    let src = "__global__ void k(float *out) {\n  int i = threadIdx.x;\n#include \"body.cuh\"\n}\n\
               __global__ void ok(float *out) { out[threadIdx.x] = 1.0f; }\n";
    let parsed = parse_source(SourceFile::new("s.cu", src));
    let diags = parsed.all_diagnostics();
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(
        diags[0].message.contains("`#include` inside a function"),
        "{}",
        diags[0].message
    );
    assert_eq!((diags[0].line, diags[0].col), (3, 1));
    assert!(lower_kernel(&parsed, "k").is_err());
    assert!(
        lower_kernel(&parsed, "ok").is_ok(),
        "the other kernel goes on"
    );
}

fn lower_error(src: &str) -> String {
    let parsed = parse_source(SourceFile::new("s.cu", src));
    lower_kernel(&parsed, "k").unwrap_err().message
}

#[test]
fn where_a_value_is_needed_the_error_names_the_define() {
    // An array dimension, even after a use as a value.
    let e = lower_error(
        "__global__ void k(float *a) { int m = N; __shared__ float s[N]; s[0] = m; a[0] = s[0]; }",
    );
    assert!(
        e.contains("array size needs the value of `N`") && e.contains("-DN="),
        "{e}"
    );
    // Assigned: not a constant.
    let e = lower_error("__global__ void k(int *a) { a[0] = N; N = 3; }");
    assert!(
        e.contains("cannot assign to `N`") && e.contains("-DN="),
        "{e}"
    );
    // Used as an array: not an integer.
    let e = lower_error("__global__ void k(int *a) { a[0] = table[1]; }");
    assert!(e.contains("table"), "{e}");
}

#[test]
fn a_symbol_in_a_device_function_belongs_to_the_kernel() {
    let src = "__device__ int wrap(int i) { return i % WIDTH; }\n__global__ void k(int *a) { int i = threadIdx.x; if (i < WIDTH) { a[i] = wrap(i + 1); } }\n";
    let parsed = parse_source(SourceFile::new("s.cu", src));
    let k = lower_kernel(&parsed, "k").unwrap_or_else(|d| panic!("{}", d.render()));
    let names: Vec<&str> = k.symbols.iter().map(|&v| k.vars[v].name.as_str()).collect();
    assert_eq!(names, ["WIDTH"]);
    assert_eq!(symbol_notes(&parsed, &k).len(), 1);
}

#[test]
fn if_branches_pick_the_kernel_variant_and_its_sizes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let with = |defs: &[&str]| {
        let pre = Preprocess {
            defines: defs.iter().map(|d| parse_define(d).unwrap()).collect(),
            include_dirs: Vec::new(),
            ..Preprocess::default()
        };
        parse_path_with(&dir.join("shared_variant.cu"), &pre).unwrap()
    };
    // USE_SHARED defaults to 1: one conv7, the shared-memory one.
    let shared = with(&[]);
    assert_eq!(shared.kernels().count(), 1);
    let k = lower_kernel(&shared, "conv7").unwrap();
    assert!(k.arrays.iter().any(|a| a.name == "tile"));
    let plain = with(&["USE_SHARED=0"]);
    assert_eq!(plain.kernels().count(), 1);
    let k = lower_kernel(&plain, "conv7").unwrap();
    assert!(!k.arrays.iter().any(|a| a.name == "tile"));
    // #ifndef BLOCK_SIZE gives way to -DBLOCK_SIZE, and #if on it unrolls.
    let sizes = |defs: &[&str]| {
        let pre = Preprocess {
            defines: defs.iter().map(|d| parse_define(d).unwrap()).collect(),
            include_dirs: Vec::new(),
            ..Preprocess::default()
        };
        let p = parse_path_with(&dir.join("reduce_default.cu"), &pre).unwrap();
        let k = lower_kernel(&p, "block_sum").unwrap();
        let s = k.arrays.iter().find(|a| a.name == "s").unwrap();
        (s.dims.clone(), k.uses_sync(), p.all_diagnostics().len())
    };
    assert_eq!(sizes(&[]), (vec![256], true, 0));
    assert_eq!(sizes(&["BLOCK_SIZE=1024"]), (vec![1024], true, 0));
    // A size the file's #error refuses is reported, as nvcc would.
    assert_eq!(sizes(&["BLOCK_SIZE=1000"]).2, 1);
}

#[test]
fn a_kernel_in_a_header_is_listed_with_the_headers_locations() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/projects/blur");
    let parsed = parse_path(&dir.join("blur.cu")).unwrap();
    let names: Vec<&str> = parsed.kernels().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["blur_tiles", "zero_borders"]);
    let k = parsed.function("zero_borders").unwrap();
    let (path, line, col) = parsed.source.locate(k.meta.span.start);
    assert_eq!(
        (path.file_name().unwrap(), line, col),
        ("blur.h".as_ref(), 20, 1)
    );
    assert!(lower_kernel(&parsed, "zero_borders").is_ok());
    let why = copper::cuda::rewrite::refusal(&parsed, "zero_borders").unwrap();
    assert!(why.contains("blur.h:20, a header"), "{why}");
    assert_eq!(copper::cuda::rewrite::refusal(&parsed, "blur_tiles"), None);
    // A header kernel that copper cannot read is reported in the header.
    let scratch = tempfile::tempdir().unwrap();
    let tmp = scratch.path();
    std::fs::write(
        tmp.join("k.h"),
        "// k.h\n__global__ void bad(int *a) {\n    a[0] = [] { return 1; }();\n}\n",
    )
    .unwrap();
    std::fs::write(
        tmp.join("k.cu"),
        "#include \"k.h\"\n__global__ void good(int *a) { a[0] = 1; }\n",
    )
    .unwrap();
    let parsed = parse_path(&tmp.join("k.cu")).unwrap();
    let d = parsed.all_diagnostics();
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0].render().contains("k.h:3:"), "{}", d[0].render());
    assert_eq!(parsed.kernels().count(), 1);
}

#[test]
fn a_kernel_with_if_branches_inside_is_analyzed_as_compiled_and_never_reprinted() {
    let src = "#define UNROLL 0\n__global__ void k(float *a, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n#if UNROLL\n    if (i < n) a[i] = 2.0f * a[i];\n#else\n    if (i < n) {\n        a[i] = a[i] + a[i];\n    }\n#endif\n}\n";
    let parsed = parse_source(SourceFile::new("s.cu", src));
    let k = lower_kernel(&parsed, "k").unwrap_or_else(|d| panic!("{}", d.render()));
    // The #else branch: one multiplication nowhere, an addition.
    let printed = copper::cuda::print::function(parsed.function("k").unwrap());
    assert!(
        printed.contains("a[i] + a[i]") && !printed.contains("2.0f"),
        "{printed}"
    );
    assert!(!k.body.is_empty());
    let funcs: Vec<_> = parsed.kernels().cloned().collect();
    assert_eq!(
        copper::cuda::rewrite::rewrite_functions(&parsed, &funcs),
        src
    );
    let why = copper::cuda::rewrite::refusal(&parsed, "k").unwrap();
    assert!(why.contains("`#if` branches inside"), "{why}");
}
