//! Tests of the bound engine.

use super::*;
use crate::cuda::parse::parse_source;
use crate::ir::lower::lower_kernel;
use crate::source::SourceFile;

fn bound(src: &str, block: Option<Dims>, metric: &str) -> Outcome {
    let f = parse_source(SourceFile::new("t.cu", src));
    let k = lower_kernel(&f, "k").unwrap();
    prepare(
        &k,
        Config {
            block,
            ..Config::default()
        },
    )
    .bound(&Metric::builtin(metric).unwrap())
    .work
}

fn text(o: &Outcome) -> String {
    match o {
        Outcome::Bound(e) => e.to_string(),
        Outcome::NoBound(why, _) => format!("no bound: {why}"),
    }
}

#[test]
fn a_counted_loop_costs_its_body_per_iteration() {
    // One global store per iteration of a coalesced, aligned index.
    let src = "__global__ void k(int *a, int n) { for (int i = 0; i < n; i++) { a[i * 32 + threadIdx.x] = 0; } }";
    assert_eq!(
        text(&bound(
            src,
            crate::launch::block([32, 1, 1]).ok(),
            "sectors"
        )),
        "4·max(0, n)"
    );
    assert_eq!(
        text(&bound(
            src,
            crate::launch::block([32, 1, 1]).ok(),
            "divwarps"
        )),
        "0"
    );
}

#[test]
fn lane_loops_are_bounded_by_their_worst_lane() {
    // Lane 0 runs ⌈cols/32⌉ iterations, each storing 32 aligned floats
    // (4 sectors): the warp's lane index is `threadIdx.x` plus a
    // multiple of 32.
    let one = "__global__ void k(float *x, int cols) { int lane = threadIdx.x % 32;\n\
               for (int c = lane; c < cols; c += 32) { x[c] = 0.0f; } }";
    assert_eq!(
        text(&bound(
            one,
            crate::launch::block([128, 1, 1]).ok(),
            "sectors"
        )),
        "0.125·(cols + 31)"
    );
    // Groups of 8 lanes: the worst lane starts at 0.
    let eight = "__global__ void k(float *x, int cols) { int g = threadIdx.x & 7;\n\
                 for (int c = g; c < cols; c += 8) { x[c] = 0.0f; } }";
    assert!(text(&bound(
        eight,
        crate::launch::block([96, 1, 1]).ok(),
        "steps"
    ))
    .contains("(cols + 7)"));
    // A step that may wrap an `unsigned short` counter gives no floor
    // unless `cols` is at most half the counter's range: the bound is
    // found under that assumption, and says so.
    let short = "__global__ void k(float *x, int cols) { unsigned short l = threadIdx.x % 32;\n\
                 for (unsigned short c = l; c < cols; c += 32) { x[c] = 0.0f; } }";
    let f = parse_source(SourceFile::new("t.cu", short));
    let k = lower_kernel(&f, "k").unwrap();
    let config = Config {
        block: crate::launch::block([64, 1, 1]).ok(),
        ..Config::default()
    };
    let p = prepare(&k, config);
    let assumed: Vec<String> = p.assumptions.iter().map(|a| a.to_string()).collect();
    assert_eq!(assumed, ["cols ≤ 2^15 − 1"]);
    let steps = p.bound(&Metric::builtin("steps").unwrap());
    assert!(matches!(steps.work, Outcome::Bound(_)), "{:?}", steps.work);
    assert_eq!(steps.assumes, p.assumptions);
}

#[test]
fn loops_fixed_by_the_block_are_counted() {
    let src = "__global__ void k(int *a) { __shared__ int s[256]; s[threadIdx.x] = a[threadIdx.x]; __syncthreads();\n\
               for (unsigned int d = blockDim.x / 2; d > 0; d >>= 1) { if (threadIdx.x < d) { s[threadIdx.x] += s[threadIdx.x + d]; } __syncthreads(); }\n\
               a[threadIdx.x] = s[threadIdx.x]; }";
    // 8 halvings for 256 threads, each a divergent test.
    assert_eq!(
        text(&bound(
            src,
            crate::launch::block([256, 1, 1]).ok(),
            "divwarps"
        )),
        "8"
    );
    // With any block, halving still ends: linear in blockDim.x.
    assert!(text(&bound(src, None, "divwarps")).contains("blockDim.x"));
}

