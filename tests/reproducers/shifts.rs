//! Signed counters that grow by shifts or products up to an input: past
//! the type's range the counter overflows (undefined behaviour; in
//! practice it wraps negative and the loop never ends), so a bound holds
//! only under an assumption on the input that says so.

use std::collections::BTreeMap;

use copper::bound::{prepare, Config, InputAssumption, Outcome};
use copper::cost::Metric;
use copper::cuda::parse::parse_source;
use copper::ir::lower::lower_kernel;
use copper::source::SourceFile;

use super::{assert_sound, Case};

/// Whether the `steps` bound of `head`'s loop claims anything at `n`: a
/// bound whose assumptions `n` satisfies.
fn claims_at(ty: &str, head: &str, n: i64) -> bool {
    let src = format!(
        "__global__ void k(float *a, {ty} n) {{ float acc = 0.0f;\n  {head} acc += a[threadIdx.x];\n  a[threadIdx.x] = acc; }}"
    );
    let kernel = lower_kernel(&parse_source(SourceFile::new("t.cu", &src)), "k").unwrap();
    let p = prepare(
        &kernel,
        Config {
            block: copper::launch::block([32, 1, 1]).ok(),
            grid: copper::launch::grid([1, 1, 1]).ok(),
            ..Config::default()
        },
    );
    let b = p.bound(&Metric::builtin("steps").unwrap());
    let at = BTreeMap::from([("n".to_string(), n as f64)]);
    matches!(b.work, Outcome::Bound(_)) && InputAssumption::all_hold(&b.assumes, &at)
}

#[test]
fn signed_shift_and_product_counters_past_the_range_have_no_bound_there() {
    // Before: 6 + 20·(log2(n) + 1) with no assumption at n = 2^30 + 1,
    // where `s` reaches 2^30 < n and `s <<= 1` overflows.
    let int_heads = [
        "for (int s = 1; s < n; s <<= 1)",
        "for (int s = 1; s <= n; s <<= 1)",
        "for (int s = 1; s < n; s *= 2)",
        "for (int s = 3; s <= n; s *= 4)",
    ];
    for head in int_heads {
        assert!(!claims_at("int", head, (1 << 30) + 1), "{head}");
        assert!(!claims_at("int", head, i32::MAX as i64), "{head}");
        assert!(claims_at("int", head, 1000), "{head}: no bound for small n");
    }
    let long_head = "for (long long s = 1; s < n; s <<= 1)";
    // Bound points are `f64`: 2^62 + 1 reads as 2^62, which is in range.
    assert!(!claims_at("long long", long_head, (1 << 62) + (1 << 12)));
    assert!(claims_at("long long", long_head, 1 << 40));
}

#[test]
fn signed_shift_counters_in_range_are_bounded_soundly() {
    let src = "__global__ void k(float *a, int n) { float acc = 0.0f;\n\
               for (int s = 1; s < n; s <<= 1) acc += a[threadIdx.x];\n\
               a[threadIdx.x] = acc; }";
    for n in [1, 2, 1000, 1 << 30] {
        let found = Case {
            src,
            grid: [1, 1, 1],
            block: [32, 1, 1],
            args: &[("n", n)],
            arrays: &[("a", 32)],
        }
        .run(false);
        assert_sound(&found, true);
    }
}
