//! C++ in kernels, end to end: what lowering and the simulator make of
//! references, casts, `auto`, constants, namespaces and templates (values
//! computed by hand), and that the printer gives each construct back.

use copper::cuda::include::{load, Preprocess};
use copper::cuda::parse::{parse_source, ParsedFile};
use copper::cuda::print;
use copper::ir::lower::lower_kernel;
use copper::sim::params::ParamFile;
use copper::sim::{inputs_from_spec, simulate, SimOptions};
use copper::source::SourceFile;

fn parse(src: &str) -> ParsedFile {
    parse_source(SourceFile::new("t.cu", src))
}

/// Runs kernel `name` of `src` on one block of `threads` threads with the
/// `int`/`float` arrays `a` and `b` of `len` elements (`a[i] = i`, `b`
/// zero) and returns both final arrays as `f64`s.
fn run(src: &str, name: &str, threads: u32, len: u32) -> (Vec<f64>, Vec<f64>) {
    run_shared(src, name, threads, len, 0)
}

/// [`run`] with `shared_bytes` bytes of dynamic shared memory.
fn run_shared(
    src: &str,
    name: &str,
    threads: u32,
    len: u32,
    shared_bytes: u32,
) -> (Vec<f64>, Vec<f64>) {
    let parsed = parse(src);
    assert!(
        parsed.all_diagnostics().is_empty(),
        "{:?}",
        parsed.all_diagnostics()
    );
    let kernel = lower_kernel(&parsed, name).unwrap_or_else(|d| panic!("{}", d.render()));
    let key = copper::sim::params::kernel_key(name);
    let params = format!(
        "[kernel.{key}]\ngrid=[1]\nblock=[{threads}]\nshared_bytes={shared_bytes}\n[kernel.{key}.arrays.a]\nlen={len}\ninit=\"values\"\nvalues=[{}]\n[kernel.{key}.arrays.b]\nlen={len}\n",
        (0..len).map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
    );
    let p = ParamFile::from_toml(&params).unwrap();
    let inputs = inputs_from_spec(&kernel, &p.kernel[name]).unwrap();
    let r = simulate(&kernel, &inputs, &SimOptions::default()).unwrap();
    let get = |n: &str| -> Vec<f64> {
        r.arrays
            .iter()
            .find(|(m, _)| m == n)
            .unwrap()
            .1
            .values()
            .map(|v| v.as_f64())
            .collect()
    };
    (get("a"), get("b"))
}

fn lower_error(src: &str, name: &str) -> String {
    match lower_kernel(&parse(src), name) {
        Ok(_) => panic!("`{name}` lowered"),
        Err(d) => d.message,
    }
}

#[test]
fn a_reference_parameter_writes_the_callers_variable_and_element() {
    let src = "__device__ void bump(int &x, int by) { x += by; }\n\
               __device__ void swap2(int &p, int &q) { int t = p; p = q; q = t; }\n\
               __global__ void k(int *a, int *b) {\n\
                 int t = threadIdx.x;\n\
                 int local = 10;\n\
                 bump(local, t);\n\
                 bump(a[t], 100);\n\
                 b[t] = local;\n\
                 if (t == 0) { swap2(a[1], a[2]); }\n\
               }\n";
    let (a, b) = run(src, "k", 4, 4);
    // a[i] = i + 100, then a[1] and a[2] swapped; b[t] = 10 + t.
    assert_eq!(a, [100.0, 102.0, 101.0, 103.0]);
    assert_eq!(b, [10.0, 11.0, 12.0, 13.0]);
}

#[test]
fn a_local_reference_evaluates_its_index_once_where_it_is_bound() {
    let src = "__global__ void k(int *a, int *b) {\n\
                 int t = threadIdx.x;\n\
                 int j = t;\n\
                 int &r = a[j++];\n\
                 j = 0;\n\
                 r = 7;\n\
                 r += j + 1;\n\
                 b[t] = r * 10 + j;\n\
               }\n";
    let (a, b) = run(src, "k", 4, 4);
    // `r` stays a[t] after `j` changes: a[t] = 8, b[t] = 80.
    assert_eq!(a, [8.0; 4]);
    assert_eq!(b, [80.0; 4]);
}

#[test]
fn a_pointer_to_a_local_writes_the_local() {
    let src = "__device__ void add_to(int *dst, int x) { *dst += x; }\n\
               __device__ void order(int x, int *lo, int *hi) { if (x < *lo) *lo = x; if (x > *hi) hi[0] = x; }\n\
               __global__ void k(int *a, int *b) {\n\
                 int t = threadIdx.x;\n\
                 int total = 1;\n\
                 for (int i = 0; i < 3; i++) { add_to(&total, t); }\n\
                 int lo = 5, hi = 5;\n\
                 order(a[t], &lo, &hi);\n\
                 int *p = &total;\n\
                 *p += 1000;\n\
                 a[t] = total;\n\
                 b[t] = lo * 100 + hi;\n\
               }\n";
    let (a, b) = run(src, "k", 4, 4);
    // a starts 0, 1, 2, 3 (its index): total = 1 + 3t + 1000; lo = a[t], hi = 5.
    assert_eq!(a, [1001.0, 1004.0, 1007.0, 1010.0]);
    assert_eq!(b, [5.0, 105.0, 205.0, 305.0]);
}

