//! Property test: a rewrite's edits do not depend on how the file is
//! formatted. Testdata kernels that a transform rewrites are re-formatted
//! at random (indentation unit, K&R or Allman braces, comments between
//! statements, blank lines, trailing whitespace, CRLF); for each, the
//! diff of `copper optimize --write` changes the same statements as on the
//! file as written, removes no comment line that it does not put back (a
//! moved statement's comment moves with it, and so do the comments of
//! the `else` copy that branch distribution merges into it), and the
//! written file parses
//! to the same rewritten kernel. `COPPER_FORMAT_CASES` sets the number of
//! formats tried per kernel (default 4).

mod common;

use std::path::Path;

use common::{copper_in, text};
use copper::cuda::diff::unified;
use copper::cuda::parse::parse_source;
use copper::source::SourceFile;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// How one file is re-formatted: one choice per line, and per file.
#[derive(Clone, Debug)]
struct Format {
    unit: &'static str,
    allman: bool,
    crlf: bool,
    /// Per line: 0 nothing, 1 a comment after it, 2 a blank line after
    /// it, 3 trailing whitespace.
    extras: Vec<u8>,
}

fn format_strategy() -> impl Strategy<Value = Format> {
    (
        prop::sample::select(vec!["\t", "  ", "    ", "        "]),
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(0u8..6, 200),
    )
        .prop_map(|(unit, allman, crlf, extras)| Format {
            unit,
            allman,
            crlf,
            extras,
        })
}

/// `src` re-formatted by `f`: each line re-indented by brace depth; with
/// Allman braces a line ending in `{` after code puts the `{` on a line of
/// its own; comments, blank lines and trailing whitespace after lines.
/// Preprocessor lines and lines inside block comments stay as they are.
fn reformat(src: &str, f: &Format) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut depth = 0usize;
    let mut in_comment = false;
    for (i, line) in src.lines().enumerate() {
        let t = line.trim();
        if in_comment || t.starts_with('#') || t.starts_with("/*") && !t.contains("*/") {
            in_comment = (in_comment || t.starts_with("/*")) && !t.contains("*/");
            out.push(line.to_string());
            continue;
        }
        let closes = t.starts_with('}');
        let d = if closes {
            depth.saturating_sub(1)
        } else {
            depth
        };
        let indent = f.unit.repeat(d);
        if f.allman && t.ends_with('{') && t.len() > 1 && !t.starts_with("//") {
            out.push(format!("{indent}{}", t[..t.len() - 1].trim_end()));
            out.push(format!("{indent}{{"));
        } else if t.is_empty() {
            out.push(String::new());
        } else {
            out.push(format!("{indent}{t}"));
        }
        let opens = t.matches('{').count();
        let shuts = t.matches('}').count();
        depth = (depth + opens).saturating_sub(shuts);
        match f.extras.get(i % f.extras.len()) {
            Some(1) if t.ends_with(';') => out.push(format!("{indent}// note {i}")),
            Some(2) if t.ends_with(';') || t.ends_with('}') => out.push(String::new()),
            Some(3) if !t.is_empty() => out.last_mut().unwrap().push_str(" \t"),
            _ => {}
        }
    }
    let nl = if f.crlf { "\r\n" } else { "\n" };
    out.join(nl) + nl
}

/// What a rewrite changes, independent of layout and of how a line diff
/// pairs lines: the code lines (comments, whitespace and braces left out)
/// that only the old text has, and those only the new text has, counted
/// with multiplicity, sorted.
fn changed(old: &str, new: &str) -> (Vec<String>, Vec<String>) {
    let bag = |text: &str| -> Vec<String> {
        let mut v: Vec<String> = text
            .lines()
            .map(|l| {
                l.split("//")
                    .next()
                    .unwrap_or("")
                    .chars()
                    .filter(|c| !c.is_whitespace() && *c != '{' && *c != '}')
                    .collect::<String>()
            })
            .filter(|l| !l.is_empty())
            .collect();
        v.sort();
        v
    };
    let minus = |a: &[String], b: &[String]| -> Vec<String> {
        let mut rest = b.to_vec();
        a.iter()
            .filter(|l| match rest.iter().position(|r| r == *l) {
                Some(i) => {
                    rest.remove(i);
                    false
                }
                None => true,
            })
            .cloned()
            .collect()
    };
    let (o, n) = (bag(old), bag(new));
    (minus(&o, &n), minus(&n, &o))
}

/// The optimized text of `src` (a copy of testdata `name` in `dir`), and
/// the rewritten kernel it holds.
fn optimize(dir: &Path, name: &str, src: &str) -> (String, copper::cuda::ast::Function) {
    let file = dir.join(format!("{name}.cu"));
    std::fs::write(&file, src).unwrap();
    let o = copper_in(dir, &["optimize", &format!("{name}.cu"), "--write"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let written = std::fs::read_to_string(&file).unwrap();
    let parsed = parse_source(SourceFile::new(file.to_str().unwrap(), &written));
    let kernel = parsed.kernels().next().expect("a kernel").clone();
    (written, kernel)
}

/// Checks kernel `name`, also that no comment line is removed without
/// being put back.
fn check(name: &str) {
    let root = common::root().join("testdata");
    let original = std::fs::read_to_string(root.join(format!("{name}.cu"))).unwrap();
    let scratch_dir = tempfile::Builder::new()
        .prefix(&format!("copper-fmt-{name}-"))
        .tempdir()
        .unwrap();
    let dir = scratch_dir.path();
    std::fs::copy(
        root.join(format!("{name}.toml")),
        dir.join(format!("{name}.toml")),
    )
    .unwrap();
    let (written, kernel) = optimize(dir, name, &original);
    let reference = changed(&original, &written);
    assert!(!reference.0.is_empty() || !reference.1.is_empty());
    let cases = std::env::var("COPPER_FORMAT_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(4);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&format_strategy(), |f| {
            let src = reformat(&original, &f);
            let (new, k) = optimize(dir, name, &src);
            let diff = unified(b"k.cu", &src, &new);
            prop_assert_eq!(&k, &kernel, "a different rewrite\n{}", diff);
            prop_assert_eq!(changed(&src, &new), reference.clone(), "{}", diff);
            let added: Vec<&str> = diff
                .lines()
                .filter(|l| l.starts_with('+'))
                .map(|l| l[1..].trim())
                .collect();
            for l in diff
                .lines()
                .filter(|l| l.starts_with('-') && !l.starts_with("---"))
            {
                let t = l[1..].trim();
                if t.starts_with("//") || t.starts_with("/*") {
                    prop_assert!(added.contains(&t), "comment removed: {}\n{}", t, diff);
                }
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn padding_edits_do_not_depend_on_formatting() {
    check("student_transpose");
}

#[test]
fn hoisting_edits_do_not_depend_on_formatting() {
    check("addSub0");
}

/// Branch distribution keeps one copy of the code common to both branches
/// (the `then` branch's): a comment only in the `else` branch's copy goes
/// with the copy kept.
#[test]
fn branch_distribution_edits_do_not_depend_on_formatting() {
    check("syn_brdis");
}
