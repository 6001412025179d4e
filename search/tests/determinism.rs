//! Same input, same options, same output: the work limits that decide
//! results count deterministic units, so a run cut by one is the same on
//! any machine and load, and says what was cut.

mod common;

use common::{copper_in, root, scratch_file, text};

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

/// A kernel whose every thread loops 20,000 times, launched by its
/// parameter file in 64 blocks of 256 threads: some 10⁸ simulated
/// instructions per launch, more than the lint's whole allowance.
const SPINNING: &str = "__global__ void spin(float *a, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    float s = 0.0f;\n    for (int k = 0; k < 20000; k++) s += a[i] * k;\n    if (i < n) a[i] = s;\n}\n";
const SPINNING_PARAMS: &str = "[kernel.spin]\ngrid = [64]\nblock = [256]\n[kernel.spin.args]\nn = 16384\n[kernel.spin.arrays.a]\nlen = 16384\ninit = \"random\"\n";

/// The lint's simulations of one kernel (lock-step check and race search
/// here) share one deterministic allowance: past it the verdict says
/// which checks it stopped and that results may be incomplete, and two
/// runs print the same bytes.
#[test]
fn a_lint_past_its_simulation_allowance_says_which_checks_stopped() {
    let cu = scratch_file("det-lint", "spin.cu", SPINNING.as_bytes());
    scratch_file("det-lint", "spin.toml", SPINNING_PARAMS.as_bytes());
    let dir = cu.parent().unwrap();
    let first = copper_in(dir, &["lint", "spin.cu"]);
    let out = text(&first);
    assert!(
        out.contains("the lock-step check and the race search stopped at the lint's work limit of 5000000 units"),
        "{out}"
    );
    assert!(out.contains("results may be incomplete"), "{out}");
    let second = copper_in(dir, &["lint", "spin.cu"]);
    assert_eq!(first.stdout, second.stdout, "{out}");
    assert_eq!(first.stderr, second.stderr, "{out}");
    let json = text(&copper_in(dir, &["lint", "spin.cu", "--format", "json"]));
    assert!(
        json.contains("\"work_limit_stopped\": \"the lock-step check"),
        "{json}"
    );
}

/// `simulate` stops a launch at its whole-launch work limit
/// (`--max-launch-steps`), inside a block when one block alone passes
/// it, says so with the option to raise it, and prints the same twice.
#[test]
fn a_simulation_past_its_launch_limit_says_so() {
    let cu = scratch_file("det-sim", "spin.cu", SPINNING.as_bytes());
    scratch_file("det-sim", "spin.toml", SPINNING_PARAMS.as_bytes());
    let dir = cu.parent().unwrap();
    let args = ["simulate", "spin.cu", "--max-launch-steps", "5000"];
    let first = copper_in(dir, &args);
    let out = text(&first);
    assert_eq!(first.status.code(), Some(1), "{out}");
    assert!(
        out.contains("the simulation stopped after 5000 instructions (all warps together), its work limit (raise it with --max-launch-steps)"),
        "{out}"
    );
    assert!(out.contains("block (0, 0, 0)"), "{out}");
    let second = copper_in(dir, &args);
    assert_eq!(first.stderr, second.stderr, "{out}");
    // Some 5·10⁷ instructions: past the default limit too.
    let whole = text(&copper_in(dir, &["simulate", "spin.cu"]));
    assert!(
        whole.contains("stopped after 10000000 instructions"),
        "{whole}"
    );
}

/// The witness notes of a lint's text output, in order.
fn witness_notes(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.contains("witness"))
        .map(str::to_string)
        .collect()
}

/// A witness search whose MILPs stop at their node limit
/// (`--max-witness-nodes`) prints the same bytes twice and says it was
/// the work limit, not the clock.
#[test]
fn a_witness_search_cut_by_its_node_limit_prints_the_same_bytes_twice() {
    let args = [
        "lint",
        "testdata/shared_cell_tile.cu",
        "--witness",
        "--max-witness-nodes",
        "0",
    ];
    let first = copper_in(&root(), &args);
    let out = text(&first);
    assert!(
        out.contains(
            "within its work limit of 0 branch-and-bound nodes per warp (the same on every machine"
        ),
        "{out}"
    );
    assert!(!out.contains("wall-clock"), "{out}");
    let second = copper_in(&root(), &args);
    assert_eq!(first.status.code(), second.status.code());
    assert_eq!(first.stdout, second.stdout, "{out}");
    assert_eq!(first.stderr, second.stderr, "{out}");
}

/// The witness findings of `shared_cell_tile` do not depend on the wall
/// clock when the work limit is what binds: a short safety net and a
/// generous one give the same notes, the first site's maximum proved
/// within 2,000 nodes, the second cut there.
#[test]
fn shared_cell_tile_witnesses_do_not_depend_on_the_budget() {
    let run = |budget: &str| {
        let args = [
            "lint",
            "testdata/shared_cell_tile.cu",
            "--witness",
            "--max-witness-nodes",
            "2000",
            "--budget",
            budget,
        ];
        text(&copper_in(&root(), &args))
    };
    let (short, long) = (run("20"), run("600"));
    let notes = witness_notes(&long);
    assert_eq!(notes.len(), 2, "{long}");
    assert!(notes[0].contains("the MILP reaches 4 at most"), "{long}");
    assert!(
        notes[1].contains(
            "the MILP found at most 1 within its work limit of 2000 branch-and-bound nodes"
        ),
        "{long}"
    );
    assert_eq!(witness_notes(&short), notes, "{short}");
}
