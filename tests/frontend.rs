//! Front-end tests over every `testdata/` kernel: round trip through the
//! printer, byte-exact splicing, and diffs that `git apply` and `patch -p1`
//! accept.

use std::path::{Path, PathBuf};
use std::process::Command;

use copper::cuda::diff::unified;
use copper::cuda::parse::{parse_path, parse_source, ParsedFile};
use copper::cuda::rewrite::rewrite_functions;
use copper::source::SourceFile;

fn testdata_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("testdata/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    files.sort();
    files
}

fn parsed_testdata() -> Vec<ParsedFile> {
    testdata_files()
        .iter()
        .map(|p| parse_path(p).unwrap_or_else(|d| panic!("{}", d.render())))
        .collect()
}

#[test]
fn every_testdata_function_parses() {
    let files = parsed_testdata();
    assert!(
        files.len() >= 30,
        "expected at least 30 test files, found {}",
        files.len()
    );
    let mut kernels = 0;
    for f in &files {
        let diags = f.all_diagnostics();
        assert!(
            diags.is_empty(),
            "{}",
            diags
                .iter()
                .map(|d| d.render())
                .collect::<Vec<_>>()
                .join("\n")
        );
        kernels += f.kernels().count();
    }
    assert!(kernels >= 30, "only {kernels} kernels");
}

#[test]
fn printed_kernels_parse_back_to_the_same_ast() {
    for file in parsed_testdata() {
        let funcs: Vec<_> = file.parsed_functions().cloned().collect();
        let text = rewrite_functions(&file, &funcs);
        let again = parse_source(SourceFile::new(file.source.path.clone(), text.clone()));
        for f in &funcs {
            let back = again.function(&f.name).unwrap_or_else(|| {
                panic!(
                    "{}: `{}` lost after printing:\n{text}",
                    file.source.path.display(),
                    f.name
                )
            });
            assert_eq!(
                back,
                f,
                "{}: `{}` changed by print/parse",
                file.source.path.display(),
                f.name
            );
        }
        // Printing is idempotent on the text too.
        let funcs2: Vec<_> = again.parsed_functions().cloned().collect();
        assert_eq!(rewrite_functions(&again, &funcs2), text);
    }
}

#[test]
fn rewriting_keeps_every_byte_outside_changed_functions() {
    for file in parsed_testdata() {
        let src = &file.source.text;
        // The file's own functions come first (then headers' and template
        // instantiations, which are not spliced).
        for (pf, item) in file.functions.iter().zip(&file.extracted.functions) {
            let Ok(f) = &pf.result else { continue };
            let mut changed = f.clone();
            changed.name = f.name.clone();
            changed.body.clear();
            let out = rewrite_functions(&file, &[changed]);
            let span = item.span;
            assert_eq!(&out[..span.start], &src[..span.start]);
            let tail = &src[span.end..];
            assert!(
                out.ends_with(tail),
                "{}: bytes after `{}` changed",
                file.source.path.display(),
                f.name
            );
            assert!(out[span.start..out.len() - tail.len()].contains(&f.name));
        }
    }
}

fn tool_available(name: &str) -> bool {
    Command::new(name)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn diffs_apply_with_git_apply_and_patch() {
    assert!(
        tool_available("git") && tool_available("patch"),
        "git and patch are needed"
    );
    for file in parsed_testdata() {
        let funcs: Vec<_> = file.parsed_functions().cloned().collect();
        let new = rewrite_functions(&file, &funcs);
        let name = file
            .source
            .path
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let rel = format!("sub/{name}");
        let patch = unified(rel.as_bytes(), &file.source.text, &new);
        if patch.is_empty() {
            continue;
        }
        for tool in ["git", "patch"] {
            let scratch = tempfile::tempdir().unwrap();
            let dir = scratch.path();
            std::fs::create_dir_all(dir.join("sub")).unwrap();
            std::fs::write(dir.join(&rel), &file.source.text).unwrap();
            std::fs::write(dir.join("fix.patch"), &patch).unwrap();
            let status = if tool == "git" {
                Command::new("git")
                    .args(["init", "-q"])
                    .current_dir(dir)
                    .status()
                    .unwrap();
                Command::new("git")
                    .args(["apply", "fix.patch"])
                    .current_dir(dir)
                    .output()
                    .unwrap()
            } else {
                Command::new("patch")
                    .args(["-p1", "-s", "-i", "fix.patch"])
                    .current_dir(dir)
                    .output()
                    .unwrap()
            };
            assert!(
                status.status.success(),
                "{tool} rejected the patch for {name}: {}\n{patch}",
                String::from_utf8_lossy(&status.stderr)
            );
            assert_eq!(
                std::fs::read_to_string(dir.join(&rel)).unwrap(),
                new,
                "{tool} result differs for {name}"
            );
        }
    }
}

/// Every file in `testdata/bad/` has a kernel copper must refuse with a
/// named construct, and a good kernel that still parses.
#[test]
fn bad_testdata_names_the_construct_and_keeps_the_good_kernels() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/bad");
    let expect = [
        ("asm_kernel.cu", "inline assembly"),
        ("goto_kernel.cu", "`goto`"),
        ("malformed.cu", "syntax error"),
        ("template_kernel.cu", "template"),
        (
            "unknown_type.cu",
            "unknown type `real_2_t`: pass `-D` or `-I` (as to nvcc)",
        ),
        (
            "unknown_type_later.cu",
            "unknown type `real_t`: pass `-D` or `-I` (as to nvcc)",
        ),
        ("unknown_type_later.cu", "unknown type `accum_t`"),
        (
            "cxx_structs.cu",
            "`Vec3 u(…)` builds a `Vec3` with a constructor",
        ),
    ];
    for (name, needle) in expect {
        let f = parse_path(&dir.join(name)).unwrap();
        let diags = f.all_diagnostics();
        assert!(
            diags
                .iter()
                .any(|d| d.message.contains(needle) && d.line > 0),
            "{name}: {diags:?}"
        );
        assert!(f.kernels().count() >= 1, "{name}: the good kernel was lost");
    }
}

