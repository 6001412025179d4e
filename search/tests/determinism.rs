//! Same input, same options, same output: the work limits that decide
//! results count deterministic units, so a run cut by one is the same on
//! any machine and load, and says what was cut.

mod common;

use common::{copper_in, root, text, Scratch};

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
    let scratch = Scratch::new();
    scratch.file("spin.cu", SPINNING.as_bytes());
    scratch.file("spin.toml", SPINNING_PARAMS.as_bytes());
    let dir = scratch.path();
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
    let scratch = Scratch::new();
    scratch.file("spin.cu", SPINNING.as_bytes());
    scratch.file("spin.toml", SPINNING_PARAMS.as_bytes());
    let dir = scratch.path();
    let args = ["simulate", "spin.cu", "--max-launch-steps", "5000"];
    let first = copper_in(dir, &args);
    let out = text(&first);
    assert_eq!(first.status.code(), Some(1), "{out}");
    assert!(
        out.contains("the simulation stopped after 5000 work units (instructions and memory accesses, all warps together), its work limit (raise it with --max-launch-steps)"),
        "{out}"
    );
    assert!(out.contains("block (0, 0, 0)"), "{out}");
    let second = copper_in(dir, &args);
    assert_eq!(first.stderr, second.stderr, "{out}");
    // Some 5·10⁷ instructions and as many work units again for the
    // loads: past the default limit too.
    let whole = text(&copper_in(dir, &["simulate", "spin.cu"]));
    assert!(
        whole.contains("stopped after 10000000 work units"),
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

/// An optimize search whose candidates' checks pass `--max-check-steps`
/// stops at the end of that round (the sum is taken between rounds, so it
/// does not depend on the order the round's candidates were checked in),
/// says so with the units used and the limit, and prints the same bytes
/// twice; at the default limit nothing is cut.
#[test]
fn a_search_past_its_check_limit_stops_between_rounds_and_says_so() {
    let args = [
        "optimize",
        "testdata/addSub0.cu",
        "--explain",
        "--max-check-steps",
        "1",
    ];
    let first = copper_in(&root(), &args);
    let out = text(&first);
    assert!(
        out.contains("the search stopped at its work limit: its candidates' checks used"),
        "{out}"
    );
    assert!(
        out.contains("the limit being 1 (raise it with --max-check-steps)"),
        "{out}"
    );
    // Round 1 ran whole: its best rewrite is kept.
    assert!(out.contains("kernel addSub0: improved"), "{out}");
    let second = copper_in(&root(), &args);
    let without_times = |o: &std::process::Output| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| !l.contains(" ms") && !l.contains(" s\n") && !l.contains("improved, "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(without_times(&first), without_times(&second), "{out}");
    let json = text(&copper_in(
        &root(),
        &[
            "optimize",
            "testdata/addSub0.cu",
            "--format",
            "json",
            "--max-check-steps",
            "1",
        ],
    ));
    assert!(
        json.contains("\"search_stopped\": \"the search stopped at its work limit"),
        "{json}"
    );
    let default = text(&copper_in(&root(), &["optimize", "testdata/addSub0.cu"]));
    assert!(!default.contains("work limit"), "{default}");
}

/// A loop stepped by `1u << 63` (a shift past its type's width, undefined
/// in C; found by the fuzzer in a mutant of `addSub3.cu`): the simulator
/// stops at the shift with its error where it once read it as 0 and ran
/// the loop until a work limit (lint 10 s, simulate 7 s), so the lint's
/// simulations no longer reach their limit, and print the same twice.
#[test]
fn a_shift_past_its_width_stops_the_simulation_instead_of_looping() {
    const SHIFTED: &str = "__global__ void addSub3(int *A, int *B, int w, int h) {\n    __shared__ int As[256];\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    As[threadIdx.x] = A[i];\n    for (int j = 0; j < h; j += 1u << 63) {\n        B[j * w + i] += As[threadIdx.x];\n        B[(j + 1) * w + i] -= As[threadIdx.x];\n    }\n}\n";
    const PARAMS: &str = "[kernel.addSub3]\ngrid = [4]\nblock = [256]\n[kernel.addSub3.args]\nw = 1024\nh = 64\n[kernel.addSub3.arrays.A]\nlen = 1024\ninit = \"random\"\n[kernel.addSub3.arrays.B]\nlen = 65536\ninit = \"random\"\n";
    let scratch = Scratch::new();
    scratch.file("shift.cu", SHIFTED.as_bytes());
    scratch.file("shift.toml", PARAMS.as_bytes());
    let dir = scratch.path();
    let sim = copper_in(dir, &["simulate", "shift.cu"]);
    let out = text(&sim);
    assert_eq!(sim.status.code(), Some(1), "{out}");
    assert!(
        out.contains("shift.cu:5:28: error[sim]: shift by a count that is negative or not below the width of its type"),
        "{out}"
    );
    let first = copper_in(dir, &["lint", "shift.cu"]);
    let lint = text(&first);
    assert!(lint.contains("kernel `addSub3`"), "{lint}");
    assert!(!lint.contains("work limit"), "{lint}");
    let second = copper_in(dir, &["lint", "shift.cu"]);
    assert_eq!(first.stdout, second.stdout, "{lint}");
    assert_eq!(first.stderr, second.stderr, "{lint}");
}

/// `analyze --check` simulates its launch under the whole-launch work
/// limit `simulate` has by default (10⁷ instructions, all warps
/// together): a loop that never ends (`k += 0`) in 64 blocks of 256
/// threads stops there, where a limit per warp alone let every warp run
/// 10⁷ instructions (10 s); the output, timing aside, is the same twice.
#[test]
fn an_analysis_check_of_an_endless_loop_stops_at_the_launch_limit() {
    const ENDLESS: &str = "__global__ void endless(float *a, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    for (int k = 0; k < n; k += 0) {\n        a[i] = a[i] + 1.0f;\n    }\n}\n";
    const PARAMS: &str = "[kernel.endless]\ngrid = [64]\nblock = [256]\n[kernel.endless.args]\nn = 10\n[kernel.endless.arrays.a]\nlen = 16384\n";
    let scratch = Scratch::new();
    scratch.file("endless.cu", ENDLESS.as_bytes());
    scratch.file("endless.toml", PARAMS.as_bytes());
    let dir = scratch.path();
    let first = copper_in(dir, &["analyze", "endless.cu", "--check"]);
    let out = text(&first);
    assert!(
        out.contains("the simulation stopped after 10000000 work units (instructions and memory accesses, all warps together)"),
        "{out}"
    );
    let second = text(&copper_in(dir, &["analyze", "endless.cu", "--check"]));
    let untimed = |s: &str| {
        s.lines()
            .filter(|l| !l.trim_start().starts_with("analyzed in "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(untimed(&out), untimed(&second), "{out}");
}
