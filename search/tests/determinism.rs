//! Same input, same options, same output: the work limits that decide
//! results count deterministic units, so a run cut by one is the same on
//! any machine and load, and says what was cut.

mod common;

use common::{copper_in, root, text};

/// A lint cut by a tiny abstract-interpretation limit prints the same
/// bytes twice.
#[test]
fn a_lint_cut_by_its_work_limit_prints_the_same_bytes_twice() {
    let args = ["lint", "testdata/addSub0.cu", "--max-absint-steps", "3"];
    let first = copper_in(&root(), &args);
    let second = copper_in(&root(), &args);
    assert_eq!(first.status.code(), second.status.code());
    assert_eq!(first.stdout, second.stdout, "{}", text(&first));
    assert_eq!(first.stderr, second.stderr, "{}", text(&first));
}

/// An analysis cut by the limit says so, with the limit, in every run.
#[test]
fn an_analysis_cut_by_its_work_limit_says_so() {
    let args = ["analyze", "testdata/addSub0.cu", "--max-absint-steps", "3"];
    for _ in 0..2 {
        let out = text(&copper_in(&root(), &args));
        assert!(
            out.contains("stopped after 3 abstract-interpretation steps"),
            "{out}"
        );
    }
}
