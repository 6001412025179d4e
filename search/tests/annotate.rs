//! `copper annotate`: every cost the simulation charges lands on a line
//! of the kernel (the lines add up to the launch's total, per metric), and
//! the bound per warp is printed beside the worst warp simulated; with
//! `--rewrite`, the best version follows, annotated the same way.

mod common;

use common::{copper_in, root, text};

/// The per-metric "all warps" totals and the per-line rows (line number,
/// one cost per metric) of one kernel's annotation.
fn parse(out: &str) -> (Vec<f64>, Vec<(usize, Vec<f64>)>) {
    let mut totals = Vec::new();
    let mut rows = Vec::new();
    for l in out.lines() {
        if let Some(all) = l.split("all warps ").nth(1) {
            totals.push(all.trim().parse().expect("a number"));
        }
        let Some((cells, _)) = l.split_once('|') else {
            continue;
        };
        let fields: Vec<&str> = cells.split_whitespace().collect();
        let Some((line, costs)) = fields.split_last() else {
            continue;
        };
        let costs: Vec<f64> = costs
            .iter()
            .filter(|c| !c.ends_with('%'))
            .map(|c| c.parse().expect("a cost"))
            .collect();
        rows.push((line.parse().expect("a line number"), costs));
    }
    (totals, rows)
}

#[test]
fn every_cost_lands_on_a_line_and_the_lines_add_up() {
    for (file, kernel, hot_line) in [
        ("testdata/tree_sum.cu", "sum_counts", 22),
        ("testdata/students/main_matmul.cu", "matMul", 13),
        ("testdata/students/transpose_tile32.cu", "transposeTile", 0),
    ] {
        let o = copper_in(&root(), &["annotate", file, "--kernel", kernel]);
        assert_eq!(o.status.code(), Some(0), "{file}: {}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(out.contains("bound per warp"), "{out}");
        let (totals, rows) = parse(&out);
        assert_eq!(totals.len(), 5, "one line per built-in metric: {out}");
        for (m, total) in totals.iter().enumerate() {
            let sum: f64 = rows.iter().filter_map(|(_, c)| c.get(m)).sum();
            assert!(
                (sum - total).abs() < 1e-6,
                "{file} metric {m}: {sum} vs {total}\n{out}"
            );
        }
        if hot_line > 0 {
            let hottest = rows
                .iter()
                .filter(|(_, c)| !c.is_empty())
                .max_by(|a, b| a.1[0].total_cmp(&b.1[0]))
                .map(|(l, _)| *l);
            assert_eq!(hottest, Some(hot_line), "{file}\n{out}");
        }
    }
}

#[test]
fn a_kernel_that_cannot_be_annotated_says_why() {
    let o = copper_in(
        &root(),
        &["annotate", "testdata/tree_sum.cu", "--kernel", "nope"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no kernel named `nope`"), "{}", text(&o));
}

#[test]
fn a_rewrite_is_annotated_after_the_original_with_its_diff() {
    let o = copper_in(&root(), &["annotate", "testdata/addSub0.cu", "--rewrite"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let (before, after) = out.split_once("\nrewritten:\n").expect("a rewrite");
    assert!(after.contains("branch distribution"), "{after}");
    // The diff is the file's, with the file's line numbers.
    assert!(
        after.contains("+++ b/testdata/addSub0.cu\n@@ -11,"),
        "{after}"
    );
    let annotated = after
        .split_once("\naddSub0 (testdata/addSub0.cu:11)")
        .map(|(_, a)| a)
        .expect("the rewrite annotated");
    // The rewritten line carries its own costs.
    let line = annotated
        .lines()
        .find(|l| l.ends_with("B[j * w + i] = B_elem + A_elem;"))
        .expect("the rewritten line");
    assert!(line.trim_start().starts_with(char::is_numeric), "{line}");
    for part in [before, annotated] {
        let (totals, rows) = parse(part);
        assert_eq!(totals.len(), 5, "{part}");
        for (m, total) in totals.iter().enumerate() {
            let sum: f64 = rows.iter().filter_map(|(_, c)| c.get(m)).sum();
            assert!(
                (sum - total).abs() < 1e-6,
                "metric {m}: {sum} vs {total}\n{part}"
            );
        }
    }
    let o = copper_in(
        &root(),
        &["annotate", "testdata/students/vec_add.cu", "--rewrite"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("(no rewrite found that the bounds rank better)"),
        "{}",
        text(&o)
    );
}
