//! `copper lint` from the command line: exit statuses, bad input, formats,
//! codes turned off, witnesses.

mod common;

use common::root;
use std::process::Command;

/// Exit status, stdout and stderr of `copper lint ARGS`.
fn lint(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_copper"))
        .arg("lint")
        .args(args)
        .current_dir(root())
        .output()
        .expect("copper runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn findings_exit_1_and_point_at_the_access() {
    let (code, out, _) = lint(&["testdata/fan2.cu"]);
    assert_eq!(code, 1);
    assert!(out.contains(
        "testdata/fan2.cu:18:18: warning[uncoalesced-global]: uncoalesced global load of `M`"
    ));
    assert!(out.contains("\n                     ^\n  = why: "));
    let (_, fixed, _) = lint(&["testdata/fan2_fixed.cu"]);
    assert!(!fixed.contains("uncoalesced-global"));
}

#[test]
fn allowed_codes_leave_a_clean_kernel() {
    let (code, out, _) = lint(&["--allow", "divergent-branch", "testdata/vector_add.cu"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 findings in 1 kernel"));
    let (code, _, err) = lint(&["--allow", "nonsense", "testdata/vector_add.cu"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown lint code"));
}

#[test]
fn copper_toml_disables_codes() {
    let dir = std::env::temp_dir().join(format!("copper-lint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.toml");
    std::fs::write(&good, "[lint]\ndisable = [\"divergent-branch\"]\n").unwrap();
    let (code, _, _) = lint(&["--config", good.to_str().unwrap(), "testdata/vector_add.cu"]);
    assert_eq!(code, 0);
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[lint]\ndisable = [\"colour\"]\n").unwrap();
    let (code, _, err) = lint(&["--config", bad.to_str().unwrap(), "testdata/vector_add.cu"]);
    assert_eq!(code, 2);
    assert!(err.contains("copper.toml [lint] disable"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_input_is_named_and_the_rest_linted() {
    let (code, out, err) = lint(&[
        "testdata/bad/malformed.cu",
        "missing.cu",
        "testdata/saxpy.cu",
    ]);
    // Findings (exit 1) are not hidden by the files that cannot be read.
    assert_eq!(code, 1);
    assert!(err.contains("testdata/bad/malformed.cu:8:5: error[syntax]"));
    assert!(err.contains("missing.cu"));
    assert!(out.contains("kernel `fixed_add`"));
    assert!(out.contains("kernel `saxpy`"));
    assert!(!err.contains("panicked"));
    let (code, _, err) = lint(&[
        "testdata/bad/malformed.cu",
        "testdata/vector_add.cu",
        "--allow",
        "divergent-branch",
    ]);
    assert_eq!(code, 2, "nothing to report and a file unreadable: {err}");
}

#[test]
fn formats() {
    let (_, json, _) = lint(&["--format", "json", "testdata/fan2.cu"]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["files"][0]["findings"][1]["code"], "uncoalesced-global");
    assert_eq!(
        doc["files"][0]["kernels"][0]["block_size"]["verdict"],
        "independent"
    );
    let (_, sarif, _) = lint(&["--format", "sarif", "testdata/fan2.cu"]);
    let doc: serde_json::Value = serde_json::from_str(&sarif).unwrap();
    assert_eq!(doc["version"], "2.1.0");
    assert_eq!(
        doc["runs"][0]["results"][1]["ruleId"],
        "copper/uncoalesced-global"
    );
    let (_, gh, _) = lint(&["--format", "github", "testdata/fan2.cu"]);
    assert!(gh
        .lines()
        .all(|l| l.starts_with("::warning file=testdata/fan2.cu,line=")));
}

#[test]
fn witnesses_and_impossible_degrees() {
    let (_, out, _) = lint(&["--witness", "testdata/histogram256.cu"]);
    assert!(out.contains("witness: `data` = [0, 32, 64, 96, 128, 160, 192, 224] (repeated) makes a warp take 8 transactions"));
    let (_, out, _) = lint(&["--witness", "--degree", "9", "testdata/histogram256.cu"]);
    assert!(out.contains("no input makes a warp take 9 transactions here: the sound bound is 8"));
}
