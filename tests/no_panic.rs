//! Property test: extraction, parsing, lowering and the bound analysis never
//! panic or run away, whatever the input.
//! Run longer with `PROPTEST_CASES=200000 cargo test --release --test no_panic`.

use copper::cuda::include::{parse_define, Preprocess};
use copper::cuda::parse::parse_source;
use copper::cuda::print;
use copper::source::{Included, IncludedFile, IncludedKind, SourceFile, INCLUDED_BASE};
use std::time::{Duration, Instant};

use copper::bound::{prepare, Config};
use copper::cost::Metric;
use copper::ir::lower::lower_kernel;
use proptest::prelude::*;

const PIECES: &[&str] = &[
    "__global__",
    "__device__",
    "__shared__",
    "__constant__",
    "__host__",
    "void",
    "int",
    "float",
    "unsigned",
    "k",
    "a",
    "n",
    "i",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ";",
    ",",
    "=",
    "+",
    "*",
    "<",
    ">",
    "<<<",
    ">>>",
    "if",
    "else",
    "for",
    "while",
    "do",
    "switch",
    "case",
    "default",
    ":",
    "break",
    "return",
    "threadIdx",
    ".",
    "x",
    "#define",
    "N",
    "16",
    "\n",
    "#pragma unroll\n",
    "template",
    "<typename T>",
    "goto",
    "asm",
    "&",
    "\"",
    "'",
    "/*",
    "*/",
    "//",
    "\\\n",
    "?",
    "typedef",
    "struct",
    "__launch_bounds__",
    "__restrict__",
    "-",
    "--",
    "++",
    "0x1f",
    "1.5f",
    "IDX(",
    "#define IDX(r,c) ((r)*N+(c))\n",
    "extern",
    "dim3",
    "::",
    "[=]",
];

fn cuda_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES.to_vec()), 0..120).prop_map(|v| v.join(" "))
}

fn check(text: String) {
    check_source(SourceFile::new("fuzz.cu", text));
}

fn check_source(source: SourceFile) {
    let parsed = parse_source(source);
    for f in &parsed.functions {
        if let Ok(func) = &f.result {
            let _ = print::function(func);
        }
    }
    // Whatever lowers is analyzed, within a budget, without a panic.
    let config = Config {
        block: copper::launch::block([64, 1, 1]).ok(),
        budget: Duration::from_secs(2),
        ..Config::default()
    };
    let names: Vec<String> = parsed.kernels().map(|k| k.name.clone()).collect();
    for name in names {
        if let Ok(k) = lower_kernel(&parsed, &name) {
            let start = Instant::now();
            let b = prepare(&k, config).bound(&Metric::builtin("steps").unwrap());
            assert!(start.elapsed() < Duration::from_secs(10), "{name}: {b:?}");
        }
    }
    for d in parsed.all_diagnostics() {
        assert!(
            d.line >= 1 && d.col >= 1,
            "diagnostic without location: {d}"
        );
        let _ = d.render();
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(500)))]

    #[test]
    fn token_soup_never_panics(text in cuda_soup()) {
        check(text);
    }

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,400}") {
        check(text);
    }

    #[test]
    fn mutated_kernels_never_panic(cut in 0usize..400, insert in prop::sample::select(PIECES.to_vec())) {
        let base = "#define B 256\n__global__ void k(float* a, int n) {\n  __shared__ float s[B];\n  int i = blockIdx.x * B + threadIdx.x;\n  if (i < n) { s[threadIdx.x] = a[i]; }\n  __syncthreads();\n  for (int j = 0; j < 4; j++) a[i] += s[(threadIdx.x + j) % B];\n}\n";
        let cut = cut.min(base.len());
        let cut = (0..=cut).rev().find(|&c| base.is_char_boundary(c)).unwrap_or(0);
        check(format!("{}{}{}", &base[..cut], insert, &base[cut..]));
    }
}

/// A file that includes `header` and is compiled with `-D define`.
fn with_header(header: String, define: &str) -> SourceFile {
    let mut pre = Preprocess::default();
    if let Ok(d) = parse_define(define) {
        pre.defines.push(d);
    }
    let command_line = pre.command_line_text();
    let header_base = INCLUDED_BASE + command_line.len() + 1;
    let files = vec![
        IncludedFile::new(
            "<command line>".into(),
            IncludedKind::CommandLine,
            command_line,
            INCLUDED_BASE,
            0,
        ),
        IncludedFile::new("h.h".into(), IncludedKind::Header, header, header_base, 0),
    ];
    let user = "#include \"h.h\"\n__global__ void k(float* a, int n) {\n  __shared__ float s[B];\n  int i = blockIdx.x * B + threadIdx.x;\n  if (i < n) { s[threadIdx.x] = sq(a[IDX(0, i)]); }\n}\n";
    SourceFile::new("fuzz.cu", user).with_included(Included {
        files,
        ..Included::default()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(300)))]

    /// Headers of token soup, and `-D` values of any text.
    #[test]
    fn headers_and_defines_never_panic(header in cuda_soup(), define in "(B|N|IDX|sq|k)(\\([a-z,]{0,6}\\))?(=.{0,30})?") {
        check_source(with_header(header, &define));
    }

    /// A well-formed header, cut and grown at random.
    #[test]
    fn mutated_headers_never_panic(cut in 0usize..200, insert in prop::sample::select(PIECES.to_vec()), define in ".{0,40}") {
        let base = "#pragma once\n#define B 64\n#define IDX(r, c) ((r) * B + (c))\ntypedef struct { int w; } Dims;\n__constant__ float w[4];\n__device__ float sq(float x) { return x * x; }\n";
        let cut = cut.min(base.len());
        check_source(with_header(format!("{}{}{}", &base[..cut], insert, &base[cut..]), &define));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(300)))]

    /// Conditionals of any text, nested and unbalanced, in the file and in
    /// its header, around a kernel that uses what they define.
    #[test]
    fn conditionals_never_panic(a in ".{0,40}", b in "[A-Z0-9_()!&|<>=+*/%~?: -]{0,30}", open in 0usize..4, close in 0usize..4) {
        let header = format!("#if {a}\n#define B 32\n#elif {b}\n#define B 64\n#else\n#undef B\n#endif\n#define IDX(r, c) ((r) * B + (c))\n__device__ float sq(float x) {{ return x * x; }}\n");
        check_source(with_header(header, &format!("N={b}")));
        let file = format!("{}#ifdef B\n__global__ void k(int *a) {{ a[0] = B; }}\n#elif {b}\n{}", "#if N\n".repeat(open), "#endif\n".repeat(close));
        check(file);
    }
}

