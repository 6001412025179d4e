//! Regression tests for soundness holes: each kernel is analyzed for its
//! launch (and, where the hole was in the any-block analysis, for any
//! block), simulated, and every metric's bound must be at least the
//! simulated worst warp — or there must be no bound, with a reason, where
//! that is the honest answer (a counter that wraps, a loop that never
//! ends).

use copper::bound::{prepare, Config, InputAssumption, Outcome};
use copper::cost::{Metric, BUILTIN_METRICS};
use copper::cuda::parse::parse_source;
use copper::ir::lower::lower_kernel;
use copper::sim::params::ParamFile;
use copper::sim::{inputs_from_spec, simulate_owned, SimOptions};
use copper::source::SourceFile;

#[path = "reproducers/atomics.rs"]
mod atomics;
#[path = "reproducers/grid_stride.rs"]
mod grid_stride;
#[path = "reproducers/jumps.rs"]
mod jumps;
#[path = "reproducers/overflow.rs"]
mod overflow;
#[path = "reproducers/shifts.rs"]
mod shifts;
#[path = "reproducers/witness.rs"]
mod witness;

/// A launch of kernel `k` of `src`: grid, block, scalar arguments and
/// arrays (name, length), every array element 1.
struct Case<'a> {
    src: &'a str,
    grid: [u64; 3],
    block: [u64; 3],
    args: &'a [(&'a str, i64)],
    arrays: &'a [(&'a str, u64)],
}

/// What was found for one metric: the bound's text (or why there is
/// none), its value at the launch, and the simulated worst warp.
#[derive(Debug)]
struct Found {
    metric: String,
    bound: Result<f64, String>,
    simulated: f64,
}

impl Case<'_> {
    fn toml(&self) -> String {
        let mut t = format!(
            "[kernel.k]\ngrid = {:?}\nblock = {:?}\n[kernel.k.args]\n",
            self.grid, self.block
        );
        for (n, v) in self.args {
            t += &format!("{n} = {v}\n");
        }
        for (n, len) in self.arrays {
            t += &format!("[kernel.k.arrays.{n}]\nlen = {len}\ninit = \"const\"\nvalue = 1\n");
        }
        t
    }

    /// Analyzes for the launch's block (`any_block`: for any block),
    /// simulates, and returns each metric's bound against the simulation.
    fn run(&self, any_block: bool) -> Vec<Found> {
        let f = parse_source(SourceFile::new("t.cu", self.src));
        let kernel = lower_kernel(&f, "k").expect("the kernel lowers");
        let params = ParamFile::from_toml(&self.toml()).expect("the launch parses");
        let spec = &params.kernel["k"];
        let config = Config {
            block: (!any_block)
                .then(|| copper::launch::block(self.block).expect("a block CUDA runs")),
            grid: (!any_block).then(|| copper::launch::grid(self.grid).expect("a grid CUDA runs")),
            ..Config::default()
        };
        let prepared = prepare(&kernel, config);
        let inputs = inputs_from_spec(&kernel, spec).expect("the inputs build");
        let at = inputs.bound_point();
        let sim = simulate_owned(&kernel, inputs, &SimOptions::default()).expect("it simulates");
        BUILTIN_METRICS
            .iter()
            .zip(&sim.metrics)
            .map(|(name, m)| {
                let b = prepared.bound(&Metric::builtin(name).unwrap());
                // A bound found under an assumption these inputs break
                // claims nothing about them.
                let broken: Vec<String> = b
                    .assumes
                    .iter()
                    .filter(|a| !InputAssumption::all_hold(std::slice::from_ref(a), &at))
                    .map(|a| a.report_line())
                    .collect();
                let bound = match &b.work {
                    Outcome::Bound(_) if !broken.is_empty() => Err(broken.join("; ")),
                    Outcome::Bound(e) => Ok(e.eval(&at).expect("every input named")),
                    Outcome::NoBound(why, _) => Err(why.to_string()),
                };
                Found {
                    metric: name.to_string(),
                    bound,
                    simulated: m.max_warp,
                }
            })
            .collect()
    }
}

/// Each built-in metric's name and bound (as text) for kernel `k` of `src`
/// analyzed for a launch, or why there is none: for kernels whose
/// simulation would not end.
fn analyze_only(
    src: &str,
    grid: [u64; 3],
    block: [u64; 3],
) -> Vec<(&'static str, Result<String, String>)> {
    let f = parse_source(SourceFile::new("t.cu", src));
    let kernel = lower_kernel(&f, "k").expect("the kernel lowers");
    let config = Config {
        block: Some(copper::launch::block(block).expect("a block CUDA runs")),
        grid: Some(copper::launch::grid(grid).expect("a grid CUDA runs")),
        ..Config::default()
    };
    let prepared = prepare(&kernel, config);
    BUILTIN_METRICS
        .iter()
        .map(|name| {
            let found = match prepared.bound(&Metric::builtin(name).unwrap()).work {
                Outcome::Bound(e) => Ok(e.to_string()),
                Outcome::NoBound(why, _) => Err(why.to_string()),
            };
            (*name, found)
        })
        .collect()
}