/// A template struct named through a template kernel's parameter
/// (`Pair<T>` in `pair_sums_of<T>`) is read as the instantiation's
/// instance (`Pair<float>`).
#[test]
fn a_template_struct_through_a_kernels_parameter_is_the_instantiations() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/bad/cxx_structs.cu");
    let f = parse_path(&path).unwrap();
    assert!(
        copper::ir::lower::lower_kernel(&f, "pair_sums_of<float>").is_ok(),
        "{:?}",
        f.all_diagnostics()
    );
}

/// A kernel reading `clock()`/`clock64()` is refused by name, at the call;
/// the file's other kernel is still lowered.
#[test]
fn a_clock_read_is_named_and_the_other_kernel_is_lowered() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/bad/clock_timing.cu");
    let f = parse_path(&path).unwrap();
    assert!(f.all_diagnostics().is_empty(), "{:?}", f.all_diagnostics());
    let err = copper::ir::lower::lower_kernel(&f, "timed_sum").unwrap_err();
    assert!(
        err.message
            .starts_with("`clock()` reads the multiprocessor's clock")
            && err.line == 7,
        "{}",
        err.render()
    );
    assert!(copper::ir::lower::lower_kernel(&f, "sum").is_ok());
}

/// The stencil project: a `.cu` whose sizes, types, constant weights and
/// device helpers are in headers (found through `-I inc`).
mod project {
    use std::path::{Path, PathBuf};

    use copper::bound::{prepare, Config, Outcome};
    use copper::cost::Metric;
    use copper::cuda::include::{parse_define, Preprocess};
    use copper::cuda::parse::{parse_path_with, parse_source, ParsedFile};
    use copper::cuda::rewrite::rewrite_functions;
    use copper::ir::lower::lower_kernel;
    use copper::sim::params::ParamFile;
    use copper::sim::{inputs_from_spec, simulate_owned, SimOptions};