#[test]
fn pointers_to_parameters_write_the_parameter() {
    let src = "__device__ void add_to(int *dst, int x) { *dst += x; }\n\
               __device__ int twice(int x) { add_to(&x, x); return x; }\n\
               __global__ void k(int *a, int *b, int n) {\n\
                 int t = threadIdx.x;\n\
                 add_to(&n, t);\n\
                 int *p = &n;\n\
                 *p += 100;\n\
                 a[t] = n;\n\
                 b[t] = twice(a[t]);\n\
               }\n";
    let parsed = parse(src);
    let kernel = lower_kernel(&parsed, "k").unwrap_or_else(|d| panic!("{}", d.render()));
    let p = ParamFile::from_toml(
        "[kernel.k]\ngrid=[1]\nblock=[4]\nargs={ n = 10 }\n[kernel.k.arrays.a]\nlen=4\n[kernel.k.arrays.b]\nlen=4\n",
    )
    .unwrap();
    let inputs = inputs_from_spec(&kernel, &p.kernel["k"]).unwrap();
    let r = simulate(&kernel, &inputs, &SimOptions::default()).unwrap();
    let get = |n: &str| -> Vec<f64> {
        let (_, data) = r.arrays.iter().find(|(m, _)| m == n).unwrap();
        data.values().map(|v| v.as_f64()).collect()
    };
    // n = 10 + t + 100 in each thread's own copy; twice doubles it.
    let a: Vec<f64> = (0..4).map(|t| 110.0 + t as f64).collect();
    let b: Vec<f64> = a.iter().map(|x| 2.0 * x).collect();
    assert_eq!(get("a"), a);
    assert_eq!(get("b"), b);
}

#[test]
fn a_device_function_moves_its_own_pointer_parameter() {
    let src = "__device__ int walk(const int *p, int len) { int s = 0; for (int i = 0; i < len; i++) { s += *p; p++; } p -= 2; return s * 10 + p[0]; }\n\
               __global__ void k(int *a, int *b) { int t = threadIdx.x; b[t] = walk(a + t, 2); }\n";
    let (a, b) = run(src, "k", 4, 8);
    // a[i] = i; s = 2t + 1, then p is back at a[t].
    assert_eq!(&a[..4], [0.0, 1.0, 2.0, 3.0]);
    assert_eq!(&b[..4], [10.0, 31.0, 52.0, 73.0]);
}

#[test]
fn a_const_reference_binds_a_temporary_to_an_rvalue() {
    let src = "__device__ int twice(const int &v) { return v + v; }\n\
               __global__ void k(int *a, int *b) { int t = threadIdx.x; b[t] = twice(a[t] + 1); }\n";
    let (_, b) = run(src, "k", 4, 4);
    assert_eq!(b, [2.0, 4.0, 6.0, 8.0]);
}

#[test]
fn casts_auto_and_constants_have_cs_values() {
    let src = "constexpr int SHIFT = 3;\nconst float HALF = 0.5f;\n\
               namespace cfg { constexpr int LEN = 4; }\n\
               __global__ void k(int *a, float *b) {\n\
                 __shared__ int s[cfg::LEN * 2];\n\
                 int t = threadIdx.x;\n\
                 auto f = float(a[t]) * HALF;\n\
                 s[t] = int(f + 0.75f) + static_cast<int>(unsigned(t) >> 1);\n\
                 b[t] = f + s[t] + SHIFT + unsigned(-1) / 4294967295u;\n\
               }\n";
    let (_, b) = run(src, "k", 4, 4);
    // f = t / 2; s = int(t/2 + 0.75) + (t >> 1); b = f + s + 3 + 1.
    let want: Vec<f64> = (0..4)
        .map(|t| {
            let f = t as f64 / 2.0;
            f + ((f + 0.75) as i64 + (t >> 1)) as f64 + 4.0
        })
        .collect();
    assert_eq!(b, want);
}

#[test]
fn casts_that_reinterpret_are_refused_by_name() {
    let src = "__global__ void k(int *a, float *b) { b[0] = reinterpret_cast<float>(a[0]); }\n";
    assert!(
        lower_error(src, "k").contains("`reinterpret_cast` that changes"),
        "{}",
        lower_error(src, "k")
    );
    let ptr = "__global__ void k(int *a, float *b) { const float4 *v = reinterpret_cast<const float4 *>(a); b[0] = v[0].x; }\n";
    assert!(lower_error(ptr, "k").contains("reinterprets memory"));
    let view = "__global__ void k(int *a, float *b) { const float4 *v = reinterpret_cast<const float4 *>(b); a[0] = (int)v[1].y; }\n";
    assert!(lower_kernel(&parse(view), "k").is_ok());
    let same = "__global__ void k(int *a, float *b) { int *p = const_cast<int *>(a); p[0] = 3; b[0] = 1; }\n";
    assert!(lower_kernel(&parse(same), "k").is_ok());
}

