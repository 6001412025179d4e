//! Untrusted trees and names: what copper prints about the
//! files it is given, what it leaves behind when killed, and what it
//! reads and writes outside the trees it was given.

mod common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

use common::{root, text};

/// A fresh scratch directory for one case, removed when dropped.
fn scratch(name: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("copper-untrusted-{name}-"))
        .tempdir()
        .unwrap()
}

/// `copper ARGS` run in `dir`.
fn copper(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_copper"));
    c.current_dir(dir);
    c
}

/// Copies `testdata/NAME.cu` and its parameter file into `dir` as `stem`.
fn copy_testdata(name: &str, dir: &Path, stem: &str) -> PathBuf {
    let cu = dir.join(format!("{stem}.cu"));
    std::fs::copy(root().join(format!("testdata/{name}.cu")), &cu).unwrap();
    std::fs::copy(
        root().join(format!("testdata/{name}.toml")),
        dir.join(format!("{stem}.toml")),
    )
    .unwrap();
    cu
}

/// The names in `dir` that look like copper's temporary files.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".copper.tmp"))
        .collect()
}

// ---- item 14: temporary files removed when a signal ends copper ----

#[test]
fn a_write_past_the_file_size_limit_leaves_no_temporary_file() {
    let scratch_dir = scratch("xfsz");
    let dir = scratch_dir.path();
    copy_testdata("addSub0", dir, "k");
    let mut cmd = copper(dir);
    cmd.args(["optimize", "k.cu", "--write"]);
    // SAFETY: setrlimit is async-signal-safe; the limit (bytes) is below
    // the size of the rewritten file, so writing it raises SIGXFSZ.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 200,
                rlim_max: 200,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &lim);
            Ok(())
        });
    }
    let out: Output = cmd.output().unwrap();
    assert!(!out.status.success(), "{}", text(&out));
    assert_eq!(temporaries(dir), Vec::<String>::new(), "{}", text(&out));
    let original = std::fs::read(root().join("testdata/addSub0.cu")).unwrap();
    assert_eq!(std::fs::read(dir.join("k.cu")).unwrap(), original);
}

// ---- item 13: names passed through to the output ----

/// Stdout and stderr, bytes.
fn all_bytes(out: &Output) -> Vec<u8> {
    [out.stdout.as_slice(), out.stderr.as_slice()].concat()
}

#[test]
fn odd_file_names_are_quoted_in_patches_and_escaped_elsewhere() {
    use std::os::unix::ffi::OsStrExt;
    let scratch_dir = scratch("names");
    let dir = scratch_dir.path();
    let names: [&[u8]; 2] = [b"nl\n::error title=x::owned", b"b\xff\x1b[31m"];
    for stem in names {
        let stem = std::ffi::OsStr::from_bytes(stem);
        let cu = dir.join(stem).with_extension("cu");
        std::fs::copy(root().join("testdata/addSub0.cu"), &cu).unwrap();
        std::fs::copy(
            root().join("testdata/addSub0.toml"),
            cu.with_extension("toml"),
        )
        .unwrap();
    }
    let diff = copper(dir)
        .args(["optimize", "--diff", "."])
        .output()
        .unwrap();
    let patch = String::from_utf8_lossy(&diff.stdout).into_owned();
    assert!(
        patch.contains("--- \"a/b\\377\\033[31m.cu\"\n+++ \"b/b\\377\\033[31m.cu\"\n"),
        "{patch}"
    );
    assert!(patch.contains("--- \"a/nl\\n::error title=x::owned.cu\""));
    // git reads the names back: the patch applies to these very files.
    std::fs::write(dir.join("p.diff"), &diff.stdout).unwrap();
    let check = Command::new("git")
        .args(["apply", "--check", "p.diff"])
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(check.status.success(), "{}", text(&check));
    // No format lets a newline start a line of its own or an escape
    // sequence reach the terminal.
    for format in [
        &["--diff"][..],
        &[],
        &["--format", "github"],
        &["--format", "json"],
    ] {
        let out = copper(dir)
            .arg("optimize")
            .args(format)
            .arg(".")
            .output()
            .unwrap();
        let bytes = all_bytes(&out);
        assert!(!bytes.contains(&0x1b), "{format:?}: {}", text(&out));
        assert!(
            !bytes
                .split(|&b| b == b'\n')
                .any(|l| l.starts_with(b"::error")),
            "{format:?}: {}",
            text(&out)
        );
    }
    let lint = copper(dir)
        .args(["lint"])
        .arg(dir.join(std::ffi::OsStr::from_bytes(b"b\xff\x1b[31m.cu")))
        .output()
        .unwrap();
    assert!(!all_bytes(&lint).contains(&0x1b), "{}", text(&lint));
    assert!(
        text(&lint).contains("b\\xff\\x1b[31m.cu"),
        "{}",
        text(&lint)
    );
}