#[test]
fn divergent_breaks_keep_counters_uniform_inside() {
    let src = "__global__ void k(int *a, int n) { int f = -1;\n\
               for (int j = 0; j < n; j++) { if (a[j * 32 + threadIdx.x] == 0) { f = j; break; } }\n\
               a[threadIdx.x] = f; }";
    let o = bound(src, crate::launch::block([32, 1, 1]).ok(), "divwarps");
    assert_eq!(text(&o), "max(0, n)");
}

#[test]
fn data_dependent_loops_have_no_bound_and_say_where() {
    let src = "__global__ void k(int *a) { int i = 0; while (a[i] > 0) { i = a[i]; } a[0] = i; }";
    match bound(src, crate::launch::block([32, 1, 1]).ok(), "steps") {
        Outcome::NoBound(why, Some(span)) => {
            assert_eq!(why, NoBound::NoCounter);
            assert!(why.to_string().contains("data-dependent"), "{why}");
            assert!(span.start > 0);
        }
        other => panic!("expected no bound, got {other:?}"),
    }
}

#[test]
fn a_constant_bound_below_the_certain_cost_is_refused() {
    let b = BoundExpr::new(Rational::int(3), Vec::new()).unwrap();
    assert!(matches!(
        below_certain(Outcome::Bound(b.clone()), 4.0),
        Outcome::NoBound(NoBound::BelowCertainCost { .. }, _)
    ));
    assert_eq!(
        below_certain(Outcome::Bound(b.clone()), 3.0),
        Outcome::Bound(b)
    );
    // Every straight-line kernel's bound is at least its certain cost.
    let src = "__global__ void k(int *a, int n) { a[threadIdx.x] = n; if (n > 0) { a[0] = 1; } }";
    for metric in ["steps", "sectors", "wsteps"] {
        assert!(matches!(
            bound(src, crate::launch::block([32, 1, 1]).ok(), metric),
            Outcome::Bound(_)
        ));
    }
}

#[test]
fn the_lp_budget_is_respected() {
    let src = "__global__ void k(int *a, int n) { for (int i = 0; i < n; i++) { a[i] = 0; } }";
    let f = parse_source(SourceFile::new("t.cu", src));
    let k = lower_kernel(&f, "k").unwrap();
    let p = prepare(
        &k,
        Config {
            max_lp: 3,
            ..Config::default()
        },
    );
    let b = p.bound(&Metric::builtin("steps").unwrap());
    assert!(matches!(
        &b.work,
        Outcome::NoBound(why @ NoBound::LpTooLarge { .. }, _) if why.to_string().contains("--max-lp")
    ));
}

/// A tiny work limit cuts the abstract interpretation the same way on
/// every run, and says so; the wall-clock safety net, when it fires,
/// says that instead.
#[test]
fn the_abstract_interpretation_stops_at_its_work_limit() {
    let src = "__global__ void k(int *a, int n) { for (int i = 0; i < n; i++) { for (int j = 0; j < i; j++) { a[j] += i; } } }";
    let f = parse_source(SourceFile::new("t.cu", src));
    let k = lower_kernel(&f, "k").unwrap();
    let steps = Metric::builtin("steps").unwrap();
    let cut = |max_steps: usize, budget: Duration| {
        let config = Config {
            max_steps,
            budget,
            ..Config::default()
        };
        prepare(&k, config).bound(&steps).work
    };
    let tiny = cut(5, Duration::from_secs(3600));
    assert_eq!(tiny, cut(5, Duration::from_secs(3600)));
    assert_eq!(
        text(&tiny),
        "no bound: the analysis stopped after 5 abstract-interpretation steps, its work limit"
    );
    // The default limit leaves this kernel alone.
    assert!(matches!(
        cut(DEFAULT_MAX_STEPS, Duration::from_secs(3600)),
        Outcome::Bound(_)
    ));
    // No time at all: the safety net, reported as machine-dependent.
    let late = text(&cut(DEFAULT_MAX_STEPS, Duration::ZERO));
    assert!(
        late.contains("wall-clock limit") && late.contains("faster machine"),
        "{late}"
    );
}