#[test]
fn a_struct_built_by_a_constructor_it_does_not_read_is_refused_by_name() {
    let head = "struct Acc { float sum; __device__ Acc() : sum(1.0f) {} };\n\
                struct Plain { float sum; };\n";
    // Built by its default constructor (`sum` would be 1, not unset), or
    // by a constructor given a braced list.
    for decl in ["Acc acc;", "Acc acc = {0.0f};"] {
        let src = format!(
            "{head}__global__ void k(float *a) {{ {decl} acc.sum += a[0]; a[1] = acc.sum; }}\n"
        );
        let e = lower_error(&src, "k");
        assert!(
            e.contains("`Acc acc` is built by a constructor of `Acc`"),
            "{decl}: {e}"
        );
    }
    // A copy of one built elsewhere runs no constructor copper misses; a
    // struct without constructors is read as before.
    let copied =
        format!("{head}__device__ Acc made(float *a) {{ Acc c = *(Acc *)a; return c; }}\n");
    let copy =
        format!("{copied}__global__ void k(float *a) {{ Acc c = made(a); a[1] = c.sum; }}\n");
    assert!(!lower_kernel(&parse(&copy), "k")
        .is_err_and(|d| d.message.contains("built by a constructor")));
    let plain =
        format!("{head}__global__ void k(float *a) {{ Plain p; p.sum = a[0]; a[1] = p.sum; }}\n");
    assert!(lower_kernel(&parse(&plain), "k").is_ok());
}

#[test]
fn template_kernels_are_analyzed_per_instantiation() {
    let src = "#define BIG 64\ntemplate <typename T, int BS = 32>\n\
               __global__ void fill(T *a, T *b) { __shared__ T s[BS]; s[threadIdx.x % BS] = T(BS); b[threadIdx.x] = s[threadIdx.x % BS] + T(0.5); }\n\
               void host(float *x, int *y) { fill<float><<<1, 32>>>(x, x); fill<int, BIG><<<1, 64>>>(y, y); }\n";
    let parsed = parse(src);
    let names: Vec<&str> = parsed.kernels().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["fill<float, 32>", "fill<int, 64>"]);
    let shapes: Vec<(&str, Option<[u64; 3]>)> = parsed
        .launches
        .iter()
        .map(|l| (l.kernel.as_str(), l.block))
        .collect();
    assert_eq!(
        shapes,
        [
            ("fill<float, 32>", Some([32, 1, 1])),
            ("fill<int, 64>", Some([64, 1, 1]))
        ]
    );
    let (_, b) = run(src, "fill<float, 32>", 4, 4);
    assert_eq!(b, [32.5; 4]);
    let (_, b) = run(src, "fill<int, 64>", 4, 4);
    assert_eq!(b, [64.0; 4]);
    // The template itself is printed, once, with its head.
    let t = parsed.function("fill").unwrap();
    let printed = print::function(t);
    assert!(
        printed.starts_with("template <typename T, int BS = 32>\n__global__ void fill(T *a"),
        "{printed}"
    );
    assert!(lower_error(src, "fill").contains("is a template: name an instantiation"));
}

/// An `if` whose condition the instantiation fixes (`B >= 64`, `B == 32
/// && …` with `B` 64) is lowered as nvcc compiles it: only the branch
/// taken, with no test to pay for; a condition that reads memory stays.
#[test]
fn a_condition_fixed_by_the_instantiation_keeps_only_the_branch_taken() {
    let src = "template <int B>\n\
               __global__ void pick(float *a, float *b) {\n\
               if (B >= 64) { b[threadIdx.x] = 1; } else { b[threadIdx.x] = 2; }\n\
               if (B == 32 && a[0] >= 0) { b[threadIdx.x] += 10; }\n\
               }\n\
               void host(float *x) { pick<32><<<1, 32>>>(x, x); pick<64><<<1, 64>>>(x, x); }\n";
    let parsed = parse(src);
    let ifs = |name: &str| {
        let k = lower_kernel(&parsed, name).unwrap_or_else(|d| panic!("{}", d.render()));
        k.body
            .iter()
            .filter(|s| matches!(s, copper::ir::Stmt::If { .. }))
            .count()
    };
    assert_eq!(ifs("pick<32>"), 1, "only the test of `a[0]` stays");
    assert_eq!(
        ifs("pick<64>"),
        0,
        "`64 == 32 && …` is false whatever `a[0]` is"
    );
    let (_, b) = run(src, "pick<32>", 4, 4);
    assert_eq!(b, [12.0; 4]);
    let (_, b) = run(src, "pick<64>", 4, 4);
    assert_eq!(b, [1.0; 4]);
}

