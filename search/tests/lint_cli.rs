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
    let scratch_dir = scratch("config");
    let dir = scratch_dir.path();
    let good = dir.join("good.toml");
    std::fs::write(&good, "[lint]\ndisable = [\"divergent-branch\"]\n").unwrap();
    let (code, _, _) = lint(&["--config", good.to_str().unwrap(), "testdata/vector_add.cu"]);
    assert_eq!(code, 0);
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[lint]\ndisable = [\"colour\"]\n").unwrap();
    let (code, _, err) = lint(&["--config", bad.to_str().unwrap(), "testdata/vector_add.cu"]);
    assert_eq!(code, 2);
    assert!(err.contains("copper.toml [lint] disable"));
}

#[test]
fn bad_input_is_named_and_the_rest_linted() {
    let (code, out, err) = lint(&[
        "testdata/bad/malformed.cu",
        "missing.cu",
        "testdata/fan2.cu",
    ]);
    // Findings (exit 1) are not hidden by the files that cannot be read.
    assert_eq!(code, 1);
    assert!(err.contains("testdata/bad/malformed.cu:8:5: error[syntax]"));
    assert!(err.contains("missing.cu"));
    assert!(out.contains("kernel `fixed_add`"));
    assert!(out.contains("kernel `fan2`"));
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
    assert!(out.contains("no input makes a warp take 9 transactions here: degree 9 is impossible, the largest collision is 8 (the sound bound)"));
}

#[test]
fn milp_witnesses_where_the_constructive_search_fails() {
    let (_, out, _) = lint(&["--witness", "testdata/bank_witness.cu"]);
    assert!(out.contains("makes a warp take 8 transactions here (confirmed by simulation); degree 9 is impossible: the largest collision is 8 (MILP optimum over every input)"), "{out}");
    assert_eq!(
        out.matches("makes a warp take 32 transactions here (confirmed by simulation)")
            .count(),
        2,
        "{out}"
    );
    let (_, out, _) = lint(&[
        "--witness",
        "--degree",
        "9",
        "--kernel",
        "histogram_shift",
        "testdata/bank_witness.cu",
    ]);
    assert!(out.contains("no input makes a warp take 9 transactions here: degree 9 is impossible, the largest collision is 8 (MILP optimum over every input)"), "{out}");
}

/// A fresh directory for one test's files, removed when dropped.
fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("copper-lint-{name}-"))
        .tempdir()
        .unwrap()
}

#[test]
fn one_finding_per_place_listing_the_inlined_calls() {
    let scratch_dir = scratch("calls");
    let dir = scratch_dir.path();
    let file = dir.join("calls.cu");
    std::fs::write(
        &file,
        "__device__ float get(const float *a, int i) { return a[i * 7]; }\n\
         __global__ void k(const float *a, float *o) {\n\
         \x20 int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
         \x20 o[i] = get(a, i) + get(a, i + 1)\n\
         \x20   + get(a, i + 2);\n}\n",
    )
    .unwrap();
    let (_, out, _) = lint(&["--block", "32", file.to_str().unwrap()]);
    assert_eq!(
        out.matches("warning[uncoalesced-global]").count(),
        1,
        "{out}"
    );
    assert!(
        out.contains(
            "= note: in an inlined device function, reached through the calls at 4:10, 4:22, 5:7"
        ),
        "{out}"
    );
    let (_, json, _) = lint(&["--block", "32", "--format", "json", file.to_str().unwrap()]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["files"][0]["findings"][0]["calls"][2]["line"], 5);
}

#[test]
fn witness_runs_do_not_advise_running_the_witness() {
    let (_, plain, _) = lint(&["testdata/histogram256.cu"]);
    assert!(
        plain.contains("help: run `copper lint --witness`"),
        "{plain}"
    );
    let (_, out, _) = lint(&["--witness", "testdata/histogram256.cu"]);
    assert!(out.contains("= witness: "), "{out}");
    assert!(!out.contains("--witness"), "{out}");
}