#[test]
fn index_ranges_per_block() {
    let f = parse_source(SourceFile::new(
        "t.cu",
        "__global__ void k(int *A, int *B, int w, int h) {\n\
         int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
         for (int j = 0; j < h; j += 2) { B[j * w + i] += A[i]; } }",
    ));
    let k = lower_kernel(&f, "k").unwrap();
    let p = prepare(
        &k,
        Config {
            block: crate::launch::block([256, 1, 1]).ok(),
            ..Config::default()
        },
    );
    let a = k
        .sites
        .iter()
        .position(|s| k.arrays[s.array].name == "A")
        .unwrap();
    let b = p.index_bounds(a).unwrap();
    let text = |v: &[Poly]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(text(&b.lower), vec!["256·blockIdx.x"]);
    assert_eq!(text(&b.upper), vec!["256·blockIdx.x + 255"]);
    // B[j·w + i]: not linear (w is a parameter).
    let bsite = k
        .sites
        .iter()
        .position(|s| k.arrays[s.array].name == "B")
        .unwrap();
    assert!(p.index_bounds(bsite).is_none());
}

#[test]
fn grid_stride_loops_of_an_unknown_block_divide_by_the_stride() {
    let f = |src: &str| {
        let f = parse_source(SourceFile::new("t.cu", src));
        let k = lower_kernel(&f, "k").unwrap();
        let p = prepare(&k, Config::default());
        let assumed: Vec<String> = p.assumptions.iter().map(|a| a.to_string()).collect();
        (
            text(&p.bound(&Metric::builtin("steps").unwrap()).work),
            assumed,
        )
    };
    // An `int` counter: `i + stride` stays in range for `n ≤ 2^30` and
    // strides below 2^30 (`gridDim.x ≤ 2^20`).
    let grid = "__global__ void k(float *y, int n) {\n\
                for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] += 1.0f; }";
    let (bound, assumed) = f(grid);
    assert!(bound.contains("⌈n/(blockDim.x·gridDim.x)⌉"), "{bound}");
    assert!(!bound.contains("max(0, n)"), "{bound}");
    assert_eq!(assumed, ["n ≤ 2^30", "gridDim.x ≤ 2^20"]);
    // The stride in a local, the start in another: an `int` stride is
    // below 2^31 only for grids up to 2^20, and a 64-bit counter passes
    // its range only for `n` within the stride of it.
    let local = "__global__ void k(float *y, long long n) {\n\
                 long long idx = blockIdx.x * blockDim.x + threadIdx.x; int stride = blockDim.x * gridDim.x;\n\
                 for (long long i = idx; i < n; i += stride) y[i] += 1.0f; }";
    let (bound, assumed) = f(local);
    assert!(bound.contains("⌈n/(blockDim.x·gridDim.x)⌉"), "{bound}");
    assert_eq!(assumed, ["n ≤ 2^63 − 2^30", "gridDim.x ≤ 2^20"]);
    // A block-stride loop from `threadIdx.x`: no grid assumption.
    let block = "__global__ void k(float *y, int n) {\n\
                 for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] += 1.0f; }";
    let (bound, assumed) = f(block);
    assert!(bound.contains("⌈n/blockDim.x⌉"), "{bound}");
    assert_eq!(assumed, ["n ≤ 2^31 − 2^10"]);
    // An `int n` compared with a `size_t` counter is converted: a
    // negative one is huge, so `0 ≤ n` is assumed (as for the counter's
    // wrapping).
    let converted = "__global__ void k(float *y, int n) {\n\
                     for (size_t i = threadIdx.x; i < n; i += blockDim.x) y[i] += 1.0f; }";
    let (bound, assumed) = f(converted);
    assert!(bound.contains("⌈n/blockDim.x⌉"), "{bound}");
    assert_eq!(assumed, ["0 ≤ n"]);
    // A start that may be negative, or a counter also written in the
    // body, gets no quotient.
    for src in [
        "__global__ void k(float *y, int n, int s) {\n\
         for (int i = threadIdx.x - s; i < n; i += blockDim.x) y[i & 1023] += 1.0f; }",
        "__global__ void k(float *y, int n) {\n\
         for (int i = threadIdx.x; i < n; i += blockDim.x) { y[i] += 1.0f; if (y[i] > 2.0f) i++; } }",
    ] {
        assert!(!f(src).0.contains('⌈'), "{src}");
    }
    // A known block divides by its constant as before.
    let known = bound_of(grid, crate::launch::block([256, 1, 1]).ok(), "steps");
    assert!(
        !known.contains('⌈') && known.contains("(n + 255)"),
        "{known}"
    );
}

fn bound_of(src: &str, block: Option<Dims>, metric: &str) -> String {
    text(&bound(src, block, metric))
}