/// `template __global__ void ns::k<T>(…);` instantiates the kernel as a
/// launch would, inside or outside its namespace, with or without
/// `__global__` repeated; an explicit instantiation of a host function
/// template is not a kernel and is passed over silently.
#[test]
fn explicit_instantiations_are_analyzed_like_launches() {
    let src = "#define BIG 64\nnamespace ops {\ntemplate <typename T, int BS = 32>\n\
               __global__ void fill(T *a, T *b) { __shared__ T s[BS]; s[threadIdx.x % BS] = T(BS); b[threadIdx.x] = s[threadIdx.x % BS] + T(0.5); }\n\
               template __global__ void fill<float>(float *, float *);\n}\n\
               template <typename U> U twice(U u) { return u + u; }\n\
               template int twice<int>(int);\n\
               template void ops::fill<int, BIG>(int *a, int *b);\n";
    let parsed = parse(src);
    let names: Vec<&str> = parsed.kernels().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["fill<float, 32>", "fill<int, 64>"]);
    assert!(parsed.uninstantiated().is_empty());
    assert!(
        parsed.all_diagnostics().is_empty(),
        "{:?}",
        parsed.all_diagnostics()
    );
    let (_, b) = run(src, "fill<int, 64>", 4, 4);
    assert_eq!(b, [64.0; 4]);
}

#[test]
fn a_launch_deduces_type_arguments_from_its_arguments() {
    let src = "template <typename T, int BS = 32>\n\
               __global__ void axpy(const T *x, T *y, T alpha) { y[threadIdx.x] += alpha * x[threadIdx.x % BS]; }\n\
               int main() {\n  int n = 64;\n  double *d_x, *d_y;\n  float *f;\n\
               axpy<<<1, 64>>>(d_x, d_y, 2.0, n);\n  axpy<<<1, 32>>>(f, f, 0.5f);\n\
               axpy<<<1, 32>>>(d_x, d_y, 2.0f);\n  axpy<unsigned, 8><<<1, 8>>>(0, 0, 3u);\n}\n";
    let parsed = parse(src);
    let names: Vec<&str> = parsed.kernels().map(|k| k.name.as_str()).collect();
    assert_eq!(
        names,
        ["axpy<double, 32>", "axpy<float, 32>", "axpy<unsigned, 8>"]
    );
    // `double` pointers with a `float` scalar: C++ refuses it, so does copper.
    let errors: Vec<String> = parsed
        .all_diagnostics()
        .iter()
        .map(|d| format!("{}:{}: {}", d.line, d.col, d.message))
        .collect();
    assert_eq!(
        errors,
        ["9:1: `axpy`: template parameter `T` is deduced as both `double` and `float`"]
    );
    let (_, b) = run(
        "template <typename T>\n__global__ void twice(const T *a, T *b) { b[threadIdx.x] = a[threadIdx.x] * T(2); }\n\
         void go(int *p, int *q) { twice<<<1, 4>>>(p, q); }\n",
        "twice<int>",
        4,
        4,
    );
    assert_eq!(b, [0.0, 2.0, 4.0, 6.0]);
}

#[test]
fn a_template_never_launched_is_instantiated_on_request() {
    let src =
        "template <unsigned int N>\n__global__ void k(int *a, int *b) { b[threadIdx.x] = N; }\n";
    assert_eq!(parse(src).kernels().count(), 0);
    assert_eq!(parse(src).uninstantiated().len(), 1);
    let opts = Preprocess {
        instantiate: vec!["k<5>".into(), "k<7>".into(), "nope<1>".into()],
        ..Preprocess::default()
    };
    let parsed = parse_source(load(SourceFile::new("t.cu", src), &opts));
    let names: Vec<&str> = parsed.kernels().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["k<5>", "k<7>"]);
    assert!(parsed.uninstantiated().is_empty());
    assert!(parsed
        .all_diagnostics()
        .iter()
        .any(|d| d.message.contains("no template kernel `nope`")));
}

#[test]
fn device_templates_take_explicit_or_deduced_arguments() {
    let src = "template <int N> __device__ int sum_n(const int *a) { int s = 0; for (int i = 0; i < N; ++i) s += a[i]; return s; }\n\
               template <typename T> __device__ T twice(T x) { return x + x; }\n\
               __global__ void k(int *a, int *b) { b[threadIdx.x] = sum_n<3>(a) + twice<int>(1); }\n";
    let (_, b) = run(src, "k", 2, 4);
    assert_eq!(b[..2], [5.0, 5.0]);
    // Without arguments: `T` deduced from an element, a pointer's array,
    // a variable, a literal; an integer parameter cannot be.
    let deduced = "template <typename T> __device__ T twice(T x) { return x + x; }\n\
                   template <typename T> __device__ float first(const T *p) { return (float)p[0] + 0.5f; }\n\
                   __global__ void k(int *a, int *b) { int v = 7; b[threadIdx.x] = twice(a[1]) + twice(v) + (int)first(a) + (int)twice(0.25f); }\n";
    let (a, b) = run(deduced, "k", 2, 4);
    assert_eq!(b[0], 2.0 * a[1] + 14.0 + a[0]);
    let not = "template <int N> __device__ int g(const int *a) { return a[N]; }\n\
               __global__ void k(int *a, int *b) { b[0] = g(a); }\n";
    let e = lower_error(not, "k");
    assert!(e.contains("cannot deduce `N`"), "{e}");
}

