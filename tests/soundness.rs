//! The promise: for every `testdata/` kernel and every built-in metric, the
//! bound is never below the cost the simulator measures, over many random
//! parameter values and inputs (and constructed worst cases).
//!
//! `COPPER_SOUNDNESS_VARIANTS=200 cargo test --release --test soundness`
//! runs the long version (≥ 10,000 cases); the default is a smaller sample.

use std::collections::BTreeMap;
use std::path::Path;

use copper::bound::{prepare, Config, Outcome};
use copper::cost::{Metric, BUILTIN_METRICS};
use copper::cuda::parse::parse_path;
use copper::ir::lower::lower_kernel;
use copper::sim::params::{InitKind, LaunchSpec, ParamFile, SplitMix};
use copper::sim::{inputs_from_spec, simulate_owned, SimOptions};

/// A variant of a launch: different seeds, smaller sizes, constant data.
fn variant(spec: &LaunchSpec, i: u64) -> LaunchSpec {
    let mut s = spec.clone();
    let mut g = SplitMix::new(0xC0FFEE ^ i.wrapping_mul(0x9E37_79B9));
    for a in s.arrays.values_mut() {
        match i % 4 {
            // Same shapes, other random data.
            0 | 1 => {
                a.seed = g.next_u64();
                if a.init == InitKind::Const || a.init == InitKind::Zero {
                    continue;
                }
                a.init = InitKind::Random;
            }
            // Constant data: every lane reads and writes the same values
            // (worst case for data-dependent bank conflicts).
            2 => {
                a.init = InitKind::Const;
                a.value = a.min.max(0.0).min(a.max.max(0.0));
            }
            _ => {
                a.seed = g.next_u64();
            }
        }
    }
    if i % 4 == 3 {
        // Smaller integer arguments keep accesses in bounds.
        for v in s.args.values_mut() {
            if v.fract() == 0.0 && *v > 1.0 {
                *v = (1 + g.next_u64() % (*v as u64)) as f64;
            }
        }
    }
    s
}

#[test]
fn bounds_are_never_below_simulated_costs() {
    let variants: u64 = std::env::var("COPPER_SOUNDNESS_VARIANTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    let metrics: Vec<Metric> = BUILTIN_METRICS
        .iter()
        .filter_map(|m| Metric::builtin(m))
        .collect();
    let (mut cases, mut bounded, mut skipped) = (0u64, 0u64, 0u64);
    let mut violations = Vec::new();
    let mut unbounded = Vec::new();
    for cu in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
    {
        let Ok(text) = std::fs::read_to_string(cu.with_extension("toml")) else {
            continue;
        };
        let params = ParamFile::from_toml(&text).unwrap();
        let parsed = parse_path(cu).unwrap();
        for (name, spec) in &params.kernel {
            let kernel = lower_kernel(&parsed, name).unwrap();
            let shape = spec.shape().unwrap();
            let prep = prepare(
                &kernel,
                Config {
                    block: Some(shape.block),
                    ..Config::default()
                },
            );
            let bounds: Vec<_> = metrics.iter().map(|m| prep.bound(m)).collect();
            for i in 0..variants {
                let v = variant(spec, i);
                let Ok(inputs) = inputs_from_spec(&kernel, &v) else {
                    skipped += 1;
                    continue;
                };
                let mut at: BTreeMap<String, f64> = inputs
                    .scalars
                    .iter()
                    .map(|(k, x)| (k.clone(), x.as_f64()))
                    .collect();
                for (d, n) in ["x", "y", "z"].iter().enumerate() {
                    at.insert(format!("gridDim.{n}"), shape.grid[d] as f64);
                    at.insert(format!("blockDim.{n}"), shape.block[d] as f64);
                }
                let Ok(result) = simulate_owned(&kernel, inputs, &SimOptions::default()) else {
                    skipped += 1;
                    continue;
                };
                for (b, m) in bounds.iter().zip(&result.metrics) {
                    cases += 1;
                    match &b.work {
                        Outcome::Bound(e) => {
                            bounded += 1;
                            let bound = e.eval(&at).expect("every input named");
                            if m.max_warp > bound + 1e-6 {
                                violations.push(format!(
                                    "{} `{name}` {} variant {i}: simulated {} > bound {bound} ({})",
                                    cu.display(),
                                    b.metric,
                                    m.max_warp,
                                    e.to_poly()
                                ));
                            }
                        }
                        Outcome::NoBound(reason, _) => {
                            if i == 0 {
                                unbounded.push(format!(
                                    "{} `{name}` {}: {reason}",
                                    cu.file_name().unwrap().to_string_lossy(),
                                    b.metric
                                ));
                            }
                        }
                    }
                }
            }
        }
    }
    println!("soundness: {cases} (kernel, metric, input) cases, {bounded} with a bound, {skipped} input variants skipped (simulator errors), {} violations", violations.len());
    for u in &unbounded {
        println!("  no bound: {u}");
    }
    assert!(
        violations.is_empty(),
        "{} violations:\n{}",
        violations.len(),
        violations.join("\n")
    );
    assert!(cases >= 500, "only {cases} cases ran");
}