#[test]
fn geometric_counters_wider_than_their_bound_are_logarithmic() {
    // `int n` compared with (or assigned to) a `long long` counter keeps
    // its value: the loops run `1 + log2(n)` times at most.
    for src in [
        "__global__ void k(float *a, int n) { for (long long c = 1; c < n; c *= 2) a[threadIdx.x] += 1.0f; }",
        "__global__ void k(float *a, int n) { for (long long c = n; c > 0; c /= 3) a[threadIdx.x] += 1.0f; }",
    ] {
        let b = bound_of(src, crate::launch::block([32, 1, 1]).ok(), "steps");
        assert!(b.contains("log2(n)") && !b.contains("max(0, n)"), "{src}: {b}");
    }
    // An `int n` converted to `unsigned` may be huge: no logarithm.
    let unsigned = "__global__ void k(float *a, int n) { for (unsigned c = 1; c < n; c <<= 1) a[threadIdx.x] += 1.0f; }";
    assert!(!bound_of(unsigned, crate::launch::block([32, 1, 1]).ok(), "steps").contains("log2"));
}

#[test]
fn loop_bounds_through_locals_holding_a_parameter_are_bounded() {
    let strided = "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < BOUND; \
                   i += blockDim.x * gridDim.x) { y[i] = x[4 * i] + x[4 * i + 1]; }";
    let kernel = |prelude: &str, bound: &str| {
        format!(
            "__global__ void k(const float *x, float *y, int n) {{ {prelude} {} }}",
            strided.replace("BOUND", bound)
        )
    };
    let cases = [
        kernel("int m = n;", "m / 4"),
        kernel("const int m = n;", "m / 4"),
        kernel("int q = n / 4;", "q"),
        kernel("int m = n >> 2; int c = m;", "c"),
        kernel("long long m = n;", "m / 4"),
        // A device function's parameter is a local once inlined.
        "__device__ float part(const float *x, int len) { float s = 0; \
         for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < len / 4; \
         i += blockDim.x * gridDim.x) { s += x[4 * i]; } return s; }\n\
         __global__ void k(const float *x, float *y, int n) { y[0] = part(x, n); }"
            .to_string(),
        // The CUDA guide's vectorized grid-stride sum.
        "__global__ void k(const int *x, int *y, int n) { int s = 0; int m = n;\n\
         for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m / 4; i += blockDim.x * gridDim.x) {\n\
         int4 v = reinterpret_cast<const int4 *>(x)[i]; s += v.x + v.y + v.z + v.w; }\n\
         atomicAdd(y, s); }"
            .to_string(),
    ];
    for src in &cases {
        for block in [None, crate::launch::block([128, 1, 1]).ok()] {
            let t = text(&bound(src, block, "steps"));
            assert!(
                !t.starts_with("no bound") && t.contains('n'),
                "{block:?}: {t}\n{src}"
            );
        }
    }
    // A copy narrowed to a `short` holds another value than `n`: `m / 4`
    // is no atom over `n`, and the loop gets no bound from it.
    let narrowed = kernel("short m = n;", "m / 4");
    assert!(text(&bound(&narrowed, None, "steps")).starts_with("no bound"));
}

#[test]
fn a_grid_stride_loop_up_to_a_copy_of_a_parameter_divides_by_the_stride() {
    // `i < m` with `m` a copy of `n` (or a copy of that copy) runs
    // `⌈n/(blockDim.x·gridDim.x)⌉` times, as `i < n` does.
    let loop_to = |prelude: &str, bound: &str| {
        format!(
            "__global__ void k(float *y, int n) {{ {prelude} for (int i = blockIdx.x * blockDim.x + threadIdx.x; \
             i < {bound}; i += blockDim.x * gridDim.x) y[i] += 1.0f; }}"
        )
    };
    let direct = text(&bound(&loop_to("", "n"), None, "steps"));
    assert!(direct.contains("⌈n/(blockDim.x·gridDim.x)⌉"), "{direct}");
    for prelude in ["int m = n;", "const int m = n;", "int c = n; int m = c;"] {
        let t = text(&bound(&loop_to(prelude, "m"), None, "steps"));
        assert!(t.contains("⌈n/(blockDim.x·gridDim.x)⌉"), "{prelude}: {t}");
    }
    // A copy assigned again is not `n` where the loop reads it.
    let reassigned = text(&bound(
        &loop_to("int m = n; m = m + 1;", "m"),
        None,
        "steps",
    ));
    assert!(!reassigned.contains("⌈n/"), "{reassigned}");
}