#[test]
fn the_fuzzed_header_reaches_the_kernel() {
    let header = "#pragma once\n#define B 64\n#define IDX(r, c) ((r) * B + (c))\n__device__ float sq(float x) { return x * x; }\n";
    let parsed = parse_source(with_header(header.into(), "N=4"));
    assert!(
        parsed.all_diagnostics().is_empty(),
        "{:?}",
        parsed.all_diagnostics()
    );
    lower_kernel(&parsed, "k").unwrap_or_else(|d| panic!("{}", d.render()));
}

fn testdata_texts() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p: &std::path::PathBuf| p.extension().is_some_and(|e| e == "cu"));
    files.sort();
    files
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(200)))]

    /// Real files with a span deleted and a random piece inserted.
    #[test]
    fn mutated_testdata_never_panics(file in 0usize..64, at in 0.0f64..1.0, cut in 0usize..40, insert in prop::sample::select(PIECES.to_vec())) {
        let texts = testdata_texts();
        prop_assume!(!texts.is_empty());
        let text = &texts[file % texts.len()];
        let boundary = |i: usize| (0..=i.min(text.len())).rev().find(|&c| text.is_char_boundary(c)).unwrap_or(0);
        let a = boundary((at * text.len() as f64) as usize);
        let b = boundary(a + cut);
        check(format!("{}{}{}", &text[..a], insert, &text[b..]));
    }
}

#[test]
fn hostile_nesting_and_size_give_diagnostics() {
    let deep = format!(
        "__global__ void k(int* a) {{ a[0] = {}1{}; }}",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    let parsed = parse_source(SourceFile::new("deep.cu", deep));
    let d = parsed.functions[0].result.as_ref().unwrap_err();
    assert_eq!(d.code, "too-deep");
    let long = format!(
        "__global__ void k(int* a) {{ a[0] = 1{}; }}",
        " + 1".repeat(100_000)
    );
    let parsed = parse_source(SourceFile::new("long.cu", long));
    assert_eq!(
        parsed.functions[0].result.as_ref().unwrap_err().code,
        "too-large"
    );
    let braces = "{".repeat(100_000);
    let parsed = parse_source(SourceFile::new(
        "braces.cu",
        format!("__global__ void k() {braces}"),
    ));
    assert!(parsed.functions.is_empty() || parsed.functions[0].result.is_err());
}

#[test]
fn hostile_macro_kernels_are_capped_with_a_diagnostic() {
    // 10,000 invocations: each read, each at its own line.
    let mut many =
        String::from("#define K(n) __global__ void n##_k(float *y) { y[threadIdx.x] = 1.0f; }\n");
    for i in 0..10_000 {
        many.push_str(&format!("K(f{i})\n"));
    }
    let parsed = parse_source(SourceFile::new("many.cu", many));
    assert_eq!(parsed.kernels().count(), 10_000);
    let (_, line, _) = parsed
        .source
        .locate(parsed.functions[9_999].item.name_offset);
    assert_eq!(line, 10_001);
    // An expansion past the per-invocation cap, and one that names
    // itself: an error at the invocation, no kernel, no panic.
    let huge = "#define X4(a) a a a a\n#define X64(a) X4(X4(X4(a)))\n\
                #define K(n) __global__ void n(float *y) { X64(X64(y[0] += 1.0f;)) }\nK(big)\n\
                #define R(n) __global__ void n(float *y) { R(n) }\nR(again)\n";
    let parsed = parse_source(SourceFile::new("huge.cu", huge));
    let unread: Vec<_> = parsed
        .all_diagnostics()
        .into_iter()
        .filter(|d| d.code == "unread" || d.code == "syntax")
        .collect();
    assert!(
        unread
            .iter()
            .any(|d| d.line == 4 && d.message.contains("more than")),
        "{unread:?}"
    );
    assert!(parsed.function("big").is_none());
    // The recursive-looking one is either read or reported at line 6.
    assert!(
        parsed.function("again").is_some() || unread.iter().any(|d| d.line == 6),
        "{unread:?}"
    );
    check(String::from(huge));
}