#[test]
fn witness_values_of_int_arrays_are_integers_in_json() {
    let (_, json, _) = lint(&["--witness", "--format", "json", "testdata/histogram256.cu"]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let w = doc["files"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|f| f["witness"].as_object())
        .expect("a witness");
    assert_eq!(w["values"][1], serde_json::json!(32));
    assert!(w["values"][1].is_u64(), "{:?}", w["values"]);
}

#[test]
fn errors_carry_file_line_and_column_in_every_format() {
    let bad = "testdata/bad/malformed.cu";
    let (_, json, _) = lint(&["--format", "json", bad]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let e = &doc["files"][0]["errors"][0];
    assert_eq!(e["file"], bad);
    assert_eq!(e["line"], 8);
    assert_eq!(e["column"], 5);
    assert_eq!(e["code"], "syntax");
    assert!(e["message"].as_str().unwrap().starts_with("syntax error"));
    let (_, gh, _) = lint(&["--format", "github", bad]);
    assert!(
        gh.contains("::error file=testdata/bad/malformed.cu,line=8,col=5,title=copper%3A syntax::syntax error"),
        "{gh}"
    );
    let (_, sarif, _) = lint(&["--format", "sarif", bad]);
    let doc: serde_json::Value = serde_json::from_str(&sarif).unwrap();
    let run = &doc["runs"][0];
    let declared: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let results = run["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for r in results {
        assert!(declared.contains(&r["ruleId"].as_str().unwrap()), "{r}");
    }
    let err = results.iter().find(|r| r["level"] == "error").unwrap();
    let loc = &err["locations"][0]["physicalLocation"];
    assert_eq!(loc["region"]["startLine"], 8);
    assert_eq!(loc["region"]["startColumn"], 5);
}

#[test]
fn sarif_uris_are_percent_encoded_and_relative_to_the_root() {
    let scratch_dir = scratch("sarif");
    let dir = scratch_dir.path();
    let sub = dir.join("my kernels");
    std::fs::create_dir_all(&sub).unwrap();
    let file = sub.join("fan#2.cu");
    std::fs::copy(common::root().join("testdata/fan2.cu"), &file).unwrap();
    let (_, sarif, err) = lint(&[
        "--format",
        "sarif",
        "--sarif-root",
        dir.to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    let doc: serde_json::Value =
        serde_json::from_str(&sarif).unwrap_or_else(|e| panic!("{e}: {err}"));
    let run = &doc["runs"][0];
    let loc = &run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(loc["uri"], "my%20kernels/fan%232.cu");
    assert_eq!(loc["uriBaseId"], "SRCROOT");
    let base = run["originalUriBaseIds"]["SRCROOT"]["uri"]
        .as_str()
        .unwrap();
    assert!(
        base.starts_with("file:///") && base.ends_with('/'),
        "{base}"
    );
    // Without --sarif-root, relative to the current directory (the root).
    let (_, sarif, _) = lint(&["--format", "sarif", "testdata/fan2.cu"]);
    let doc: serde_json::Value = serde_json::from_str(&sarif).unwrap();
    let loc = &doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(loc["uri"], "testdata/fan2.cu");
}

#[test]
fn index_arithmetic_that_overflows_for_the_sizes_given_is_flagged() {
    // At the parameter file's small sizes, nothing overflows.
    let (_, out, _) = lint(&["testdata/chunked_scale.cu"]);
    assert!(!out.contains("index-overflow"), "{out}");
    // 8192 blocks of 256 threads with stride 1024: the 32-bit offset of
    // `scale_chunks` reaches 8191·256·1024·4 > UINT_MAX; the size_t one
    // of `scale_chunks_wide` does not overflow.
    let scratch_dir = scratch("overflow");
    let dir = scratch_dir.path();
    let params = dir.join("big.toml");
    let mut text = String::new();
    for k in ["scale_chunks", "scale_chunks_wide"] {
        text.push_str(&format!(
            "[kernel.{k}]\ngrid = [8192, 1, 1]\nblock = [256, 1, 1]\n[kernel.{k}.args]\nstride = 1024\nk = 1.5\n"
        ));
    }
    std::fs::write(&params, text).unwrap();
    let big = params.to_str().unwrap();
    let (code, out, _) = lint(&["--params", big, "testdata/chunked_scale.cu"]);
    assert_eq!(code, 1);
    assert!(out.contains("testdata/chunked_scale.cu:16:9: warning[index-overflow]: 32-bit index arithmetic can overflow for the sizes given: `*` on unsigned int operands in [0, 2147221504] and 4 can reach up to 8588886016, above UINT_MAX = 4294967295"), "{out}");
    assert!(
        out.contains("= help: compute the index in 64 bits"),
        "{out}"
    );
    assert_eq!(out.matches("warning[index-overflow]").count(), 1, "{out}");
    // Fewer blocks: the product fits in unsigned int but not in `int base`.
    let (_, out, _) = lint(&[
        "--params",
        big,
        "--block",
        "256",
        "--grid",
        "4096",
        "testdata/chunked_scale.cu",
    ]);
    assert!(out.contains("warning[index-overflow]: 32-bit index arithmetic can overflow for the sizes given: an unsigned int value in [0, 4293918975] converted to int can reach up to 4293918975, above INT_MAX = 2147483647"), "{out}");
    // The usual global index at the largest 1-D launch: no false alarm.
    let (_, out, _) = lint(&["--block", "1024", "--grid", "65535", "testdata/saxpy.cu"]);
    assert!(!out.contains("index-overflow"), "{out}");
    let (_, out, _) = lint(&[
        "--allow",
        "index-overflow",
        "--params",
        big,
        "testdata/chunked_scale.cu",
    ]);
    assert!(!out.contains("index-overflow"), "{out}");
}

#[test]
fn color_is_asked_for_or_left_out() {
    let (_, always, _) = lint(&["testdata/fan2.cu", "--color", "always"]);
    assert!(
        always.contains(": \x1b[1;33mwarning[uncoalesced-global]\x1b[0m: uncoalesced global load"),
        "{always}"
    );
    // Not a terminal (as here), `never`, or NO_COLOR: plain text.
    for args in [
        &["testdata/fan2.cu"][..],
        &["testdata/fan2.cu", "--color", "never"],
    ] {
        let (_, plain, _) = lint(args);
        assert!(!plain.contains('\x1b'), "{plain}");
    }
    let (_, json, _) = lint(&["testdata/fan2.cu", "--color", "always", "--format", "json"]);
    assert!(!json.contains('\x1b'));
}

#[test]
fn a_gpu_sized_parameter_file_is_searched_for_races_on_a_scaled_down_launch() {
    // 4096×4096 in 256×256 blocks: the race search runs the launch scaled
    // down, so it finishes (and the verdict counts the launches it ran)
    // with the findings the small parameter file gives.
    let findings = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.contains(": warning[") || l.contains(": error["))
            .map(str::to_string)
            .collect()
    };
    let (_, small, _) = lint(&["testdata/brighten_rows.cu"]);
    let (code, big, _) = lint(&[
        "--params",
        "bench/gpu/brighten_rows.toml",
        "testdata/brighten_rows.cu",
    ]);
    assert_eq!(code, 1, "{big}");
    assert_eq!(findings(&big), findings(&small));
    let ran = big
        .split("none found in ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse::<u32>().ok());
    assert!(ran.is_some_and(|n| n >= 2), "{big}");
}

#[test]
fn directories_are_linted_with_a_table_of_every_file() {
    let scratch_dir = scratch("batch");
    let dir = scratch_dir.path();
    std::fs::write(
        dir.join("good.cu"),
        "__global__ void k(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i * n] = 0; }\n",
    )
    .unwrap();
    std::fs::write(dir.join("broken.cu"), "__global__ void k(float *a { \n").unwrap();
    let report = dir.join("out.jsonl");
    let d = dir.to_str().unwrap();
    let (code, out, err) = lint(&[d, "--jobs", "2", "--report", report.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(!err.contains("is a directory"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // Full names, kernels, errors and warnings per file.
    let row = |name: &str| {
        let path = dir.join(name).display().to_string();
        out.lines()
            .find(|l| l.strip_prefix(&path).is_some_and(|r| r.starts_with(' ')))
            .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>())
    };
    assert!(out.contains("kernels  errors  warnings"), "{out}");
    assert_eq!(row("good.cu"), Some(vec!["1", "0", "1"]), "{out}");
    let broken = row("broken.cu").expect("a row for the broken file");
    assert_ne!(broken[1], "0", "a failed file counts as an error: {out}");
    // The failed file is counted, not hidden in "0 findings in 0 kernels".
    let last = out.lines().last().unwrap_or("");
    assert!(last.contains("1 error in 1 file of 2"), "{last}");
    // One JSON object per file.
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&report)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert!(lines.iter().any(|l| l["error_count"] == 1));
    assert!(lines.iter().any(|l| l["warning_count"] == 1));
    // A bounds guard is no divergent branch.
    assert!(!out.contains("divergent-branch"), "{out}");
}

#[test]
fn quiet_keeps_errors_and_warnings() {
    let (code, out, err) = lint(&["-q", "testdata/fan2.cu", "testdata/bad/malformed.cu"]);
    assert_eq!(code, 1);
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("warning[uncoalesced-global]"), "{err}");
    assert!(err.contains("error[syntax]"), "{err}");
    assert!(!err.contains("note: kernel"), "{err}");
}

#[test]
fn findings_in_a_header_are_placed_in_the_header() {
    let (_, out, _) = lint(&["testdata/projects/blur/blur.cu"]);
    assert!(
        out.contains("testdata/projects/blur/blur.h:24:13: warning[uncoalesced-global]"),
        "{out}"
    );
    assert!(out.contains("testdata/projects/blur/blur.h:20:1: note: kernel `zero_borders`"));
    assert!(!out.contains("blur.cu:6:1"), "{out}");
    let (_, sarif, _) = lint(&["--format", "sarif", "testdata/projects/blur/blur.cu"]);
    assert!(sarif.contains("blur.h"), "{sarif}");
}

#[test]
fn inline_suppressions_and_unused_ones() {
    let scratch_dir = scratch("suppress");
    let dir = scratch_dir.path();
    let src = "__global__ void k(float *a, float *b, int n) { // copper: allow(bank-conflict)\n\
               int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
               a[i * n] = 0; // copper: allow(uncoalesced-global)\n\
               // copper: allow-next-line(uncoalesced-global)\n\
               b[i * n] = 1;\n\
               b[i * 7 + 1] = 1;\n\
               }\n\
               // copper: allow(uncoalesced-global)\n\
               __global__ void whole(float *a, int n) {\n\
               a[(blockIdx.x * blockDim.x + threadIdx.x) * n] = 0; }\n";
    let f = dir.join("s.cu");
    std::fs::write(&f, src).unwrap();
    let (code, out, _) = lint(&[f.to_str().unwrap()]);
    assert_eq!(code, 1);
    let at = |line: usize| format!("s.cu:{line}:");
    let finding_lines: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("warning[uncoalesced-global]"))
        .collect();
    // Only the accesses on line 6 and in `whole` (line 10) are left.
    assert_eq!(finding_lines.len(), 2, "{out}");
    assert!(finding_lines[0].contains(&at(6)), "{out}");
    assert!(finding_lines[1].contains(&at(10)), "{out}");
    // The kernel-line suppression of `bank-conflict` silenced nothing; the
    // one before `whole` is on no kernel's line and silences nothing either.
    assert!(
        out.contains(&format!("{}51: warning[unused-suppression]", at(1))),
        "{out}"
    );
    assert!(
        out.contains(&format!("{}4: warning[unused-suppression]", at(8))),
        "{out}"
    );
    // On the kernel's line: the whole kernel.
    std::fs::write(
        &f,
        "__global__ void whole(float *a, int n) { // copper: allow(uncoalesced-global)\n\
         a[(blockIdx.x * blockDim.x + threadIdx.x) * n] = 0; }\n",
    )
    .unwrap();
    let (code, out, _) = lint(&[f.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("warning["), "{out}");
}

#[test]
fn every_code_is_explained_and_sarif_rules_carry_the_texts() {
    for c in copper::lint::Code::ALL {
        let out = Command::new(env!("CARGO_BIN_EXE_copper"))
            .args(["explain", c.name()])
            .output()
            .expect("copper runs");
        assert_eq!(out.status.code(), Some(0));
        let text = String::from_utf8_lossy(&out.stdout);
        for part in ["What: ", "Why: ", "Example:", "Fix:"] {
            assert!(text.contains(part), "{}: {text}", c.name());
        }
    }
    let out = Command::new(env!("CARGO_BIN_EXE_copper"))
        .args(["explain", "nonsense"])
        .output()
        .expect("copper runs");
    assert_eq!(out.status.code(), Some(2));
    let (_, sarif, _) = lint(&["--format", "sarif", "testdata/fan2.cu"]);
    let doc: serde_json::Value = serde_json::from_str(&sarif).unwrap();
    for rule in doc["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["id"] != "copper/error")
    {
        assert!(
            rule["fullDescription"]["text"]
                .as_str()
                .is_some_and(|t| t.len() > 40),
            "{rule}"
        );
        assert!(
            rule["helpUri"]
                .as_str()
                .is_some_and(|u| u.starts_with("docs/")),
            "{rule}"
        );
    }
}

#[test]
fn a_header_not_found_is_a_warning_that_says_pass_i() {
    let scratch_dir = scratch("header");
    let dir = scratch_dir.path();
    let f = dir.join("m.cu");
    std::fs::write(
        &f,
        "#include \"nowhere.h\"\n__global__ void k(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = 0; }\n",
    )
    .unwrap();
    let (_, _, err) = lint(&["-q", f.to_str().unwrap()]);
    assert!(err.contains("m.cu:1:"), "{err}");
    assert!(err.contains("pass -I DIR"), "{err}");
}
