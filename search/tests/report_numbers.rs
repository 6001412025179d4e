//! What a teacher grades with: `optimize --report` rows carry each bound
//! evaluated at the sizes in use, the improvement as a ratio, and the
//! worst warp simulated on the test launch before and after; a
//! `.csv` report is a spreadsheet; the summary table names files in full.

mod common;

use std::path::Path;

use common::{copper_in, root, text, Scratch};

/// A fresh scratch directory with copies of testdata files (and their
/// parameter files), each under the name given.
fn workspace(files: &[(&str, &str)]) -> Scratch {
    let scratch = Scratch::new();
    let dir = scratch.path();
    for (from, to) in files {
        std::fs::copy(root().join("testdata").join(from), dir.join(to)).unwrap();
        let toml = root()
            .join("testdata")
            .join(Path::new(from).with_extension("toml"));
        if toml.exists() {
            std::fs::copy(toml, dir.join(Path::new(to).with_extension("toml"))).unwrap();
        }
    }
    scratch
}

fn rows(jsonl: &str) -> Vec<serde_json::Value> {
    jsonl
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

fn row<'a>(rows: &'a [serde_json::Value], kernel: &str) -> &'a serde_json::Value {
    rows.iter()
        .find(|r| r["kernel"] == kernel)
        .unwrap_or_else(|| panic!("no row for {kernel}: {rows:?}"))
}

#[test]
fn report_rows_carry_bounds_at_the_sizes_in_use() {
    let ws = workspace(&[
        ("tree_sum.cu", "tree_sum.cu"),
        ("students/main_matmul.cu", "main_matmul.cu"),
    ]);
    let dir = ws.path();
    let o = copper_in(dir, &["optimize", ".", "--report", "r.jsonl", "-q"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let all = rows(&std::fs::read_to_string(dir.join("r.jsonl")).unwrap());
    // The parameter file's launch (n = 4000): a constant bound, 242 → 166.
    let sum = row(&all, "sum_counts");
    assert_eq!(sum["sizes"]["from"], "the parameter file's launch");
    assert_eq!(sum["value_before"], 242.0);
    assert_eq!(sum["value_after"], 166.0);
    let ratio = sum["improvement"].as_f64().unwrap();
    assert!((ratio - 242.0 / 166.0).abs() < 1e-9, "{ratio}");
    // The host code's launch: `N` = 500 is cut for testing, but the bound
    // is evaluated at 500, as the program runs it.
    let mm = row(&all, "matMul");
    assert_eq!(mm["sizes"]["from"], "the launch at line 30");
    assert_eq!(mm["sizes"]["values"]["n"], 500.0);
    assert_eq!(mm["bound_before"], "65 + 47·max(0, n)");
    assert_eq!(mm["value_before"], 65.0 + 47.0 * 500.0);
    // Tiled: the improvement is the ratio of the two values.
    let (b, a) = (
        mm["value_before"].as_f64().unwrap(),
        mm["value_after"].as_f64().unwrap(),
    );
    assert!(a < b, "{mm}");
    assert!(
        (mm["improvement"].as_f64().unwrap() - b / a).abs() < 1e-9,
        "{mm}"
    );
    // Simulated on the test launch (the host code's, sizes cut for
    // testing): every metric before and after, the ranking metric's ratio.
    let sim = &mm["simulated"];
    assert_eq!(sim["launch"], "grid 3×3×1, block 16×16×1", "{mm}");
    for m in ["wsteps", "steps", "sectors", "conflicts", "divwarps"] {
        assert!(
            sim["before"][m].is_number() && sim["after"][m].is_number(),
            "{m}: {mm}"
        );
    }
    let (sb, sa) = (
        mm["simulated_before"].as_f64().unwrap(),
        mm["simulated_after"].as_f64().unwrap(),
    );
    assert!(sa > 0.0 && sa < sb, "{mm}");
    assert!((mm["simulated_improvement"].as_f64().unwrap() - sb / sa).abs() < 1e-9);
    // Every metric's bound has its value too.
    assert!(mm["bounds"]
        .as_array()
        .unwrap()
        .iter()
        .all(|b| b["before_value"].is_number()));
    // `--at` wins over the launch.
    let o = copper_in(
        dir,
        &[
            "optimize",
            "main_matmul.cu",
            "--at",
            "n=1000",
            "--report",
            "at.jsonl",
            "-q",
        ],
    );
    assert!(o.status.code().is_some_and(|c| c < 2), "{}", text(&o));
    let at = rows(&std::fs::read_to_string(dir.join("at.jsonl")).unwrap());
    assert_eq!(row(&at, "matMul")["sizes"]["from"], "--at");
    assert_eq!(row(&at, "matMul")["value_before"], 65.0 + 47.0 * 1000.0);
}

#[test]
fn a_csv_report_is_a_spreadsheet_and_the_table_names_files_in_full() {
    let long_a = "submission_of_student_number_0001_homework_three.cu";
    let long_b = "submission_of_student_number_0001_homework_three_v2.cu";
    let ws = workspace(&[
        ("tree_sum.cu", long_a),
        ("students/reduce_shared.cu", long_b),
    ]);
    let dir = ws.path();
    let o = copper_in(dir, &["optimize", ".", "--report", "grades.csv"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(long_a) && out.contains(long_b), "{out}");
    let csv = std::fs::read_to_string(dir.join("grades.csv")).unwrap();
    let lines: Vec<&str> = csv.split("\r\n").filter(|l| !l.is_empty()).collect();
    assert_eq!(
        lines[0],
        "file,kernel,line,status,metric,bound_before,bound_after,value_before,value_after,improvement,simulated_before,simulated_after,simulated_improvement,sizes,transforms,seconds"
    );
    // One row per kernel: tree_sum's two kernels and the student's one.
    assert_eq!(lines.len(), 4, "{csv}");
    let sum = lines
        .iter()
        .find(|l| l.contains(",sum_counts,"))
        .expect("a row for sum_counts");
    assert!(
        sum.contains(",improved,wsteps,242,166,242.0,166.0,1.457831325"),
        "{sum}"
    );
    // The worst warp simulated on the test launch, before and after, each
    // within its bound.
    let cells: Vec<&str> = sum.split(',').collect();
    let number = |i: usize| cells[i].parse::<f64>().unwrap_or(f64::NAN);
    let (before, after, ratio) = (number(10), number(11), number(12));
    assert!(before > 0.0 && before <= 242.0, "{sum}");
    assert!(after > 0.0 && after <= 166.0 && after < before, "{sum}");
    assert!((ratio - before / after).abs() < 1e-9, "{sum}");
    assert!(
        sum.contains("n=4000 (the parameter file's launch)"),
        "{sum}"
    );
}