#[test]
fn a_chain_of_copies_bounds_the_loop_as_its_input_does() {
    // Three copies (`cp`, then the inlined parameter `len`, then `m`) lie
    // between `n` and the loop: the bases closed under the assignments
    // reach `n` however long the chain, and the bound is the one `n`
    // gives directly.
    let direct = "__global__ void k(float *a, float *out, int n) { float acc = 0;\n\
                  for (int c = threadIdx.x; c < n; c += blockDim.x) { acc += a[c % 64]; }\n\
                  out[threadIdx.x % 64] = acc; }";
    let chain = "__device__ float part(const float *a, int len) { float acc = 0; int m = len;\n\
                 for (int c = threadIdx.x; c < m; c += blockDim.x) { acc += a[c % 64]; }\n\
                 return acc; }\n\
                 __global__ void k(float *a, float *out, int n) { int cp = n; int again = cp;\n\
                 out[threadIdx.x % 64] = part(a, again); }";
    for block in [
        crate::launch::block([32, 1, 1]).ok(),
        crate::launch::block([33, 2, 1]).ok(),
        crate::launch::block([128, 1, 1]).ok(),
    ] {
        let want = bound_of(direct, block, "sectors");
        let got = bound_of(chain, block, "sectors");
        assert!(!got.starts_with("no bound"), "{block:?}: {got}");
        assert_eq!(got, want, "{block:?}");
    }
}

/// The `steps` bound for any block of a grid-stride loop up to `limit`,
/// after the declarations `decl`, in `k(float *y, int n, int k)`.
fn grid_stride_to(decl: &str, limit: &str) -> String {
    let src = format!(
        "__global__ void k(float *y, int n, int k) {{ {decl}\n\
         for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < {limit}; i += blockDim.x * gridDim.x) y[i % 64] += 1.0f; }}"
    );
    text(&bound(&src, None, "steps"))
}

#[test]
fn a_grid_stride_loop_up_to_a_quotient_counts_its_strides() {
    // `n / 4` joins the stride's constant factor: `⌈⌈n/4⌉/s⌉ = ⌈n/(4·s)⌉`
    // (it was paid one iteration per element, `21·(n + 3)`).
    let want = "12 + 84·⌈n/(4·blockDim.x·gridDim.x)⌉";
    assert_eq!(grid_stride_to("", "n / 4"), want);
    // Held by a local, or by a local of a copy.
    let local = grid_stride_to("int q = n / 4;", "q");
    assert_eq!(local, "14 + 82·⌈n/(4·blockDim.x·gridDim.x)⌉");
    let chain = grid_stride_to("int m = n; int q = m / 4;", "q");
    assert_eq!(chain, "16 + 82·⌈n/(4·blockDim.x·gridDim.x)⌉");
    // `i <= n / 4` runs once for `-4 < n < 0` (`n / 4` is 0 there), where
    // `⌈(n+1)/(4·s)⌉` is 0: no quotient counts it.
    let inclusive = "__global__ void k(float *y, int n) {\n\
         for (int i = blockIdx.x * blockDim.x + threadIdx.x; i <= n / 4; i += blockDim.x * gridDim.x) y[i % 64] += 1.0f; }";
    assert!(!text(&bound(inclusive, None, "steps")).contains('⌈'));
}

#[test]
fn a_grid_stride_loop_up_to_a_minimum_counts_the_strides_of_either() {
    // `min(n, k) ≤ n` (it had no bound: `min` is no linear form).
    let want = "12 + 84·⌈n/(blockDim.x·gridDim.x)⌉";
    assert_eq!(grid_stride_to("", "min(n, k)"), want);
    // Held by a local, the minimum is an atom the local reads as (it was
    // paid a constant, `14 + 82·2^30`, under the assumption `n ≤ 2^30`).
    let local = grid_stride_to("int m = min(n, k);", "m");
    assert_eq!(local, "14 + 82·⌈n/(blockDim.x·gridDim.x)⌉");
}

#[test]
fn a_grid_stride_loop_up_to_a_maximum_counts_the_strides_of_the_larger() {
    // `⌈max(n,k)/s⌉`, evaluated from both inputs (it had no bound).
    let want = "12 + 84·⌈max(n,k)/(blockDim.x·gridDim.x)⌉";
    assert_eq!(grid_stride_to("", "max(n, k)"), want);
    let local = grid_stride_to("int m = n; int l = max(m, k);", "l");
    assert_eq!(local, "16 + 82·⌈max(n,k)/(blockDim.x·gridDim.x)⌉");
    let at: std::collections::BTreeMap<String, f64> = [
        ("n".to_string(), 100.0),
        ("k".to_string(), 300.0),
        ("blockDim.x".to_string(), 32.0),
        ("gridDim.x".to_string(), 2.0),
    ]
    .into();
    let name = "⌈max(n,k)/(blockDim.x·gridDim.x)⌉";
    assert_eq!(stride::quotient_value(name, &at), Some(5.0));
    assert_eq!(
        ghost::derived_from(name),
        ["n", "k", "blockDim.x", "gridDim.x"]
    );
}

