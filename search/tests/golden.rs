//! Golden outputs for every `testdata/` file: `copper analyze` compared
//! with `golden/analyze/NAME.txt`, and `copper optimize --explain` (the
//! rewritten kernel's diff, the bounds before and after, every candidate
//! and what each transform left alone) with `golden/optimize/NAME.txt`.
//! `copper lint --witness` is compared with `golden/lint/NAME.txt`.
//! Timings are left out. A change in a bound or a rewrite shows up here for
//! review; `UPDATE_GOLDEN=1 cargo test --release --test golden` rewrites
//! the files.

mod common;

use std::path::Path;

use common::{copper_in, root, text};

/// The output of `copper ARGS FILE`, stdout then stderr.
fn run(args: &[&str], file: &Path) -> String {
    let mut all: Vec<&str> = args.to_vec();
    all.push(file.to_str().expect("a UTF-8 path"));
    text(&copper_in(&root(), &all))
}

/// Whether a word is a duration (`12 ms`, `0.03 s` once split).
fn is_duration(cell: &str) -> bool {
    let mut parts = cell.split(' ');
    let (Some(n), Some(unit), None) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    n.parse::<f64>().is_ok() && (unit == "ms" || unit == "s")
}

/// Output lines without timings: timing lines are dropped, and the time
/// column of a summary table becomes `-`, its columns re-spaced.
fn without_timings(text: &str) -> String {
    let timing_line = |l: &str| {
        let t = l.trim_start();
        t.starts_with("analyzed in ")
            || t.starts_with("searched in ")
            || (t.contains(" in ") && t.contains(" improved, "))
    };
    // Split on `\n` only: a diff of a CRLF file keeps its `\r`s, so that
    // the recorded patch still applies.
    text.strip_suffix('\n')
        .unwrap_or(text)
        .split('\n')
        .filter(|l| !timing_line(l))
        .map(|l| {
            let cells: Vec<&str> = l
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect();
            let header = cells.first() == Some(&"file") && cells.contains(&"time");
            if cells.len() >= 6 && (header || cells.iter().any(|c| is_duration(c))) {
                let cells: Vec<&str> = cells
                    .into_iter()
                    .map(|c| if is_duration(c) { "-" } else { c })
                    .collect();
                format!("{}\n", cells.join("  "))
            } else {
                format!("{l}\n")
            }
        })
        .collect()
}

/// Compares (or with `UPDATE_GOLDEN` rewrites) `golden/DIR/NAME.txt` with
/// the output of `copper ARGS testdata/NAME.cu` for every testdata file.
fn check_golden(dir: &str, args: &[&str]) {
    let golden = root().join("golden").join(dir);
    let update = std::env::var("UPDATE_GOLDEN").is_ok();
    let mut files: Vec<_> = std::fs::read_dir(root().join("testdata"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    files.sort();
    let mut differ = Vec::new();
    for f in &files {
        let name = f.file_stem().unwrap().to_string_lossy().to_string();
        let rel = Path::new("testdata").join(f.file_name().unwrap());
        let got = without_timings(&run(args, &rel));
        let path = golden.join(format!("{name}.txt"));
        if update {
            std::fs::create_dir_all(&golden).unwrap();
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        if want != got {
            differ.push(format!("{name}:\n--- golden\n{want}--- now\n{got}"));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} outputs differ from golden/{dir} (UPDATE_GOLDEN=1 rewrites them):\n{}",
        differ.len(),
        files.len(),
        differ.join("\n")
    );
}

#[test]
fn analyze_output_matches_golden() {
    check_golden("analyze", &["analyze"]);
}

#[test]
fn optimize_output_matches_golden() {
    check_golden("optimize", &["optimize", "--explain"]);
}

#[test]
fn lint_output_matches_golden() {
    // A budget no witness search comes near on these files, so that no
    // line depends on how busy the machine is (the default is 20 s).
    check_golden("lint", &["lint", "--witness", "--budget", "300"]);
}

#[test]
fn timings_are_left_out() {
    let text = "file  kernel  wsteps before  after  transforms  time     status\na.cu  k  6 + 5·w  -  -  12 ms  unchanged\n  searched in 3 ms (0 candidates)\n1 kernel in 1 file: 0 improved, 0 errors, 0.01 s\nkept\n";
    assert_eq!(
        without_timings(text),
        "file  kernel  wsteps before  after  transforms  time  status\na.cu  k  6 + 5·w  -  -  -  unchanged\nkept\n"
    );
}

#[path = "shared/table_1.rs"]
mod table_1;
use table_1::TABLE_1;

/// The `wsteps` bounds of a golden optimize output: the bound before, and
/// after when the kernel was improved.
fn golden_wsteps(golden: &str) -> Vec<String> {
    let line = golden
        .lines()
        .find_map(|l| l.strip_prefix("  wsteps "))
        .unwrap_or_default();
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(String::from)
        .collect()
}

/// `docs/optimize.md`'s Table 1 says what `golden/optimize/` records:
/// for each benchmark, what copper found (or "none", with the sizes from
/// which a rewrite wins) and the `wsteps` bounds before and after.
#[test]
fn table_1_in_the_docs_is_what_the_goldens_record() {
    let docs = std::fs::read_to_string(root().join("docs/optimize.md")).expect("docs/optimize.md");
    let table = docs
        .split("## Against COpPER's Table 1")
        .nth(1)
        .expect("the Table 1 section");
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip_while(|l| !l.starts_with("| benchmark"))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| l.split('|').map(str::trim).collect())
        .collect();
    assert_eq!(rows.len(), TABLE_1.len(), "rows of Table 1: {rows:?}");
    for row in rows {
        let (name, found, bounds) = (row[1], row[3], row[4]);
        let file = TABLE_1
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("`{name}` is not a Table 1 benchmark"))
            .1;
        let golden = std::fs::read_to_string(root().join(format!("golden/optimize/{file}.txt")))
            .expect("a golden");
        assert_eq!(
            bounds,
            golden_wsteps(&golden).join(" → "),
            "{name}: the bounds in the docs"
        );
        if let Some(later) = found.strip_prefix("none") {
            assert!(golden.contains("no improvement found"), "{name}: {found}");
            if let Some((_, sizes)) = later.split_once("from about ") {
                assert!(
                    golden.contains(&format!("lowers the bound from about {sizes};")),
                    "{name}: {found}"
                );
            }
        } else {
            assert!(golden.contains(": improved;"), "{name}: {found}");
            for transform in found.split(", then ") {
                assert!(
                    golden.contains(&format!("\n  {transform}: ")),
                    "{name}: `{transform}` is not what the golden applies"
                );
            }
        }
    }
}