#[test]
fn the_directory_a_patch_applies_from_is_quoted_for_the_shell() {
    let scratch_dir = scratch("hint");
    let dir = scratch_dir.path();
    let odd = dir.join("x $(touch PWNED)");
    let elsewhere = dir.join("cwd");
    std::fs::create_dir_all(&odd).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    copy_testdata("addSub0", &odd, "k");
    copy_testdata("addSub1", &odd, "j");
    let out = copper(&elsewhere)
        .args(["optimize", "--diff"])
        .arg(odd.join("k.cu"))
        .arg(odd.join("j.cu"))
        .output()
        .unwrap();
    let odd = odd.canonicalize().unwrap();
    let want = format!("patch -p1 -d '{}'", odd.to_str().unwrap());
    assert!(text(&out).contains(&want), "{}", text(&out));
}

// ---- item 16: reading and writing outside the trees given ----

#[test]
fn a_header_outside_the_files_tree_is_noted_or_refused() {
    let scratch_dir = scratch("outside-include");
    let dir = scratch_dir.path();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("secret.h"), "#define SECRET 7\n").unwrap();
    std::fs::write(
        dir.join("src/k.cu"),
        "#include \"../secret.h\"\n__global__ void k(float *a) { a[threadIdx.x] = SECRET; }\n",
    )
    .unwrap();
    let read = copper(dir).args(["parse", "src/k.cu"]).output().unwrap();
    assert!(
        text(&read).contains("read from") && text(&read).contains("outside this file's directory"),
        "{}",
        text(&read)
    );
    let refused = copper(dir)
        .args(["parse", "src/k.cu", "--no-outside-includes"])
        .output()
        .unwrap();
    assert!(
        text(&refused).contains("not read (--no-outside-includes)"),
        "{}",
        text(&refused)
    );
    // Inside the tree, or in an -I directory, nothing is said.
    let inside = copper(dir)
        .args(["parse", "src/k.cu", "--no-outside-includes", "-I", "."])
        .output()
        .unwrap();
    assert!(!text(&inside).contains("outside"), "{}", text(&inside));
}

#[test]
fn no_follow_keeps_a_batch_write_inside_the_tree_and_a_write_outside_is_noted() {
    let scratch_dir = scratch("no-follow");
    let dir = scratch_dir.path();
    let (tree, outside) = (dir.join("tree"), dir.join("outside"));
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    copy_testdata("addSub0", &outside, "k");
    copy_testdata("addSub1", &tree, "own");
    std::os::unix::fs::symlink(&outside, tree.join("link")).unwrap();
    let original = std::fs::read(outside.join("k.cu")).unwrap();
    let kept = copper(dir)
        .args(["optimize", "--write", "--no-follow", "tree"])
        .output()
        .unwrap();
    assert_eq!(std::fs::read(outside.join("k.cu")).unwrap(), original);
    assert!(
        text(&kept).contains("skipped: a symbolic link (--no-follow)"),
        "{}",
        text(&kept)
    );
    let followed = copper(dir)
        .args(["optimize", "--write", "tree"])
        .output()
        .unwrap();
    assert_ne!(std::fs::read(outside.join("k.cu")).unwrap(), original);
    assert!(
        text(&followed).contains("outside the paths given"),
        "{}",
        text(&followed)
    );
}