#[test]
fn a_maximum_of_quotients_with_different_divisors_is_counted() {
    // A constant is written over the quotient's divisor (`max(n / 4, 100)`
    // is `⌈max(n,400)/4⌉`); of two inputs with different divisors the
    // smaller divisor counts (`max(n / 4, k)` as `max(n, k)`). Both had no
    // bound.
    assert_eq!(
        grid_stride_to("", "max(n / 4, 100)"),
        "14 + 86·⌈max(n,400)/(4·blockDim.x·gridDim.x)⌉"
    );
    assert_eq!(
        grid_stride_to("", "max(n / 4, k)"),
        "14 + 86·⌈max(n,k)/(blockDim.x·gridDim.x)⌉"
    );
}

#[test]
fn a_copy_divided_in_place_keeps_a_bound() {
    // `m /= 4` moves a negative `m` up by a change with no ceiling: the
    // base over `m` is paid by sign (where `m ≥ 0` it does not grow, where
    // `m ≤ 0` it stays at most 0). It had no bound ("no potential
    // satisfies the constraints").
    let src = "__global__ void k(float *y, int n) { int m = n; m /= 4;\n\
               for (int i = threadIdx.x; i < m; i += blockDim.x) y[i % 64] += 1.0f; }";
    assert_eq!(text(&bound(src, None, "steps")), "12 + 80·max(0, n)");
    assert_eq!(
        text(&bound(src, crate::launch::block([64, 1, 1]).ok(), "steps")),
        "72 + 1.25·(n + 63)"
    );
}

#[test]
fn copies_of_an_input_add_no_bases_of_their_own() {
    // Loops up to a copy of a copy of `n` build the LP of loops up to `n`:
    // reading a local that holds `n` is reading `n`. Each copy once added
    // its own forms to every loop's bases (twice the LP), and a chain of 80
    // copies passed the limit on linear bases and lost the bound.
    let loops = |limit: &str| {
        (0..6)
            .map(|k| {
                format!(
                    "for (int i{k} = blockIdx.x * blockDim.x + threadIdx.x; i{k} < {limit}; \
                     i{k} += blockDim.x * gridDim.x) a[i{k}] += 1.0f;"
                )
            })
            .collect::<String>()
    };
    let kernel = |decl: &str, limit: &str| {
        format!(
            "__global__ void k(float *a, int n) {{ {decl} {} }}",
            loops(limit)
        )
    };
    let bases = |src: &str| {
        let f = parse_source(SourceFile::new("t.cu", src));
        let k = lower_kernel(&f, "k").unwrap();
        prepare(&k, Config::default()).num_bases()
    };
    let direct = kernel("", "n");
    let copies = kernel("int len = n; int m = len;", "m");
    assert_eq!(bases(&copies), bases(&direct));
    // The same bound but for the copies' own cost, a constant.
    let per_stride = |src: &str| {
        let t = text(&bound(src, None, "steps"));
        t.split_once(" + ").map(|(_, rest)| rest.to_string())
    };
    let expected = per_stride(&direct);
    assert!(expected.is_some(), "{direct}");
    assert_eq!(per_stride(&copies), expected);
    let chain: String = std::iter::once("int c0 = n;".to_string())
        .chain((1..80).map(|i| format!("int c{i} = c{};", i - 1)))
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(per_stride(&kernel(&chain, "c79")), expected);
}

/// A counted loop (not grid-strided) `for (int c = 0; GUARD; c++)` after
/// `decl`, paying one store per iteration.
fn counted_to(decl: &str, guard: &str) -> String {
    let src = format!(
        "__global__ void k(float *a, int n, int k) {{ {decl} \
         for (int c = 0; {guard}; c++) {{ a[threadIdx.x] += 1.0f; }} }}"
    );
    bound_of(&src, None, "steps")
}

