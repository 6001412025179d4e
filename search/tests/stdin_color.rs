//! `-` reads standard input under the `--stdin-filename` name, and
//! `--color` / `NO_COLOR` hold on every command.

mod common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use common::{root, text};

/// Runs `copper ARGS` in the workspace root with `input` on stdin and
/// `env` set.
fn copper_with_stdin(args: &[&str], input: &[u8], env: &[(&str, &str)]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_copper"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("copper runs");
    // A command that refuses before reading may close stdin first.
    let _ = child.stdin.take().expect("piped").write_all(input);
    child.wait_with_output().expect("copper ends")
}

const BROKEN: &[u8] = b"__global__ void k(int *a) {\n    a[0] = ;\n}\n";

#[test]
fn a_dash_reads_standard_input_under_the_name_given() {
    let source = std::fs::read(root().join("testdata/tree_sum.cu")).unwrap();
    // Diagnostics carry the name; the default name is `stdin.cu`.
    let o = copper_with_stdin(
        &["parse", "-", "--stdin-filename", "lab/k1.cu"],
        BROKEN,
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("lab/k1.cu:2:12: error[syntax]"),
        "{}",
        text(&o)
    );
    let o = copper_with_stdin(&["parse", "-"], BROKEN, &[]);
    assert!(text(&o).contains("stdin.cu:2:12"), "{}", text(&o));
    // The rewrite of a file read from stdin is the rewrite of the file.
    let named = ["optimize", "--diff", "testdata/tree_sum.cu"];
    let from_stdin = [
        "optimize",
        "--diff",
        "-",
        "--stdin-filename",
        "testdata/tree_sum.cu",
    ];
    let want = copper_with_stdin(&named, b"", &[]);
    let got = copper_with_stdin(&from_stdin, &source, &[]);
    assert!(!want.stdout.is_empty(), "{}", text(&want));
    assert_eq!(
        String::from_utf8_lossy(&got.stdout),
        String::from_utf8_lossy(&want.stdout)
    );
    // The lint places findings in the named file.
    let o = copper_with_stdin(
        &[
            "lint",
            "-",
            "--stdin-filename",
            "testdata/students/blur_macro2d.cu",
        ],
        &std::fs::read(root().join("testdata/students/blur_macro2d.cu")).unwrap(),
        &[],
    );
    assert!(
        text(&o).contains("testdata/students/blur_macro2d.cu:21:18: warning[misaligned-global]"),
        "{}",
        text(&o)
    );
}

#[test]
fn standard_input_is_never_written_nor_read_twice() {
    for (args, needle) in [
        (
            vec!["optimize", "--write", "-"],
            "cannot be updated in place",
        ),
        (vec!["parse", "-", "-"], "given more than once"),
        (vec!["bench", "-"], "needs a file on disk"),
    ] {
        let o = copper_with_stdin(&args, BROKEN, &[]);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(needle), "{args:?}: {}", text(&o));
    }
}

#[test]
fn color_is_asked_for_on_every_command_and_no_color_is_honoured() {
    const ESC: &str = "\x1b[";
    let red_error = "\x1b[1;31merror[";
    for cmd in ["parse", "analyze", "optimize", "lint", "fmt", "simulate"] {
        let o = copper_with_stdin(&[cmd, "-", "--color", "always"], BROKEN, &[]);
        assert!(text(&o).contains(red_error), "{cmd}: {}", text(&o));
        let o = copper_with_stdin(&[cmd, "-", "--color", "never"], BROKEN, &[]);
        assert!(!text(&o).contains(ESC), "{cmd}: {}", text(&o));
        // Not a terminal: `auto` never colours, whatever NO_COLOR says.
        let o = copper_with_stdin(&[cmd, "-"], BROKEN, &[("NO_COLOR", "")]);
        assert!(!text(&o).contains(ESC), "{cmd}: {}", text(&o));
    }
    let o = copper_with_stdin(
        &[
            "optimize",
            "--diff",
            "--color",
            "always",
            "testdata/tree_sum.cu",
        ],
        b"",
        &[],
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("\x1b[32m+    if (tid < 32) {\x1b[0m"), "{out}");
    assert!(out.contains("\x1b[31m-    for (int s"), "{out}");
}