// ---- a discovered copper.toml's nvcc_flags ----

#[test]
fn a_discovered_copper_toml_cannot_pass_flags_to_nvcc() {
    use std::os::unix::fs::PermissionsExt;
    let scratch_dir = scratch("config-flags");
    let dir = scratch_dir.path();
    let nvcc = dir.join("fake-nvcc");
    std::fs::write(
        &nvcc,
        "#!/bin/sh\necho \"$@\" >> \"$(dirname \"$0\")/ARGS\"\necho 'Cuda compilation tools, release 13.0'\n",
    )
    .unwrap();
    std::fs::set_permissions(&nvcc, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        dir.join("copper.toml"),
        "nvcc_flags = [\"-ccbin\", \"./evil.sh\"]\n",
    )
    .unwrap();
    let sub = dir.join("sub");
    std::fs::create_dir(&sub).unwrap();
    copy_testdata("saxpy", &sub, "k");
    let out = copper(&sub)
        .args(["optimize", "k.cu", "--nvcc"])
        .arg(&nvcc)
        .output()
        .unwrap();
    let args = std::fs::read_to_string(dir.join("ARGS")).unwrap_or_default();
    assert!(args.contains("-c"), "nvcc never compiled: {}", text(&out));
    assert!(!args.contains("ccbin"), "{args}");
    assert!(
        text(&out).contains("asks to pass `-ccbin ./evil.sh` to nvcc; not passed"),
        "{}",
        text(&out)
    );
    // Given with --config, they are the user's choice.
    let _ = std::fs::remove_file(dir.join("ARGS"));
    copper(&sub)
        .args(["optimize", "k.cu", "--config", "../copper.toml", "--nvcc"])
        .arg(&nvcc)
        .output()
        .unwrap();
    let args = std::fs::read_to_string(dir.join("ARGS")).unwrap_or_default();
    assert!(args.contains("-ccbin ./evil.sh"), "{args}");
}

// ---- found by the fuzzing harness ----

#[test]
fn a_macro_bomb_in_an_expression_ends_soon() {
    let scratch_dir = scratch("macro-bomb");
    let dir = scratch_dir.path();
    let mut src = String::from("#define M0 x\n");
    for l in 1..=14 {
        src.push_str(&format!("#define M{l} (M{p} + M{p})\n", p = l - 1));
    }
    src.push_str("__global__ void k(float *a, float x) { a[threadIdx.x] = M14; }\n");
    std::fs::write(dir.join("k.cu"), src).unwrap();
    let start = std::time::Instant::now();
    let out = copper(dir).args(["parse", "k.cu"]).output().unwrap();
    assert!(out.status.code().is_some(), "{}", text(&out));
    assert!(
        start.elapsed() < std::time::Duration::from_secs(20),
        "took {:?}",
        start.elapsed()
    );
}

#[test]
fn a_chain_of_thousands_of_unary_minuses_does_not_overflow_a_workers_stack() {
    let scratch_dir = scratch("unary-chain");
    let dir = scratch_dir.path();
    copy_testdata("gaussian_fan", dir, "k");
    let src = std::fs::read_to_string(dir.join("k.cu")).unwrap();
    let chain = format!("return{} x;", "-".repeat(3000));
    std::fs::write(dir.join("k.cu"), src.replacen("return;", &chain, 1)).unwrap();
    let out = copper(dir)
        .args(["optimize", "--diff", "k.cu"])
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "{:?}: {}",
        out.status,
        text(&out)
    );
}