#[test]
fn a_counted_loop_up_to_a_maximum_or_minimum_is_counted_by_it() {
    // Each had no bound ("its condition bounds no counter").
    assert_eq!(counted_to("", "c < max(n, k)"), "8 + 28·max(0, max(n,k))");
    assert_eq!(counted_to("", "c <= max(64, n)"), "8 + 28·(max(64,n) + 1)");
    assert_eq!(
        counted_to("", "c < min(n, 500)"),
        "8 + 28·max(0, min(n,500))"
    );
    assert_eq!(
        counted_to("int m = n; int l = max(m, 64);", "c < l"),
        "12 + 26·max(n,64)"
    );
    // Over a quotient: named (it was at most its constant, 3010).
    assert_eq!(
        counted_to("", "c < min(n / 4, 100)"),
        "10 + 30·max(0, min(n/4,100))"
    );
    // A minimum over the outer counter bounds an inner loop by its
    // constant.
    let nested = "__global__ void k(float *a, int n) { for (int c = 0; c < max(n, 8); c++) \
                  for (int j = 0; j < min(c, 16); j++) a[threadIdx.x] += 1.0f; }";
    assert_eq!(bound_of(nested, None, "steps"), "8 + 466·max(n,8)");
}

#[test]
fn a_limit_over_sums_multiples_and_quotients_of_inputs_is_counted_by_it() {
    // Each had no bound ("its condition bounds no counter", or "no
    // potential" for the local).
    let cases = [
        ("", "c < max(n / 4, 10)"),
        ("", "c < max(n + 3, 64)"),
        ("", "c < min(2 * n, k - 1)"),
        ("", "c <= max(n - 1, 0)"),
        ("int m = max(n / 4, 10);", "c < m"),
    ];
    let got: Vec<String> = cases.iter().map(|(d, g)| counted_to(d, g)).collect();
    assert_eq!(
        got,
        [
            "10 + 30·max(n/4,10)",
            "10 + 30·max(n+3,64)",
            "12 + 32·max(0, min(2*n,k-1))",
            "10 + 30·(max(n-1,0) + 1)",
            "12 + 26·max(n/4,10)",
        ]
    );
}

#[test]
fn a_limit_over_products_and_shifts_is_counted_by_it() {
    // Each had no bound ("its condition bounds no counter").
    let cases = [
        ("", "c < max(n * k, 8)"),
        ("", "c < max(n << 2, 8)"),
        ("", "c < max(n >> 1, 3)"),
        ("int m = n * k; int l = max(m, 64);", "c < l"),
    ];
    let got: Vec<String> = cases.iter().map(|(d, g)| counted_to(d, g)).collect();
    assert_eq!(
        got,
        [
            "10 + 30·max(n*k,8)",
            "10 + 30·max(n<<2,8)",
            "10 + 30·max(n>>1,3)",
            "14 + 26·max(n*k,64)",
        ]
    );
    // Unsigned: a quotient or right shift is named (it never wraps).
    let unsigned = |guard: &str| {
        format!(
            "__global__ void k(float *a, unsigned n) {{ \
             for (unsigned c = 0; {guard}; c++) {{ a[threadIdx.x] += 1.0f; }} }}"
        )
    };
    assert_eq!(
        bound_of(&unsigned("c < max(n / 4, 10u)"), None, "steps"),
        "10 + 30·max(n/4,10)"
    );
    assert_eq!(
        bound_of(&unsigned("c < max(n >> 3, 10u)"), None, "steps"),
        "10 + 30·max(n>>3,10)"
    );
    // A sum too small to wrap is named too, held in a local as well.
    let held = "__global__ void k(float *a, unsigned n) { unsigned m = max(n / 3 + 1, 100u); \
                for (int c = 0; c < m; c++) { a[threadIdx.x] += 1.0f; } }";
    assert_eq!(bound_of(held, None, "steps"), "14 + 26·max((n/3)+1,100)");
    let at: std::collections::BTreeMap<String, f64> =
        [("n".to_string(), -7.0), ("k".to_string(), 30.0)].into();
    assert_eq!(ghost::derived_value("max(n*k,8)", &at), Some(8.0));
    assert_eq!(ghost::derived_value("min(n<<2,k>>1)", &at), Some(-28.0));
    assert_eq!(ghost::derived_value("max(n>>1,-5)", &at), Some(-4.0));
}