#[test]
fn qualified_names_pick_their_namespace() {
    let src = "namespace a { __device__ int f() { return 1; } }\n\
               namespace b { __device__ int f() { return 2; } }\n\
               __global__ void k(int *a, int *b) { b[threadIdx.x] = a::f() * 10 + b::f(); }\n";
    let (_, b) = run(src, "k", 1, 1);
    assert_eq!(b, [12.0]);
    let ambiguous = src.replace("a::f() * 10 + b::f()", "f()");
    assert!(lower_error(&ambiguous, "k").contains("ambiguous"));
}

#[test]
fn qualified_type_names_are_the_namespaces_types() {
    let src = "namespace geo { typedef float real; typedef int count; }\n\
               __global__ void k(const geo::real *a, geo::real *b) { geo::count c = 3; b[threadIdx.x] = a[threadIdx.x] / 2 + c; }\n";
    // `real` is float: 1 / 2 + 3 is 3.5, not 3.
    let (_, b) = run(src, "k", 2, 2);
    assert_eq!(b, [3.0, 3.5]);
    let printed = print::function(parse(src).function("k").unwrap());
    assert!(
        printed.starts_with(
            "__global__ void k(const geo::real *a, geo::real *b) {\n    geo::count c = 3;"
        ),
        "{printed}"
    );
}