/// Every bound is at least the simulated cost; with `all_bounded`, every
/// metric has a bound.
fn assert_sound(found: &[Found], all_bounded: bool) {
    for f in found {
        match &f.bound {
            Ok(b) => assert!(
                *b + 1e-9 >= f.simulated,
                "{}: bound {b} < simulated {} in {found:?}",
                f.metric,
                f.simulated
            ),
            Err(why) => assert!(!all_bounded, "{}: no bound: {why}", f.metric),
        }
    }
}

const SAXPY: &str = "__global__ void k(int n, float a, const float *x, float *y) {\n\
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {\n\
        y[i] = a * x[i] + y[i];\n\
    }\n\
}";

#[test]
fn grid_stride_loops_at_a_large_launch_are_bounded_exactly() {
    // A stride of 2^20 threads: potentials of 2^-20 per unit of n.
    let n = 2_097_152;
    let found = Case {
        src: SAXPY,
        grid: [4096, 1, 1],
        block: [256, 1, 1],
        args: &[("n", n), ("a", 3)],
        arrays: &[("x", n as u64), ("y", n as u64)],
    }
    .run(false);
    assert_sound(&found, true);
    // Every warp makes global accesses: the sectors bound cannot be 0.
    assert!(found[2].simulated > 0.0);
}

#[test]
fn a_histogram_at_a_large_launch_is_bounded_exactly() {
    let src = "__global__ void k(unsigned char *data, unsigned int *hist, int n) {\n\
        __shared__ unsigned int s_hist[256];\n\
        for (int b = threadIdx.x; b < 256; b += blockDim.x) { s_hist[b] = 0; }\n\
        __syncthreads();\n\
        int stride = blockDim.x * gridDim.x;\n\
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {\n\
            unsigned char v = data[i];\n\
            atomicAdd(&s_hist[v], 1);\n\
        }\n\
        __syncthreads();\n\
        for (int b = threadIdx.x; b < 256; b += blockDim.x) { atomicAdd(&hist[b], s_hist[b]); }\n\
    }";
    let n = 2_097_152;
    let found = Case {
        src,
        grid: [4096, 1, 1],
        block: [256, 1, 1],
        args: &[("n", n)],
        arrays: &[("data", n as u64), ("hist", 256)],
    }
    .run(false);
    assert_sound(&found, true);
}

#[test]
fn loops_with_huge_strides_are_bounded_exactly() {
    for stride in [131_072, 524_288, 1 << 20] {
        let src = format!(
            "__global__ void k(float *a, float *out, int n) {{\n\
             float acc = 0;\n\
             for (int i = 0; i < n; i += {stride}) acc += a[threadIdx.x];\n\
             out[threadIdx.x] = acc;\n\
             }}"
        );
        for n in [100, 3 * stride + 1] {
            let found = Case {
                src: &src,
                grid: [1, 1, 1],
                block: [32, 1, 1],
                args: &[("n", n)],
                arrays: &[("a", 32), ("out", 32)],
            }
            .run(false);
            assert_sound(&found, true);
        }
    }
}

/// A 33×2 block: warp 1 holds `x = 32, y = 0` and `x = 0…30, y = 1`.
fn wrapped(src: &str, args: &[(&str, i64)]) -> Vec<Found> {
    Case {
        src,
        grid: [1, 1, 1],
        block: [33, 2, 1],
        args,
        arrays: &[("out", 64)],
    }
    .run(true)
}

#[test]
fn any_block_bounds_allow_warps_that_wrap_across_rows() {
    let shared = "__global__ void k(int *out) { __shared__ int s[64]; s[threadIdx.x] = 1; __syncthreads(); out[threadIdx.y] = s[0]; }";
    let found = wrapped(shared, &[]);
    assert_sound(&found, true);
    assert!(found[3].simulated >= 1.0, "the wrapped warp conflicts");
    let global = "__global__ void k(int *out) { out[threadIdx.x] = 1; }";
    let found = wrapped(global, &[]);
    assert_sound(&found, true);
    assert!(
        found[2].simulated >= 5.0,
        "the wrapped warp needs 5 sectors"
    );
    let looped = "__global__ void k(int *out, int n) { __shared__ int s[64];\n\
                  for (int i = 0; i < n; i++) { s[threadIdx.x] += i; }\n\
                  __syncthreads(); out[threadIdx.x] = s[threadIdx.x]; }";
    assert_sound(&wrapped(looped, &[("n", 50)]), true);
}