#[test]
fn a_maximum_no_bound_can_name_says_which_operand_and_why() {
    let cases = [
        (
            "__global__ void k(float *a, int n, int k) { for (int c = 0; c < max(n / k, 8); c++) a[threadIdx.x] += 1.0f; }",
            "`max(n/k,8)`",
            "`n/k` is an operation",
        ),
        (
            "__global__ void k(float *a, int n) { for (int c = 0; c < max(n, (int)a[0]); c++) a[threadIdx.x] += 1.0f; }",
            "`max(n,…)`",
            "`…` is a value read from memory",
        ),
        // Held in a local: the loop is bounded by `m`, which holds it.
        (
            "__global__ void k(float *a, unsigned n) { unsigned m = max(n - 1, 7u); for (int c = 0; c < m; c++) a[threadIdx.x] += 1.0f; }",
            "`max(n-1,7)`",
            "`n-1` is an unsigned sum",
        ),
        // Not the inner loop's maximum over the counter (bounded).
        (
            "__global__ void k(float *a, unsigned n) { unsigned m = max(n - 1, 100u); for (int c = 0; c < m; c++) for (int j = c; j <= max(3, c); j++) a[threadIdx.x] += 1.0f; }",
            "`max(n-1,100)`",
            "`n-1` is an unsigned sum",
        ),
    ];
    for (src, limit, operand) in cases {
        match bound(src, None, "steps") {
            Outcome::NoBound(why @ NoBound::UnnamedMaximum { .. }, Some(span)) => {
                let t = why.to_string();
                assert!(t.contains(limit) && t.contains(operand), "{t}");
                assert!(span.start > 0);
            }
            other => panic!("expected no bound naming the maximum, got {other:?}"),
        }
    }
}

#[test]
fn an_inner_loop_up_to_a_maximum_over_the_outer_counter_is_bounded() {
    // `j <= max(16, c)` with `0 <= c`: `j <= 16 + c`, a quadratic bound.
    let src = |start: &str| {
        format!(
            "__global__ void k(float *a, int n) {{ for (int c = 0; c < n; c++) \
             for (int j = {start}; j <= max(16, c); j++) a[threadIdx.x] += 1.0f; }}"
        )
    };
    assert_eq!(
        bound_of(&src("0"), None, "steps"),
        "482 + 14·max(0, n)² + 506·max(0, n)"
    );
    // From `c`: at most 17 iterations each.
    assert_eq!(bound_of(&src("c"), None, "steps"), "6 + 492·max(0, n)");
}

#[test]
fn a_named_maximum_or_minimum_is_evaluated_from_its_inputs() {
    let at: std::collections::BTreeMap<String, f64> =
        [("n".to_string(), -7.0), ("k".to_string(), 30.0)].into();
    assert_eq!(ghost::derived_value("max(n,k)", &at), Some(30.0));
    assert_eq!(ghost::derived_value("min(n,500)", &at), Some(-7.0));
    assert_eq!(ghost::derived_value("max(n,m)", &at), None);
    assert_eq!(ghost::derived_from("min(k,500)"), ["k"]);
    // Counted as 0 where negative: a bound of `28·max(0, min(n,500))`
    // at n = −7 is 0, and the maximum with 64 is never negative.
    assert!(limit::extreme_nonnegative("max(n,64)"));
    assert!(!limit::extreme_nonnegative("min(n,500)"));
    assert!(!limit::extreme_nonnegative("max(n,-1)"));
    assert!(limit::extreme_nonnegative("min(blockDim.x,8)"));
    // Operands over inputs, evaluated as C does (`-7/4` is -1).
    assert_eq!(ghost::derived_value("max(n/4,-5)", &at), Some(-1.0));
    assert_eq!(ghost::derived_value("min(2*n,k-1)", &at), Some(-14.0));
    assert_eq!(ghost::derived_value("max((n/4)+1,k/3)", &at), Some(10.0));
    assert_eq!(ghost::derived_from("min(2*n,k-1)"), ["n", "k"]);
    assert!(limit::extreme_nonnegative("max(n-1,0)"));
    assert!(!limit::extreme_nonnegative("max(blockDim.x-40,n)"));
    let src = "__global__ void k(float *a, int n) { for (int c = 0; c < min(n, 500); c++) a[threadIdx.x] += 1.0f; }";
    let Outcome::Bound(b) = bound(src, None, "steps") else {
        panic!("a bound");
    };
    assert_eq!(b.eval(&at), Some(8.0));
    let big: std::collections::BTreeMap<String, f64> = [("n".to_string(), 9000.0)].into();
    assert_eq!(b.eval(&big), Some(8.0 + 28.0 * 500.0));
}