#[test]
fn structs_and_vectors_pass_by_value_field_by_field() {
    let src = "struct Dims { int w; int h; };\n\
               __global__ void k(Dims d, float2 s, const int *a, int *b) { b[threadIdx.x] = a[threadIdx.x] * d.w + d.h + int(s.y); }\n";
    let parsed = parse(src);
    let kernel = lower_kernel(&parsed, "k").unwrap_or_else(|d| panic!("{}", d.render()));
    let names: Vec<&str> = kernel
        .scalar_params()
        .map(|v| kernel.vars[v].name.as_str())
        .collect();
    assert_eq!(names, ["d.w", "d.h", "s.x", "s.y"]);
    // A table, dotted keys and quoted keys all name the fields.
    for args in [
        "d = { w = 10, h = 3 }\ns = { x = 0.5, y = 7.5 }",
        "d.w = 10\nd.h = 3\ns.x = 0.5\ns.y = 7.5",
        "\"d.w\" = 10\n\"d.h\" = 3\n\"s.x\" = 0.5\n\"s.y\" = 7.5",
    ] {
        let p = ParamFile::from_toml(&format!(
            "[kernel.k]\ngrid=[1]\nblock=[3]\n[kernel.k.args]\n{args}\n[kernel.k.arrays.a]\nlen=3\ninit=\"values\"\nvalues=[0, 1, 2]\n[kernel.k.arrays.b]\nlen=3\n"
        ))
        .unwrap();
        let inputs = inputs_from_spec(&kernel, &p.kernel["k"]).unwrap();
        let r = simulate(&kernel, &inputs, &SimOptions::default()).unwrap();
        let b: Vec<f64> = r
            .arrays
            .iter()
            .find(|(n, _)| n == "b")
            .unwrap()
            .1
            .values()
            .map(|v| v.as_f64())
            .collect();
        assert_eq!(b, [10.0, 20.0, 30.0], "{args}");
    }
    let p =
        ParamFile::from_toml("[kernel.k]\ngrid=[1]\nblock=[3]\n[kernel.k.args]\nd = { w = 10 }\n")
            .unwrap();
    let e = inputs_from_spec(&kernel, &p.kernel["k"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("no value for argument `d.h`"), "{e}");
    // A struct mixing `int` and `double` fields, by value.
    let mixed =
        "struct M { int n; double x; };\n__global__ void k(M m, double *b) { b[0] = m.n * m.x; }\n";
    let kernel = lower_kernel(&parse(mixed), "k").unwrap();
    let p = ParamFile::from_toml(
        "[kernel.k]\ngrid=[1]\nblock=[1]\n[kernel.k.args]\nm = { n = 3, x = 0.25 }\n[kernel.k.arrays.b]\nlen=1\n",
    )
    .unwrap();
    let inputs = inputs_from_spec(&kernel, &p.kernel["k"]).unwrap();
    let r = simulate(&kernel, &inputs, &SimOptions::default()).unwrap();
    assert_eq!(r.arrays[0].1.get(0).as_f64(), 0.75);
}

#[test]
fn cxx_constructs_print_back_as_written() {
    let src = "constexpr int W = 4;\n\
               namespace n { __device__ void inc(float &x) { x += 1.0f; } }\n\
               template <typename T, unsigned int BS = 128>\n\
               __global__ void k(const T *a, float *b) {\n\
                 constexpr int two = 2;\n\
                 auto v = static_cast<float>(a[threadIdx.x]);\n\
                 float &r = b[threadIdx.x];\n\
                 r = float(v) + int(v) * unsigned(W) + reinterpret_cast<const float &>(v) + two + BS;\n\
                 n::inc(r);\n\
                 ::n::inc(r);\n\
               }\n\
               void h(float *x, float *y) { k<float><<<1, 128>>>(x, y); }\n";
    let parsed = parse(src);
    assert!(
        parsed.all_diagnostics().is_empty(),
        "{:?}",
        parsed.all_diagnostics()
    );
    let k = parsed.function("k").unwrap();
    let printed = print::function(k);
    for piece in [
        "template <typename T, unsigned int BS = 128>",
        "constexpr int two = 2;",
        "auto v = static_cast<float>(a[threadIdx.x]);",
        "float &r = b[threadIdx.x];",
        "float(v) + int(v) * unsigned(W) + reinterpret_cast<const float &>(v)",
        "n::inc(r);",
        "::n::inc(r);",
    ] {
        assert!(printed.contains(piece), "missing `{piece}` in\n{printed}");
    }
    let whole = copper::cuda::rewrite::rewrite_functions(&parsed, std::slice::from_ref(k));
    let again = parse(&whole);
    assert_eq!(again.function("k"), Some(k));
}

#[test]
fn a_const_local_is_a_constant_in_bounds() {
    // Tiled kernels write the tile size as a local constant: the trip
    // count `(n + TILE - 1) / TILE` is then a division by 16, bounded as
    // if 16 were written.
    use copper::bound::{prepare, Config, Outcome};
    use copper::cost::Metric;
    let kernel = |decl: &str, tile: &str| {
        format!(
            "__global__ void k(const float *a, float *c, int n) {{\n  {decl}\n  float acc = 0.0f;\n  \
             for (int t = 0; t < (n + {tile} - 1) / {tile}; ++t) acc += a[t];\n  c[threadIdx.x] = acc;\n}}\n"
        )
    };
    let bound = |src: &str| {
        let parsed = parse(src);
        let k = lower_kernel(&parsed, "k").unwrap_or_else(|d| panic!("{}", d.render()));
        match prepare(&k, Config::default())
            .bound(&Metric::builtin("steps").unwrap())
            .work
        {
            Outcome::Bound(e) => e.to_string(),
            Outcome::NoBound(why, _) => panic!("no bound: {why}\n{src}"),
        }
    };
    let literal = bound(&kernel("", "16"));
    assert_eq!(bound(&kernel("const int TILE = 16;", "TILE")), literal);
    assert_eq!(
        bound(&kernel("constexpr unsigned TILE = 16u;", "(int)TILE")),
        bound(&kernel("", "(int)16u"))
    );
    // Not a constant: `tile` is read at run time.
    let src = kernel("const int tile = n / 4 + 1;", "tile");
    let k = lower_kernel(&parse(&src), "k").unwrap();
    assert!(k.vars.iter().any(|v| v.name == "tile"));
}

/// The `steps` bound of every kernel of `testdata/modern/{file}`, by name,
/// after checking the file reads without a diagnostic.
fn fixture_bounds(file: &str) -> Vec<(String, String)> {
    use copper::bound::{prepare, Config, Outcome};
    use copper::cost::Metric;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/modern")
        .join(file);
    let parsed = copper::cuda::parse::parse_path(&path).unwrap();
    let diags = parsed.all_diagnostics();
    assert!(diags.is_empty(), "{file}: {diags:?}");
    parsed
        .kernels()
        .map(|f| {
            let k = lower_kernel(&parsed, &f.name).unwrap_or_else(|d| panic!("{}", d.render()));
            let steps = Metric::builtin("steps").unwrap();
            match prepare(&k, Config::default()).bound(&steps).work {
                Outcome::Bound(e) => (f.name.clone(), e.to_string()),
                Outcome::NoBound(why, _) => panic!("{file}: `{}` has no bound: {why}", f.name),
            }
        })
        .collect()
}

#[test]
fn global_and_std_qualified_builtins_are_cudas_functions() {
    let src = "__global__ void k(int *a, int *b) { int i = threadIdx.x;\n  \
               b[i] = ::abs(a[i] - 2) * 100 + ::min(a[i], 2) * 10 + std::max(a[i], 1); }\n";
    let (_, b) = run(src, "k", 4, 4);
    // a = 0, 1, 2, 3: |a - 2|, min(a, 2), max(a, 1).
    assert_eq!(b, [201.0, 111.0, 22.0, 123.0]);
    // A file's own function is still the one `::` names.
    let own = "__device__ int abs(int x) { return 7; }\n\
               __global__ void k(int *a, int *b) { b[threadIdx.x] = ::abs(a[threadIdx.x]); }\n";
    assert_eq!(run(own, "k", 2, 2).1, [7.0, 7.0]);
    // An unknown function keeps its qualifier in the message.
    let unknown = "__global__ void k(int *a, int *b) { b[0] = ::nosuch(a[0]); }\n";
    assert!(lower_error(unknown, "k").contains("`::nosuch`"));
    let names: Vec<String> = fixture_bounds("global_builtins.cu")
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["clamp_magnitude", "halve_all"]);
}

