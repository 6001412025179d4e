use super::*;
use copper::bound::prepare;
use copper::cuda::parse::parse_source;
use copper::ir::lower::lower_kernel;
use copper::poly::Rational;

/// The self-check compares every bound with every run of the checker:
/// the true bounds pass, and a bound made too small on purpose is
/// reported with the kernel, metric, bound and simulated value.
#[test]
fn a_bound_below_a_simulated_cost_is_an_internal_error() {
    let src = "__global__ void k(float *a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  for (int j = 0; j < n; j++) if (i < n) a[i] += 1.0f;\n}\n";
    let file = parse_source(copper::source::SourceFile::new("k.cu", src));
    let kernel = lower_kernel(&file, "k").unwrap();
    let config = Config {
        block: copper::launch::block([64, 1, 1]).ok(),
        ..Config::default()
    };
    let metrics: Vec<Metric> = ["steps", "sectors"]
        .iter()
        .filter_map(|m| Metric::builtin(m))
        .collect();
    let checker = Checker::measuring(
        &file,
        "k",
        None,
        config.block,
        None,
        config.hw,
        metrics.clone(),
    )
    .unwrap();
    let prepared = prepare(&kernel, config);
    let bounds = metrics.iter().map(|m| prepared.bound(m)).collect();
    let mut version = Analyzed {
        function: file.function("k").unwrap().clone(),
        file,
        kernel,
        prepared,
        bounds,
        seconds: 0.0,
        lineage: Lineage::default(),
    };
    assert!(checker.runs().len() >= 3);
    assert_eq!(
        self_check(&version, checker.runs(), &config),
        Vec::<String>::new()
    );
    let Outcome::Bound(e) = &version.bounds[1].work else {
        panic!("no sectors bound");
    };
    version.bounds[1].work = Outcome::Bound(e.scaled(Rational::new(1, 2)).unwrap());
    let found = self_check(&version, checker.runs(), &config);
    assert!(!found.is_empty());
    assert!(
        found[0].starts_with("internal error: the per-warp sectors bound of `k` is "),
        "{found:?}"
    );
    assert!(found[0].contains("but the simulator measured"), "{found:?}");
    // A launch of another block than the analyzed one is not compared.
    let other = Config {
        block: copper::launch::block([128, 1, 1]).ok(),
        ..config
    };
    assert!(self_check(&version, checker.runs(), &other).is_empty());
}
