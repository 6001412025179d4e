//! The transforms' promises on every `testdata/` kernel that has a
//! parameter file, along the path the search takes:
//!
//! - every candidate a transform offers passes its differential check (a
//!   failure is a bug in the transform: it should have skipped the site);
//! - every candidate's bounds are sound: never below the cost the simulator
//!   measures for the rewritten kernel, on every launch the check ran it on,
//!   and on other data for those launches (`COPPER_TRANSFORM_VARIANTS`,
//!   default 4), both for the launch shape the search analyzed and for any
//!   grid.

use std::path::{Path, PathBuf};

use copper::bound::{prepare, Config, MetricBound, Outcome};
use copper::cost::{Metric, BUILTIN_METRICS};
use copper::cuda::parse::parse_path;
use copper::ir::Kernel;
use copper::sim::params::{InitKind, LaunchSpec, ParamFile};
use copper::sim::{inputs_from_spec, simulate_owned, SimOptions};
use copper_search::launch::launch_shape;
use copper_search::pipeline::{optimize_kernel, Cache, Settings, Verdict};
use copper_search::rank::{Ranking, DEFAULT_EPSILON};
use copper_transforms::check::Checker;

fn testdata() -> Vec<(PathBuf, ParamFile)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    files.sort();
    files
        .into_iter()
        .filter_map(|cu| {
            let text = std::fs::read_to_string(cu.with_extension("toml")).ok()?;
            Some((cu, ParamFile::from_toml(&text).unwrap()))
        })
        .collect()
}

fn settings(metrics: &[Metric]) -> Settings {
    Settings {
        config: Config::default(),
        metrics: metrics.to_vec(),
        rank_metric: metrics.iter().position(|m| m.name == "wsteps").unwrap(),
        ranking: Ranking::Asymptotic {
            epsilon: DEFAULT_EPSILON,
        },
        transforms: copper_transforms::all(),
        compiler: None,
        allow_reassociation: false,
        max_check_steps: copper_transforms::check::SEARCH_CHECK_STEPS,
    }
}

/// Launch `spec` with other data: variant `i` reseeds every random array,
/// and every third variant makes each array's elements all equal (every
/// lane reads alike) or alternate between its extremes.
fn with_other_data(spec: &LaunchSpec, i: u64) -> LaunchSpec {
    let mut s = spec.clone();
    for (j, a) in s.arrays.values_mut().enumerate() {
        if a.init == InitKind::Zero {
            continue;
        }
        match i % 3 {
            0 => {
                a.init = InitKind::Random;
                a.seed = a.seed.wrapping_add(0x9E37_79B9 * (i + 1) + j as u64);
            }
            1 => {
                a.init = InitKind::Const;
                a.value = a.max.max(a.min).round();
            }
            _ => {
                a.init = InitKind::Values;
                a.values = (0..32)
                    .map(|l| {
                        if (l + i).is_multiple_of(2) {
                            a.min
                        } else {
                            a.max.max(a.min)
                        }
                    })
                    .collect();
            }
        }
    }
    s
}

/// Simulates `kernel` on `spec` and lists every metric whose simulated
/// worst warp exceeds its bound.
fn violations(
    kernel: &Kernel,
    spec: &LaunchSpec,
    bounds: &[MetricBound],
    what: &str,
) -> (usize, Vec<String>) {
    let Ok(inputs) = inputs_from_spec(kernel, spec) else {
        return (0, vec![]);
    };
    let at = inputs.bound_point();
    let Ok(result) = simulate_owned(kernel, inputs, &SimOptions::default()) else {
        return (
            0,
            vec![format!("{what}: the rewritten kernel fails to simulate")],
        );
    };
    let mut cases = 0;
    let mut bad = Vec::new();
    for (b, m) in bounds.iter().zip(&result.metrics) {
        assert_eq!(b.metric, m.metric);
        let Outcome::Bound(e) = &b.work else {
            continue;
        };
        cases += 1;
        let bound = e.eval(&at).expect("every input named");
        if copper::bound::check::exceeds(m.max_warp, bound) {
            bad.push(format!(
                "{what} {}: simulated {} > bound {bound} = {e} at {at:?}",
                b.metric, m.max_warp
            ));
        }
    }
    (cases, bad)
}