#[test]
fn void_casts_are_statements_that_do_nothing() {
    let src =
        "__global__ void k(int *a, int *b) { static_cast<void>(a); (void)b; (void)(a[0] + 1);\n  \
               b[threadIdx.x] = a[threadIdx.x] + 1; }\n";
    assert_eq!(run(src, "k", 2, 2).1, [1.0, 2.0]);
    // The discarded call still runs: `b[0]` is counted twice.
    let call = "__device__ int bump(int *c) { return atomicAdd(c, 1); }\n\
                __global__ void k(int *a, int *b) { (void)bump(b); static_cast<void>(bump(b)); }\n";
    assert_eq!(run(call, "k", 1, 1).1, [2.0]);
    let names: Vec<String> = fixture_bounds("void_casts.cu")
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["fill_ones", "count_calls"]);
}

#[test]
fn fixed_width_template_parameters_with_and_without_std() {
    let bounds = fixture_bounds("std_int_params.cu");
    let names: Vec<&str> = bounds.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["stage<128>", "widen<int, 3>", "widen<std::int32_t, 2>"]
    );
    let src = "template <std::uint32_t BS, std::int64_t K = -2> __global__ void k(int *a, int *b) {\n  \
               __shared__ int s[BS]; s[threadIdx.x] = a[threadIdx.x] * K; b[threadIdx.x] = s[BS - 1 - threadIdx.x]; }\n\
               void h(int *a, int *b) { k<4><<<1, 4>>>(a, b); }\n";
    // a = 0, 1, 2, 3 reversed and times -2.
    assert_eq!(run(src, "k<4, -2>", 4, 4).1, [-6.0, -4.0, -2.0, 0.0]);
}

#[test]
fn a_member_function_call_is_named_as_one() {
    // A member function the struct does not have is named for what it
    // is, not as a call through a function pointer.
    let src = "struct Buf { int n; };\n\
               __global__ void k(int *a, int *b) { Buf q; b[0] = q.size(); }\n";
    let parsed = parse(src);
    let shown: Vec<String> = parsed
        .all_diagnostics()
        .iter()
        .map(|d| d.message.clone())
        .collect();
    let all = shown.join("\n") + &lower_error(src, "k");
    assert!(
        all.contains("`Buf` has no `__device__` member function `size`"),
        "{all}"
    );
    assert!(!all.contains("function pointers"), "{all}");
}

/// Structs with member functions: `Acc` counts and sums, `V2` scales and
/// measures itself; `b[i]` gets `10 * n + s` for the row `0..=i` of `a`
/// (summed by `acc.add`), then `len2` of `(a[i], 2)` doubled, as device
/// code reads them.
const MEMBERS: &str = "struct Acc {\n  int s, n;\n  \
    __device__ void add(int v) { s += v; n++; }\n  \
    __device__ int packed() const { return 10 * n + this->s; }\n};\n\
    struct V2 {\n  int x, y;\n  \
    __device__ void scale(int k) { x *= k; this->y *= k; }\n  \
    __device__ int len2() const { return x * x + y * y; }\n  \
    __device__ int twice_len2() { scale(2); return len2() / 4 + (*this).len2(); }\n};\n\
    __global__ void k(int *a, int *b) {\n  int i = threadIdx.x;\n  \
    Acc acc = {0, 0};\n  for (int j = 0; j <= i; j++) acc.add(a[j]);\n  \
    V2 v = {a[i], 2};\n  \
    b[i] = acc.packed() * 1000 + v.twice_len2();\n}\n";

#[test]
fn member_functions_read_and_write_their_object() {
    let (_, b) = run(MEMBERS, "k", 4, 4);
    // a = 0..4: acc has n = i + 1, s = i(i+1)/2; v = (2a, 4) after the
    // scale: len2 / 4 = a² + 4, plus len2 again = 4a² + 16.
    let want: Vec<f64> = (0..4)
        .map(|i: i64| {
            let packed = 10 * (i + 1) + i * (i + 1) / 2;
            (packed * 1000 + (i * i + 4) + (4 * i * i + 16)) as f64
        })
        .collect();
    assert_eq!(b, want);
}

#[test]
fn member_functions_are_listed_with_their_struct_and_print_as_written() {
    let parsed = parse(MEMBERS);
    let scale = parsed
        .functions
        .iter()
        .find(|f| f.item.name == "scale")
        .unwrap();
    assert_eq!(scale.item.owner.as_deref(), Some("V2"));
    assert_eq!(scale.item.namespace, "V2");
    // Not found by their names alone: `add` is no free function.
    assert!(parsed.function("add").is_none());
    let printed = print::function(parsed.function("k").unwrap());
    for piece in ["acc.add(a[j]);", "acc.packed() * 1000 + v.twice_len2()"] {
        assert!(printed.contains(piece), "missing `{piece}` in\n{printed}");
    }
    let whole = copper::cuda::rewrite::rewrite_functions(&parsed, &[]);
    assert_eq!(whole, MEMBERS, "member functions stay in their struct");
}

