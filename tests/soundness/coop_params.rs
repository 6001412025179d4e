//! Cooperative groups passed to device functions as `cg::thread_group`
//! (`testdata/coop_groups_param.cu`: the block; `coop_groups_tile.cu`:
//! warp tiles through two levels of group parameters): each kernel's
//! bounds, for its launch's block and for any block, against the
//! simulator on blocks of 32, 64, 96 and 256 threads, few and many
//! blocks, and small and large `n`.

use std::path::Path;

use copper::bound::{check::exceeds, prepare, Config, InputAssumption, Outcome};
use copper::cost::{Metric, BUILTIN_METRICS};
use copper::cuda::parse::parse_path;
use copper::ir::lower::lower_kernel;
use copper::sim::params::ParamFile;
use copper::sim::{inputs_from_spec, simulate_owned, SimOptions};

/// The launch of `kernel` with `block` threads, `grid` blocks and `n`
/// elements; its output array `out` is large enough for every block.
fn launch(kernel: &str, out: &str, input: &str, block: u64, grid: u64, n: u64) -> String {
    format!(
        "[kernel.{kernel}]\ngrid = [{grid}]\nblock = [{block}]\nshared_bytes = {}\nargs = {{ n = {n} }}\n\
         [kernel.{kernel}.arrays.{input}]\nlen = \"n\"\ninit = \"random\"\nmin = -100\nmax = 100\n\
         [kernel.{kernel}.arrays.{out}]\nlen = {}\n",
        4 * block,
        grid * block.div_ceil(32)
    )
}

#[test]
fn group_parameters_are_bounded_soundly_on_every_block() {
    let metrics: Vec<Metric> = BUILTIN_METRICS
        .iter()
        .filter_map(|m| Metric::builtin(m))
        .collect();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut checked = 0;
    let mut violations = Vec::new();
    for (file, kernel, out, input) in [
        ("coop_groups_param.cu", "sum_kernel_block", "sum", "input"),
        ("coop_groups_tile.cu", "sum_kernel_tiles", "sums", "in"),
    ] {
        let parsed = parse_path(&dir.join(file)).expect("fixture");
        let k = lower_kernel(&parsed, kernel).expect("the kernel lowers");
        for block in [32u64, 64, 96, 256] {
            let fixed = prepare(
                &k,
                Config {
                    block: Some(copper::launch::block([block, 1, 1]).expect("a launch CUDA runs")),
                    ..Config::default()
                },
            );
            let any = prepare(&k, Config::default());
            for (grid, n) in [(1u64, 10u64), (3, 700), (12, 20000)] {
                let toml = launch(kernel, out, input, block, grid, n);
                let file_spec = ParamFile::from_toml(&toml).expect("a valid launch");
                let spec = &file_spec.kernel[kernel];
                let inputs = inputs_from_spec(&k, spec).expect("inputs");
                let at = inputs.bound_point();
                let sim = simulate_owned(&k, inputs, &SimOptions::default()).expect("it runs");
                for (which, p) in [("fixed block", &fixed), ("any block", &any)] {
                    for (m, measured) in metrics.iter().zip(&sim.metrics) {
                        let b = p.bound(m);
                        let Outcome::Bound(e) = &b.work else {
                            violations.push(format!("{kernel} {which} {}: no bound", b.metric));
                            continue;
                        };
                        assert!(InputAssumption::all_hold(&b.assumes, &at));
                        let bound = e.eval(&at).expect("every input named");
                        checked += 1;
                        if exceeds(measured.max_warp, bound) {
                            violations.push(format!(
                                "{kernel} {which} {} block {block} grid {grid} n {n}: simulated {} > bound {bound}",
                                b.metric, measured.max_warp
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
    assert_eq!(checked, 2 * 4 * 3 * 2 * metrics.len());
}