#[test]
fn candidates_pass_their_check_and_their_bounds_hold() {
    let metrics: Vec<Metric> = BUILTIN_METRICS
        .iter()
        .filter_map(|m| Metric::builtin(m))
        .collect();
    let variants: u64 = std::env::var("COPPER_TRANSFORM_VARIANTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    let settings = settings(&metrics);
    let cache = Cache::default();
    let (mut candidates, mut cases, mut improved) = (0, 0, 0);
    let mut failures = Vec::new();
    let mut unsound = Vec::new();
    let mut applied: Vec<(String, Vec<String>)> = Vec::new();
    for (cu, params) in testdata() {
        let parsed = parse_path(&cu).unwrap();
        for (name, spec) in &params.kernel {
            let shape = launch_shape(None, None, &parsed, Some(spec), name);
            let r = optimize_kernel(
                &parsed,
                &parsed,
                name,
                Some(spec),
                &shape,
                &settings,
                &cache,
            )
            .unwrap_or_else(|e| panic!("{}: {name}: {e}", cu.display()));
            improved += usize::from(r.improved());
            applied.push((
                name.clone(),
                r.applied
                    .iter()
                    .map(|a| format!("{}: {}", a.transform, a.description))
                    .collect(),
            ));
            let checker = Checker::new(&parsed, name, Some(spec), shape.block, None)
                .unwrap_or_else(|e| panic!("{}: {name}: {e}", cu.display()));
            for step in &r.steps {
                for c in &step.considered {
                    candidates += 1;
                    let what = format!(
                        "{} `{name}` [{}] {}",
                        cu.display(),
                        step.transform,
                        c.description
                    );
                    if let Verdict::Failed(why) = &c.verdict {
                        failures.push(format!("{what}: {why}"));
                    }
                    let Some(a) = &c.analyzed else {
                        continue;
                    };
                    let any_grid = Config {
                        block: shape.block,
                        ..Config::default()
                    };
                    let p = prepare(&a.kernel, any_grid);
                    let symbolic: Vec<MetricBound> = metrics.iter().map(|m| p.bound(m)).collect();
                    let launches = checker.launch_specs().flat_map(|s| {
                        std::iter::once(s.clone())
                            .chain((0..variants).map(|i| with_other_data(s, i)))
                    });
                    for s in launches {
                        let launched = s.shape().unwrap();
                        if shape.block.is_some_and(|b| b != launched.block()) {
                            continue;
                        }
                        if shape.grid.is_none_or(|g| g == launched.grid()) {
                            let (n, bad) = violations(&a.kernel, &s, &a.bounds, &what);
                            cases += n;
                            unsound.extend(bad);
                        }
                        let (n, bad) = violations(&a.kernel, &s, &symbolic, &what);
                        cases += n;
                        unsound.extend(bad);
                    }
                }
            }
        }
    }
    println!(
        "transforms: {candidates} candidates, {improved} kernels improved, {cases} (candidate, metric, launch) bound checks"
    );
    assert!(
        failures.is_empty(),
        "candidates that failed their check:\n{}",
        failures.join("\n")
    );
    assert!(
        unsound.is_empty(),
        "bounds below simulated costs:\n{}",
        unsound.join("\n")
    );
    assert!(improved >= 8, "only {improved} kernels improved");
    // The expected results on the papers' kernels (COpPER Table 1).
    let applied_to =
        |kernel: &str| -> &[String] { &applied.iter().find(|(k, _)| k == kernel).unwrap().1 };
    let expect = |kernel: &str, first: &str| {
        let a = applied_to(kernel);
        assert!(
            a.first().is_some_and(|x| x.starts_with(first)),
            "{kernel}: expected `{first}` first, got {a:?}"
        );
    };
    expect("addSub0", "branch distribution");
    // Hoisting `A[i]` out of the loop beats the paper's move to shared
    // memory; with the paper's two transforms, `A` moves.
    expect("addSub2", "load hoisting: loaded `A[i]`");
    let parsed =
        parse_path(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/addSub2.cu")).unwrap();
    let params = ParamFile::from_toml(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/addSub2.toml"),
        )
        .unwrap(),
    )
    .unwrap();
    let spec = &params.kernel["addSub2"];
    let paper = Settings {
        transforms: copper_transforms::all()
            .into_iter()
            .filter(|t| ["branch distribution", "global to shared"].contains(&t.name()))
            .collect(),
        ..settings
    };
    let shape = launch_shape(None, None, &parsed, Some(spec), "addSub2");
    let r = optimize_kernel(
        &parsed,
        &parsed,
        "addSub2",
        Some(spec),
        &shape,
        &paper,
        &cache,
    )
    .unwrap();
    assert_eq!(r.applied.len(), 1);
    assert!(
        r.applied[0]
            .description
            .starts_with("moved `A` into shared memory"),
        "{:?}",
        r.applied
    );
    expect(
        "syn_brdis",
        "branch distribution: moved the statement at line 13",
    );
    expect("dvmm", "global to shared (tiled): staged `vector`");
    expect("conv1d", "global to shared: moved `input`");
    // The convolution was block-size independent (BSI); its rewrite is
    // not, and says so.
    assert!(
        applied_to("conv1d")[0].contains("written for blocks of 256×1×1, the parameter file; the original's results did not depend on the block size"),
        "{:?}",
        applied_to("conv1d")
    );
    assert!(applied_to("dmvm").is_empty(), "{:?}", applied_to("dmvm"));
    assert!(cases >= 3000, "only {cases} bound checks ran");
}