fn counted(counter: &str, cond: &str, step: &str, n: i64) -> Vec<Found> {
    let src = format!(
        "__global__ void k(float *a, float *out, int n) {{\n\
         float acc = 0;\n\
         for ({counter} c = 0; {cond}; c += {step}) acc += a[threadIdx.x];\n\
         out[threadIdx.x] = acc;\n\
         }}"
    );
    Case {
        src: &src,
        grid: [1, 1, 1],
        block: [32, 1, 1],
        args: &[("n", n)],
        arrays: &[("a", 32), ("out", 32)],
    }
    .run(false)
}

#[test]
fn counters_that_may_wrap_get_no_bound_and_say_why() {
    // 0, 100, 200, 44, 144, 244, 88, …: 23 iterations below 250. A bound
    // holds only under an assumption on n that 250 breaks (n ≤ 2^7 − 1).
    let found = counted("unsigned char", "c < n", "100", 250);
    assert_sound(&found, false);
    let Err(why) = &found[1].bound else {
        panic!("a wrapping unsigned char counter got a bound: {found:?}");
    };
    assert!(why.contains("wrap") && why.contains("`c`"), "{why}");
    // A short past 32767 wraps to negative values, still below n.
    let found = counted("short", "c < n", "10000", 32000);
    assert_sound(&found, false);
    assert!(matches!(&found[1].bound, Err(why) if why.contains("wrap")));
}

#[test]
fn narrow_counters_that_provably_fit_keep_their_bounds() {
    // c ≤ 199 before the step: c + 10 ≤ 209 fits an unsigned char.
    assert_sound(
        &counted("unsigned char", "c < 200 && c < n", "10", 250),
        true,
    );
    // c ≤ 999: c + 100 fits an unsigned int.
    assert_sound(&counted("unsigned int", "c < 1000", "100", 1000), true);
    assert_sound(&counted("short", "c < 30000 && c < n", "7", 32000), true);
}

#[test]
fn multiplicative_loops_get_logarithmic_bounds() {
    // Before: 14 + 16·(n - 1) steps, 92× the simulated cost at n = 1000
    // and 3666× at n = 65537 (`k /= 3`: 127× and 5519×).
    let kernels = [
        "for (int i = 1; i < n; i *= 2)",
        "for (int i = 1; i <= n; i <<= 1)",
        "for (int k = n; k > 0; k /= 3)",
        "for (unsigned k = n; k >= 1; k >>= 1)",
    ];
    for head in kernels {
        let unsigned = head.contains("unsigned");
        let src = format!(
            "__global__ void k(float *a, {} n) {{\n  float acc = 0.0f;\n  {head} acc += a[threadIdx.x];\n  a[threadIdx.x] = acc;\n}}\n",
            if unsigned { "unsigned" } else { "int" }
        );
        // A growing counter past 2^30 would overflow (undefined).
        let largest = if head.contains('<') {
            (1 << 30) - 1
        } else {
            i32::MAX as i64
        };
        for n in [-5, 0, 1, 2, 3, 1000, 65537, largest] {
            if unsigned && n < 0 {
                continue;
            }
            let found = Case {
                src: &src,
                grid: [1, 1, 1],
                block: [32, 1, 1],
                args: &[("n", n)],
                arrays: &[("a", 32)],
            }
            .run(false);
            assert_sound(&found, true);
            let steps = found.iter().find(|f| f.metric == "steps").unwrap();
            let bound = *steps.bound.as_ref().unwrap();
            // One iteration costs 16 steps: at most 1 + ⌊log2 n⌋ of them.
            let logn = if n < 2 {
                0.0
            } else {
                (n as f64).log2().floor()
            };
            assert!(
                bound <= 14.0 + 16.0 * (logn + 1.0),
                "{head}, n = {n}: {bound}"
            );
        }
    }
    // A counter that is not set from an input, or that an input bounds
    // after the kernel changed it, keeps its old (linear or no) bound.
    let changed = "__global__ void k(float *a, int n) {\n  float acc = 0.0f;\n  n = n * 4;\n  for (int i = 1; i < n; i *= 2) acc += a[threadIdx.x];\n  a[threadIdx.x] = acc;\n}\n";
    let found = Case {
        src: changed,
        grid: [1, 1, 1],
        block: [32, 1, 1],
        args: &[("n", 1000)],
        arrays: &[("a", 32)],
    }
    .run(false);
    assert_sound(&found, false);
}
