//! No kernel goes missing without a word: every `__global__` definition of
//! every `testdata/` file is listed or named by a diagnostic, and the
//! `testdata/modern/` fixtures (qualifier macros, a host helper first,
//! version guards, template forms) are listed as nvcc compiles them.

mod common;

use std::path::{Path, PathBuf};

use common::{copper_in, root, text, Scratch};
use copper::cuda::lex::tokenize;
use copper::cuda::parse::parse_path;

/// Every `.cu` file under `dir`, recursively, sorted.
fn cu_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("readable directory") {
        let p = e.expect("directory entry").path();
        if p.is_dir() {
            out.extend(cu_files(&p));
        } else if p.extension().is_some_and(|e| e == "cu") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The names of the `__global__` definitions written in `src`: after each
/// `__global__`, the identifier before the first `(` that is not an
/// attribute's (before a `<…>` list for a specialization), when a `{`
/// comes before the next `;`.
fn global_definitions(src: &str) -> Vec<String> {
    let toks: Vec<&str> = tokenize(src).iter().map(|t| t.text(src)).collect();
    let mut names = Vec::new();
    for (i, _) in toks.iter().enumerate().filter(|(_, t)| **t == "__global__") {
        let Some(paren) =
            (i + 1..toks.len()).find(|&j| toks[j] == "(" && toks[j - 1] != "__launch_bounds__")
        else {
            continue;
        };
        let mut name = paren - 1;
        if toks[name] == ">" {
            while name > i && toks[name] != "<" {
                name -= 1;
            }
            name -= 1;
        }
        let rest = &toks[paren..];
        let body = rest.iter().position(|t| *t == "{");
        let decl = rest.iter().position(|t| *t == ";");
        if body.is_some_and(|b| decl.is_none_or(|d| b < d)) {
            names.push(toks[name].to_string());
        }
    }
    names
}

#[test]
fn every_testdata_kernel_is_listed_or_diagnosed() {
    let files = cu_files(&root().join("testdata"));
    assert!(files.len() > 60, "{} files", files.len());
    for path in files {
        let src = std::fs::read_to_string(&path).expect("readable file");
        let parsed = parse_path(&path).unwrap_or_else(|d| panic!("{}", d.render()));
        let diagnostics = parsed.all_diagnostics();
        for name in global_definitions(&src) {
            let listed = parsed
                .functions
                .iter()
                .any(|f| f.item.name.split('<').next() == Some(name.as_str()));
            let named = diagnostics
                .iter()
                .any(|d| d.message.contains(&format!("`{name}`")));
            assert!(
                listed || named,
                "{}: kernel `{name}` is neither listed nor diagnosed",
                path.display()
            );
        }
    }
}

/// `copper parse FILE` in `testdata/modern/`: its exit status and output.
fn parse_modern(args: &[&str]) -> (i32, String) {
    let o = copper_in(&root().join("testdata/modern"), args);
    (o.status.code().unwrap_or(-1), text(&o))
}

#[test]
fn kernels_after_a_host_function_or_behind_macros_are_listed() {
    let (status, out) = parse_modern(&["parse", "host_helper_first.cu"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("kernel scale_by(") && out.contains("kernel offset_by("));
    assert!(out.contains("launched at line 26"), "{out}");
    let (status, out) = parse_modern(&["parse", "qualifier_macros.cu"]);
    assert_eq!(status, 0, "{out}");
    for k in [
        "kernel double_all(",
        "kernel zero_all(",
        "device function twice(",
    ] {
        assert!(out.contains(k), "{k} missing:\n{out}");
    }
}

#[test]
fn version_macros_are_predefined_as_nvcc_does_and_d_overrides_them() {
    let (status, out) = parse_modern(&["parse", "version_guards.cu"]);
    assert_eq!(status, 0, "{out}");
    for k in ["mapped_copy", "warp_sum", "fill_ones"] {
        assert!(out.contains(&format!("kernel {k}(")), "{k} missing:\n{out}");
    }
    let (status, out) = parse_modern(&["parse", "-D", "__CUDA_ARCH__=600", "version_guards.cu"]);
    assert_eq!(status, 0, "{out}");
    assert!(
        !out.contains("warp_sum") && out.contains("kernel fill_ones("),
        "{out}"
    );
}

#[test]
fn template_comments_and_explicit_specializations_are_read() {
    let (status, out) = parse_modern(&["parse", "template_forms.cu"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("kernel fill_value<float, 256>("), "{out}");
    assert!(
        out.contains("template_forms.cu:20:1: kernel negate<float>(float *a, int n)\n    launched at line 35"),
        "{out}"
    );
    assert!(out.contains("kernel negate<int>("), "{out}");
    assert!(!out.contains("never instantiated"), "{out}");
}

#[test]
fn analyze_says_which_template_it_did_not_analyze() {
    // (Not in `testdata/`, where every kernel must be bounded.)
    let scratch = Scratch::new();
    let file = scratch.file(
        "template_never_launched.cu",
        b"template <typename T>\n__global__ void square_all(T *a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) {\n    a[i] = a[i] * a[i];\n  }\n}\n",
    );
    let o = copper_in(&root(), &["analyze", &file.to_string_lossy()]);
    let (status, out) = (o.status.code().unwrap_or(-1), text(&o));
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains("template `square_all` not analyzed: no instantiation seen; use `--instantiate 'square_all<float>'`"),
        "{out}"
    );
}

/// `copper analyze FILE` in `testdata/modern/` exits 0 and bounds every
/// kernel named (its `kernel NAME:` line), with no error.
fn assert_analyzed(file: &str, kernels: &[&str]) {
    let (status, out) = parse_modern(&["analyze", file]);
    assert_eq!(status, 0, "{out}");
    assert!(!out.contains("error"), "{out}");
    for k in kernels {
        assert!(out.contains(&format!("kernel {k}:")), "{k} missing:\n{out}");
    }
}

#[test]
fn pointer_and_namespace_aliases_are_read() {
    assert_analyzed(
        "pointer_aliases.cu",
        &["vec_add", "shift", "halve", "row_sums"],
    );
}

#[test]
fn constexpr_static_assert_enums_and_extern_c_are_read() {
    assert_analyzed(
        "cxx_constants.cu",
        &[
            "tile_scale",
            "apply",
            "green_channel",
            "apply_mode<MODE_ADD>",
            "apply_mode<MODE_MUL>",
            "clear",
        ],
    );
}

#[test]
fn kernels_named_through_a_macro_argument_are_read() {
    let (status, out) = parse_modern(&["parse", "kernel_macro.cu"]);
    assert_eq!(status, 0, "{out}");
    for k in [
        "kernel_macro.cu:10:1: kernel square_all(",
        "kernel add_one(",
        "device function square(",
    ] {
        assert!(out.contains(k), "{k} missing:\n{out}");
    }
    assert_analyzed("kernel_macro.cu", &["square_all", "add_one"]);
}

#[test]
fn an_explicit_specialization_is_printed_with_its_template_head() {
    let (status, out) = parse_modern(&["fmt", "template_forms.cu"]);
    assert_eq!(status, 0, "{out}");
    assert!(
        out.contains("template <>\n__global__ void negate<float>(float *a, int n) {"),
        "{out}"
    );
}
