//! What a batch directory or a command line may hold, odd input, and
//! the streams, exit status and `--quiet`.

use super::*;

// ---- items 6, 7: what a batch directory may hold ----

/// A directory with a FIFO, a symlink loop, a second link to a file, an
/// ignored directory, a hidden one and a `.cuh` file.
fn hostile_tree(name: &str) -> TempDir {
    let dir = scratch(name);
    let d = dir.path().join("d");
    for sub in ["sub", ".hidden", "ignored"] {
        std::fs::create_dir_all(d.join(sub)).unwrap();
    }
    copy_testdata("addSub0", &d, "a");
    copy_testdata("saxpy", &d.join("sub"), "b");
    std::fs::rename(d.join("sub/b.cu"), d.join("sub/b.cuh")).unwrap();
    copy_testdata("saxpy", &d.join(".hidden"), "h");
    copy_testdata("saxpy", &d.join("ignored"), "i");
    std::fs::write(d.join(".gitignore"), "ignored/\n").unwrap();
    std::os::unix::fs::symlink("..", d.join("sub/loop")).unwrap();
    std::os::unix::fs::symlink("../a.cu", d.join("sub/alias.cu")).unwrap();
    let fifo = std::ffi::CString::new(d.join("fifo.cu").to_str().unwrap()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    dir
}

#[test]
fn a_batch_skips_fifos_and_loops_and_visits_each_file_once() {
    let scratch_dir = hostile_tree("tree");
    let dir = scratch_dir.path();
    let m = run(
        "optimize --write on a tree with a FIFO, a loop, a link, ignored and hidden dirs",
        dir,
        &["optimize", "d", "--write", "--format", "json"],
        &[],
    );
    assert_eq!(code(&m), 1, "{}", text(&m.out));
    let json: serde_json::Value = serde_json::from_slice(&m.out.stdout).expect("one JSON document");
    let files: Vec<&str> = json["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["d/a.cu", "d/sub/b.cuh"], "{}", text(&m.out));
    assert!(
        stderr(&m).contains("fifo.cu: skipped: not a regular file"),
        "{}",
        stderr(&m)
    );
    assert_eq!(
        stderr(&m).matches("updated d/a.cu").count(),
        1,
        "{}",
        stderr(&m)
    );
    let m = run(
        "optimize --no-ignore on the same tree",
        dir,
        &["optimize", "d", "--no-ignore", "--format", "json"],
        &[],
    );
    let json: serde_json::Value = serde_json::from_slice(&m.out.stdout).expect("one JSON document");
    assert_eq!(
        json["kernels"].as_array().unwrap().len(),
        4,
        "{}",
        text(&m.out)
    );
}

#[test]
fn a_fifo_named_on_the_command_line_is_refused_unopened() {
    let scratch_dir = hostile_tree("fifo");
    let dir = scratch_dir.path();
    for cmd in ["parse", "optimize", "lint", "analyze", "simulate", "fmt"] {
        let m = run(&format!("{cmd} on a FIFO"), dir, &[cmd, "d/fifo.cu"], &[]);
        assert_eq!(code(&m), 2, "{cmd}: {}", text(&m.out));
        assert!(
            text(&m.out).contains("not a regular file"),
            "{cmd}: {}",
            text(&m.out)
        );
    }
}

// ---- item 11: odd input ----

#[test]
fn every_function_of_a_file_with_thousands_is_read() {
    let scratch_dir = scratch("many-functions");
    let dir = scratch_dir.path();
    let text: String = (0..4100)
        .map(|i| format!("__global__ void k{i}(int *a) {{\n    a[threadIdx.x] = {i};\n}}\n"))
        .collect();
    std::fs::write(dir.join("many.cu"), text).unwrap();
    let m = run(
        "parse 4,100 kernels in one file",
        dir,
        &["parse", "many.cu"],
        &[],
    );
    assert_eq!(code(&m), 0, "{}", stderr(&m));
    assert!(!stderr(&m).contains("too-large"), "{}", stderr(&m));
    assert_eq!(stdout(&m).matches(": kernel k").count(), 4100);
}

#[test]
fn a_truncated_file_or_a_missing_brace_is_a_syntax_error() {
    let scratch_dir = scratch("truncated");
    let dir = scratch_dir.path();
    let saxpy = std::fs::read_to_string(root().join("testdata/saxpy.cu")).unwrap();
    let cut = saxpy.find("y[i] = a").unwrap() + 5;
    std::fs::write(dir.join("truncated.cu"), &saxpy[..cut]).unwrap();
    std::fs::write(
        dir.join("brace.cu"),
        saxpy.replacen("    }\n}\n", "    }\n", 1),
    )
    .unwrap();
    for (file, line) in [
        ("truncated.cu", "truncated.cu:10:"),
        ("brace.cu", "brace.cu:28:"),
    ] {
        for extra in [
            &[][..],
            &["--diff"],
            &["--format", "sarif"],
            &["--format", "json"],
        ] {
            let mut args = vec!["optimize", file];
            args.extend_from_slice(extra);
            let m = run(&format!("optimize {file} {extra:?}"), dir, &args, &[]);
            assert_eq!(code(&m), 2, "{args:?}: {}", text(&m.out));
            assert!(stderr(&m).contains(line), "{args:?}: {}", stderr(&m));
            assert!(
                stderr(&m).contains("error[syntax]"),
                "{args:?}: {}",
                stderr(&m)
            );
            assert!(
                stderr(&m).contains("the file ends inside `saxpy`"),
                "{}",
                stderr(&m)
            );
        }
        let m = run(&format!("lint {file}"), dir, &["lint", file], &[]);
        assert_eq!(code(&m), 2, "{}", text(&m.out));
        assert!(stderr(&m).contains("error[syntax]"), "{}", stderr(&m));
    }
}

#[test]
fn a_byte_order_mark_before_the_kernel_is_ignored() {
    let scratch_dir = scratch("bom");
    let dir = scratch_dir.path();
    std::fs::write(
        dir.join("bom.cu"),
        "\u{feff}__global__ void k(int *a) {\n    a[threadIdx.x] = 1;\n}\n",
    )
    .unwrap();
    let m = run(
        "parse a file starting with a BOM",
        dir,
        &["parse", "bom.cu"],
        &[],
    );
    assert_eq!(code(&m), 0, "{}", text(&m.out));
    assert!(stdout(&m).contains("kernel k(int *a)"), "{}", text(&m.out));
}

#[test]
fn a_failed_write_of_the_output_says_so() {
    let scratch_dir = scratch("full");
    let dir = scratch_dir.path();
    copy_testdata("addSub0", dir, "k");
    for args in [
        &["optimize", "k.cu"][..],
        &["parse", "k.cu"],
        &["lint", "k.cu"],
        &["analyze", "k.cu"],
        &["simulate", "k.cu"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_copper"))
            .args(args)
            .current_dir(dir)
            .stdout(full)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("cannot write the output"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    let m = run(
        "optimize --report /dev/full",
        dir,
        &["optimize", "k.cu", "--report", "/dev/full"],
        &[],
    );
    assert_eq!(code(&m), 2, "{}", text(&m.out));
    assert!(stderr(&m).contains("/dev/full"), "{}", stderr(&m));
    assert!(stderr(&m).contains("No space left"), "{}", stderr(&m));
}

#[test]
fn unknown_or_out_of_range_values_are_errors() {
    let scratch_dir = scratch("values");
    let dir = scratch_dir.path();
    copy_testdata("addSub0", dir, "k");
    let toml = std::fs::read_to_string(dir.join("k.toml")).unwrap();
    let big = toml
        .lines()
        .map(|l| {
            if l.starts_with("w = ") {
                "w = 99999999999"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(big, toml);
    std::fs::write(dir.join("big.toml"), big).unwrap();
    let block = toml.lines().find(|l| l.starts_with("block = ")).unwrap();
    let wrap = toml.replace(block, "block = [4611686018427387905, 4, 1]");
    std::fs::write(dir.join("wrap.toml"), wrap).unwrap();
    std::fs::write(
        dir.join("wrap-config.toml"),
        "block = [4611686018427387905, 4]\n",
    )
    .unwrap();
    let range = "out of the range of its type (int)";
    // A block whose product of dimensions wraps around 2^64.
    let wraps = "more than CUDA allows";
    let cases: &[(&[&str], &str)] = &[
        (
            &["optimize", "k.cu", "--at", "zz=5"],
            "`zz` is not a scalar parameter",
        ),
        (&["optimize", "k.cu", "--params", "big.toml"], range),
        (&["simulate", "k.cu", "--params", "big.toml"], range),
        (
            &["analyze", "k.cu", "--block", "4611686018427387905,4"],
            wraps,
        ),
        (&["optimize", "k.cu", "--config", "wrap-config.toml"], wraps),
        (&["lint", "k.cu", "--config", "wrap-config.toml"], wraps),
        (&["simulate", "k.cu", "--params", "wrap.toml"], wraps),
        (
            &["bench", "k.cu", "--sweep", "w=99999999999", "--out", "out"],
            range,
        ),
    ];
    for (args, needle) in cases {
        let m = run(&args.join(" "), dir, args, &[]);
        assert_eq!(code(&m), 2, "{args:?}: {}", text(&m.out));
        assert!(stderr(&m).contains(needle), "{args:?}: {}", stderr(&m));
    }
    assert!(!dir.join("out").exists());
    let m = run(
        "optimize --at w=64",
        dir,
        &["optimize", "k.cu", "--at", "w=64"],
        &[],
    );
    assert_eq!(code(&m), 1, "{}", text(&m.out));
}

// ---- item 12: streams, exit status, --quiet ----

#[test]
fn diagnostics_go_to_stderr_and_findings_win_over_unreadable_files() {
    let scratch_dir = scratch("streams");
    let dir = scratch_dir.path();
    copy_testdata("addSub0", dir, "good");
    std::fs::write(
        dir.join("bad.cu"),
        "__global__ void k(int *a) {\n    a[0] = ;\n}\n",
    )
    .unwrap();
    for args in [
        &["optimize", "good.cu", "bad.cu"][..],
        &["lint", "good.cu", "bad.cu"],
    ] {
        let m = run(&format!("{} good.cu bad.cu", args[0]), dir, args, &[]);
        assert_eq!(code(&m), 1, "{args:?}: {}", text(&m.out));
        assert!(
            stderr(&m).contains("bad.cu:2:12: error[syntax]"),
            "{args:?}: {}",
            stderr(&m)
        );
        assert!(
            !stdout(&m).contains("error[syntax]"),
            "{args:?}: {}",
            stdout(&m)
        );
    }
    let m = run("optimize bad.cu", dir, &["optimize", "bad.cu"], &[]);
    assert_eq!(code(&m), 2, "{}", text(&m.out));
}

#[test]
fn quiet_prints_only_errors_and_warnings() {
    let scratch_dir = scratch("quiet");
    let dir = scratch_dir.path();
    copy_testdata("addSub0", dir, "good");
    std::fs::write(
        dir.join("bad.cu"),
        "__global__ void k(int *a) {\n    a[0] = ;\n}\n",
    )
    .unwrap();
    for cmd in ["optimize", "lint", "analyze", "parse", "simulate"] {
        let m = run(
            &format!("{cmd} --quiet"),
            dir,
            &[cmd, "--quiet", "good.cu"],
            &[],
        );
        assert!(stdout(&m).is_empty(), "{cmd}: {}", stdout(&m));
        if cmd == "lint" {
            // The lint's findings are its warnings: they stay (issue 38),
            // notes and the summary go.
            assert!(stderr(&m).contains("warning["), "{cmd}: {}", stderr(&m));
            assert!(!stderr(&m).contains("note:"), "{cmd}: {}", stderr(&m));
            assert!(
                !stderr(&m).contains(" findings in "),
                "{cmd}: {}",
                stderr(&m)
            );
        } else {
            assert!(stderr(&m).is_empty(), "{cmd}: {}", stderr(&m));
        }
    }
    let m = run(
        "optimize -q --write",
        dir,
        &["optimize", "-q", "--write", "good.cu", "bad.cu"],
        &[],
    );
    assert_eq!(code(&m), 1, "{}", text(&m.out));
    assert!(stdout(&m).is_empty(), "{}", stdout(&m));
    assert!(!stderr(&m).contains("updated"), "{}", stderr(&m));
    assert!(stderr(&m).contains("error[syntax]"), "{}", stderr(&m));
}