#[test]
fn unread_members_are_named_where_they_are() {
    let src = "struct P {\n  float x, y;\n  \
               __device__ P(float a, float b) : x(a), y(b) {}\n  \
               __device__ P operator+(const P &o) const { return {x + o.x, y + o.y}; }\n  \
               virtual __device__ float f() { return x; }\n  \
               __device__ float sum() const { return x + y; }\n};\n\
               __global__ void k(P *ps, float *out) { out[threadIdx.x] = ps[threadIdx.x].sum(); }\n";
    let parsed = parse(src);
    let diags: Vec<(usize, String)> = parsed
        .all_diagnostics()
        .iter()
        .map(|d| (d.line, d.message.clone()))
        .collect();
    let found = |line: usize, what: &str| {
        diags
            .iter()
            .any(|(l, m)| *l == line && m.contains(what) && m.contains("struct `P`"))
    };
    assert!(found(3, "constructors"), "{diags:?}");
    assert!(found(4, "operators"), "{diags:?}");
    assert!(found(5, "virtual member functions"), "{diags:?}");
    assert!(lower_kernel(&parsed, "k").is_ok());
    let hiding = "struct Q {\n  int v;\n  __device__ int f() { int v = 2; return v; }\n};\n\
                  __global__ void k(Q *q, int *o) { o[0] = q[0].f(); }\n";
    let parsed = parse(hiding);
    let d = parsed.all_diagnostics();
    assert!(
        d.iter()
            .any(|d| d.line == 3 && d.message.contains("`v` in a member function of `Q`")),
        "{d:?}"
    );
    assert!(lower_error(hiding, "k").contains("could not read"));
}

#[test]
fn a_member_call_on_a_value_that_is_no_struct_is_an_error() {
    let src = "struct A { int s; __device__ int get() const { return s; } };\n\
               __global__ void k(int *a, int *b) { float2 v = make_float2(1.0f, 2.0f);\n  \
               b[0] = v.get(); }\n";
    let e = lower_error(src, "k");
    assert!(e.contains("`float2`") || e.contains(".get()"), "{e}");
    let src = "struct A { int s; __device__ int get() const { return s; } };\n\
               __global__ void k(A *a, int *b) { b[0] = a[0].put(); }\n";
    assert!(lower_error(src, "k").contains("no `__device__` member function `put`"));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]

    /// A member function reads its object's fields, bare or through
    /// `this`, and another one writes a field of it in place: the
    /// simulated kernel computes what C++ does, for generated coefficients
    /// and the field written.
    #[test]
    fn member_functions_compute_what_cxx_does(
        c in proptest::array::uniform3(-5i64..6),
        bumped in 0usize..3,
        through_this in proptest::bool::ANY,
    ) {
        let f2 = if through_this { "this->f2" } else { "f2" };
        let src = format!(
            "struct S {{\n  int f0, f1, f2;\n  \
             __device__ int comb(int t) const {{ return {} * f0 + {} * f1 + {} * {f2} + t; }}\n  \
             __device__ void bump(int v) {{ f{bumped} += v; }}\n}};\n\
             __global__ void k(int *a, int *b) {{\n  int i = threadIdx.x;\n  \
             S s = {{a[i], a[i] + 1, 2 * a[i]}};\n  s.bump(a[i]);\n  b[i] = s.comb(i);\n}}\n",
            c[0], c[1], c[2]
        );
        let (_, b) = run(&src, "k", 8, 8);
        for (i, got) in b.iter().enumerate() {
            let x = i as i64;
            let mut f = [x, x + 1, 2 * x];
            f[bumped] += x;
            let want = c[0] * f[0] + c[1] * f[1] + c[2] * f[2] + x;
            proptest::prop_assert_eq!(*got, want as f64, "{}", src);
        }
    }

    /// The samples' `SharedMemory<T>()` (its generic form, or a
    /// specialization with an array of another name) is the launch's
    /// dynamic shared memory: each thread stores a generated affine
    /// function of its element there and, past the barrier, reads a
    /// generated neighbor's, as C++ does.
    #[test]
    fn shared_memory_accessors_compute_what_cxx_does(
        c in proptest::array::uniform2(-5i64..6),
        shift in 0u32..8,
        specialized in proptest::bool::ANY,
    ) {
        let special = if specialized {
            "template <> struct SharedMemory<int> {\n  \
             __device__ operator int *() { extern __shared__ int __smem_i[]; return (int *)__smem_i; }\n};\n"
        } else {
            ""
        };
        let src = format!(
            "template <class T> struct SharedMemory {{\n  \
             __device__ inline operator T *() {{ extern __shared__ int __smem[]; return (T *)__smem; }}\n  \
             __device__ inline operator const T *() const {{ extern __shared__ int __smem[]; return (T *)__smem; }}\n}};\n\
             {special}\
             template <class T> __global__ void k(T *a, T *b) {{\n  T *s = SharedMemory<T>();\n  \
             unsigned t = threadIdx.x;\n  s[t] = {} * a[t] + {};\n  __syncthreads();\n  \
             b[t] = s[(t + {shift}) % blockDim.x];\n}}\n\
             template __global__ void k<int>(int *, int *);\n",
            c[0], c[1]
        );
        let (_, b) = run_shared(&src, "k<int>", 8, 8, 32);
        for (i, got) in b.iter().enumerate() {
            let j = (i as i64 + i64::from(shift)) % 8;
            proptest::prop_assert_eq!(*got, (c[0] * j + c[1]) as f64, "{}", src);
        }
    }
}
