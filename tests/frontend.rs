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
        let funcs: Vec<_> = file
            .functions
            .iter()
            .filter_map(|f| f.result.clone().ok())
            .collect();
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
        let funcs2: Vec<_> = again
            .functions
            .iter()
            .filter_map(|f| f.result.clone().ok())
            .collect();
        assert_eq!(rewrite_functions(&again, &funcs2), text);
    }
}

#[test]
fn rewriting_keeps_every_byte_outside_changed_functions() {
    for file in parsed_testdata() {
        let src = &file.source.text;
        for (i, pf) in file.functions.iter().enumerate() {
            let Ok(f) = &pf.result else { continue };
            let mut changed = f.clone();
            changed.name = f.name.clone();
            changed.body.clear();
            let out = rewrite_functions(&file, &[changed]);
            let span = file.extracted.functions[i].span;
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

/// Writes `files` into a fresh temporary directory.
fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("copper-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn diffs_apply_with_git_apply_and_patch() {
    assert!(
        tool_available("git") && tool_available("patch"),
        "git and patch are needed"
    );
    for file in parsed_testdata() {
        let funcs: Vec<_> = file
            .functions
            .iter()
            .filter_map(|f| f.result.clone().ok())
            .collect();
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
        let patch = unified(&rel, &file.source.text, &new);
        if patch.is_empty() {
            continue;
        }
        for tool in ["git", "patch"] {
            let dir = temp_dir(tool);
            std::fs::create_dir_all(dir.join("sub")).unwrap();
            std::fs::write(dir.join(&rel), &file.source.text).unwrap();
            std::fs::write(dir.join("fix.patch"), &patch).unwrap();
            let status = if tool == "git" {
                Command::new("git")
                    .args(["init", "-q"])
                    .current_dir(&dir)
                    .status()
                    .unwrap();
                Command::new("git")
                    .args(["apply", "fix.patch"])
                    .current_dir(&dir)
                    .output()
                    .unwrap()
            } else {
                Command::new("patch")
                    .args(["-p1", "-s", "-i", "fix.patch"])
                    .current_dir(&dir)
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
            let _ = std::fs::remove_dir_all(&dir);
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