    fn dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/projects/stencil")
    }

    fn opts(defines: &[&str]) -> Preprocess {
        Preprocess {
            defines: defines.iter().map(|d| parse_define(d).unwrap()).collect(),
            include_dirs: vec![dir().join("inc")],
            ..Preprocess::default()
        }
    }

    fn parsed(file: &str, defines: &[&str]) -> ParsedFile {
        parse_path_with(&dir().join(file), &opts(defines)).unwrap()
    }

    /// Lowers, simulates and bounds every kernel of the parameter file;
    /// returns the kernels' names.
    fn lower_simulate_analyze(file: &ParsedFile, toml: &str) -> Vec<String> {
        let text = std::fs::read_to_string(dir().join(toml)).unwrap();
        let params = ParamFile::from_toml(&text).unwrap();
        let steps = Metric::builtin("steps").unwrap();
        let mut names = Vec::new();
        for (name, spec) in &params.kernel {
            let k = lower_kernel(file, name).unwrap_or_else(|d| panic!("{}", d.render()));
            let inputs = inputs_from_spec(&k, spec).unwrap();
            let run = simulate_owned(&k, inputs, &SimOptions::default())
                .unwrap_or_else(|e| panic!("{name}: {}", e.message));
            assert!(!run.arrays.is_empty(), "{name}");
            let block = Some(spec.shape().unwrap().block());
            let b = prepare(
                &k,
                Config {
                    block,
                    ..Config::default()
                },
            )
            .bound(&steps);
            assert!(matches!(b.work, Outcome::Bound(_)), "{name}: {:?}", b.work);
            names.push(name.clone());
        }
        names
    }

    #[test]
    fn headers_give_the_kernels_their_macros_types_globals_and_helpers() {
        let f = parsed("stencil.cu", &[]);
        let diags = f.all_diagnostics();
        assert!(diags.is_empty(), "{diags:?}");
        let kernels: Vec<&str> = f.kernels().map(|k| k.name.as_str()).collect();
        assert_eq!(kernels, ["blur_rows", "square_tiles", "scale_rows"]);
        // The header's device functions are there, with header spans.
        for helper in ["square", "clampi"] {
            let pf = f.functions.iter().find(|p| p.item.name == helper).unwrap();
            assert!(pf.item.span.is_included() && pf.result.is_ok(), "{helper}");
            let (path, line, _) = f.source.locate(pf.item.name_offset);
            assert!(path.ends_with(if helper == "square" {
                "stencil.h"
            } else {
                "clamp.h"
            }));
            assert!(line > 1);
        }
        assert!(f.typedefs.contains_key("real"));
        assert!(f.globals.iter().any(|g| g.name == "weights"));
        assert_eq!(
            f.launches[1].block,
            Some([16, 16, 1]),
            "BLOCK_SIZE from the header"
        );
        let mut names = lower_simulate_analyze(&f, "stencil.toml");
        names.sort();
        assert_eq!(names, ["blur_rows", "scale_rows", "square_tiles"]);
    }

    #[test]
    fn the_project_round_trips_and_rewrites_only_the_user_file() {
        let f = parsed("stencil.cu", &[]);
        let funcs: Vec<_> = f
            .functions
            .iter()
            .filter_map(|p| p.result.clone().ok())
            .collect();
        let text = rewrite_functions(&f, &funcs);
        let again = parse_source(f.source.with_text(text.clone()));
        for k in f.kernels() {
            assert_eq!(again.function(&k.name), Some(k), "{}", k.name);
        }
        assert_eq!(
            text,
            std::fs::read_to_string(dir().join("stencil.cu")).unwrap(),
            "the project is written in copper's style: printing keeps the file"
        );
        // A header function passed to the rewriter is ignored.
        let square = f.function("square").unwrap().clone();
        assert_eq!(rewrite_functions(&f, &[square]), f.source.text);
    }

    #[test]
    fn defines_come_from_the_command_line() {
        let f = parsed("scale_n.cu", &["N=256"]);
        assert!(f.all_diagnostics().is_empty(), "{:?}", f.all_diagnostics());
        assert_eq!(f.launches[0].block, Some([256, 1, 1]));
        assert_eq!(lower_simulate_analyze(&f, "scale_n.toml"), ["scale_n"]);
        // Without it the error names the macro and the option to pass.
        let bare = parsed("scale_n.cu", &[]);
        let e = lower_kernel(&bare, "scale_n").unwrap_err();
        assert!(
            e.message.contains("`N`") && e.message.contains("-DN="),
            "{}",
            e.message
        );
        // A `-D` wins over the header's `#ifndef BLOCK_SIZE` default.
        let big = parsed("stencil.cu", &["BLOCK_SIZE=32"]);
        assert_eq!(big.launches[1].block, Some([32, 32, 1]));
    }
}

/// Lexical details: byte-order marks, CRLF line ends with continuations,
/// variadic macros, bytes that are not UTF-8.
mod lexical {
    use copper::cuda::parse::parse_source;
    use copper::cuda::rewrite::rewrite_functions;
    use copper::ir::lower::lower_kernel;
    use copper::source::SourceFile;

    const CRLF_BOM: &str = "\u{feff}#include <cstdio>\r\n#define N 4\r\n#define ADD(a, b) \\\r\n    ((a) + (b))\r\n#define LOG(...) printf(__VA_ARGS__)\r\n#define FIRST(x, ...) (x)\r\n\r\n__global__ void k(int *x) {\r\n    int i = threadIdx.x;\r\n    if (i == 0) {\r\n        LOG(\"%d\\n\", N);\r\n    }\r\n    x[i] = ADD(FIRST(N, 1, 2), i); \\\r\n\r\n}\r\n";

    #[test]
    fn crlf_bom_and_variadic_macros() {
        let f = parse_source(SourceFile::new("crlf.cu", CRLF_BOM));
        assert!(f.all_diagnostics().is_empty(), "{:?}", f.all_diagnostics());
        let k = f.kernels().next().unwrap();
        let (line, col) = f.source.line_col(k.meta.span.start);
        assert_eq!((line, col), (8, 1));
        lower_kernel(&f, "k").unwrap_or_else(|d| panic!("{}", d.render()));
        let text = rewrite_functions(&f, std::slice::from_ref(k));
        assert!(text.starts_with("\u{feff}#include <cstdio>\r\n"));
        let again = parse_source(SourceFile::new("crlf.cu", text));
        assert_eq!(again.function("k"), Some(k));
    }

    #[test]
    fn bytes_that_are_not_utf8_are_refused_only_in_code() {
        let ok = b"// caf\xe9 \xff\nconst char *s = \"caf\xe9\";\n__global__ void k(int *x) { x[0] = 1; /* \xe9 */ }\n";
        let f = parse_source(SourceFile::from_bytes("latin1.cu", ok));
        assert!(f.all_diagnostics().is_empty(), "{:?}", f.all_diagnostics());
        assert!(f.kernels().next().is_some());
        let bad = b"__global__ void k(int *x) { x[0] = 1; }\nint caf\xe9;\n";
        let f = parse_source(SourceFile::from_bytes("latin1.cu", bad));
        let d = &f.all_diagnostics()[0];
        assert_eq!((d.code, d.line, d.col), ("encoding", 2, 8));
    }
}
