//! Test launches: the original kernel run on a launch, and launches
//! synthesized for a kernel without a parameter file, their arrays grown
//! until the original reads and writes in bounds. The rewrite checker
//! (`copper_transforms::check`), the launch planner and the race search of
//! the lint run kernels on them.

use crate::launch::Dims;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

use crate::ir::{
    visit_exprs, visit_stmts, Array, Builtin, Expr, ExprKind, Kernel, Param, Stmt, VarId,
};
use crate::sim::params::{ArraySpec, InitKind, LaunchSpec};
use crate::sim::work::Work;
use crate::sim::{inputs_from_spec, simulate_owned, SimOptions, SimResult};

/// Most instructions a warp may execute in a check (original and candidate
/// alike).
pub const STEP_BUDGET: u64 = 5_000_000;

/// Most instructions of all warps together in one simulated test launch
/// ([`SimOptions::max_steps`]): the checks' deterministic work limit.
pub const LAUNCH_STEPS: u64 = 1_000_000_000;

/// One simulation of a check: the launch, the point its bounds are
/// evaluated at (arguments and launch builtins) and the results.
pub struct Run {
    /// The launch.
    pub spec: LaunchSpec,
    /// Its bound point ([`crate::sim::Inputs::bound_point`]).
    pub at: BTreeMap<String, f64>,
    /// What the simulator reported.
    pub result: SimResult,
}

/// Why the original does not run on a test launch.
pub enum Fail {
    /// The launch does not fit the kernel.
    Setup(String),
    /// The simulation failed.
    Sim(crate::sim::SimError),
}

/// Most elements a synthesized array grows to.
pub const MAX_GROWN: u64 = 1 << 22;

/// Most instructions a warp of the original may execute on a synthesized
/// launch (a test launch is small; a kernel whose every thread loops over
/// the whole input is tested on the smaller launches).
pub const SYNTH_STEP_BUDGET: u64 = 300_000;

/// The original on `spec`, and its results. A synthesized launch
/// (`grow`) whose arrays are too short for the original's accesses is
/// retried with arrays four times longer, up to [`MAX_GROWN`] elements;
/// once it runs, arrays it grew are cut back to a quarter more than the
/// original accessed ([`trimmed`]), so that every later simulation on the
/// launch fills and compares no more than that.
pub fn run_original(
    kernel: &Kernel,
    mut spec: LaunchSpec,
    grow: bool,
    options: &SimOptions,
) -> Result<Run, Fail> {
    let mut opts = options.clone();
    if grow {
        opts.step_budget = SYNTH_STEP_BUDGET;
    }
    let first = spec.clone();
    loop {
        let inputs = inputs_from_spec(kernel, &spec).map_err(|e| Fail::Setup(e.to_string()))?;
        let at = inputs.bound_point();
        match simulate_owned(kernel, inputs, &opts) {
            Ok(result) => {
                let run = Run { spec, at, result };
                return Ok(match trimmed(&run, &first) {
                    Some(spec) => run_original(kernel, spec, false, &opts)?,
                    None => run,
                });
            }
            Err(e)
                if grow
                    && spec.arrays.iter().any(|(name, a)| {
                        a.len < MAX_GROWN
                            && e.message
                                .starts_with(&format!("out-of-bounds access `{name}["))
                    }) =>
            {
                for a in spec.arrays.values_mut() {
                    a.len = (a.len * 4).min(MAX_GROWN);
                }
            }
            Err(e) => return Err(Fail::Sim(e)),
        }
    }
}

/// The launch of `run`, whose arrays grew from those of `first`, with
/// each grown array cut to a quarter more than the original accessed
/// (never below its first length); `None` when none grew or none would
/// be cut. Random data of one seed agree on their common prefix, so the
/// original runs the same on the cut arrays.
fn trimmed(run: &Run, first: &LaunchSpec) -> Option<LaunchSpec> {
    let mut spec = run.spec.clone();
    let mut cut = false;
    for ((name, _), &extent) in run.result.arrays.iter().zip(&run.result.extents) {
        let (Some(a), Some(f)) = (spec.arrays.get_mut(name), first.arrays.get(name)) else {
            continue;
        };
        let len = (extent + extent / 4).max(f.len);
        if len < a.len {
            a.len = len;
            cut = true;
        }
    }
    cut.then_some(spec)
}

/// Runs the original on the smallest launch synthesized around `block`
/// ([`synthesized`]), its arrays grown as the checks grow them, every run
/// of it charged to `work` and stopped once that is spent (or at
/// `deadline`): `Ok`, or why it does not run cleanly (the simulator's
/// error; `None` when the launch cannot be built).
pub fn runs_on_block(
    kernel: &Kernel,
    block: Dims,
    work: &Arc<Work>,
    deadline: Option<Instant>,
) -> Result<(), Option<crate::sim::SimError>> {
    let spec = synthesized(kernel, block).into_iter().next().ok_or(None)?;
    grown(kernel, spec, work, deadline).map(drop)
}

/// The synthesized launch `spec` with its arrays grown until the original
/// reads and writes in bounds, as the checks run it (races detected); the
/// simulator's error when it still does not run cleanly (`None` when the
/// launch cannot be built). Every run, the reruns with longer arrays
/// too, is charged to `work` ([`SimOptions::work`]) and stops once it is
/// spent, or at the safety net `deadline`.
pub fn grown(
    kernel: &Kernel,
    spec: LaunchSpec,
    work: &Arc<Work>,
    deadline: Option<Instant>,
) -> Result<LaunchSpec, Option<crate::sim::SimError>> {
    let options = SimOptions {
        step_budget: STEP_BUDGET,
        detect_races: true,
        work: Some(Arc::clone(work)),
        deadline,
        ..SimOptions::default()
    };
    match run_original(kernel, spec, true, &options) {
        Ok(run) => Ok(run.spec),
        Err(Fail::Setup(_)) => Err(None),
        Err(Fail::Sim(e)) => Err(Some(e)),
    }
}

/// Launches for a kernel without a parameter file, smallest first:
/// generous arrays of random data, small integer arguments and symbols
/// (one leaving a partial last block), a few grid sizes; two-dimensional
/// grids for a two-dimensional block or a kernel that reads `blockIdx.y`;
/// 8 bytes of dynamic shared memory per thread for `extern __shared__`
/// arrays. The last one has sizes a whole number of blocks.
pub fn synthesized(k: &Kernel, block: Dims) -> Vec<LaunchSpec> {
    let threads = block.count();
    let two_d = block[1] > 1 || uses(k, Builtin::BlockIdx(1));
    // Sizes are counted in the unit one block covers along x.
    let unit = if two_d { block[0] } else { threads };
    // `extern __shared__` memory: 8 bytes per thread (a `double` each).
    let dynamic_shared = k.arrays.iter().any(|a| a.is_shared() && a.dims.is_empty());
    let counts = trip_counts(k);
    let mut out = Vec::new();
    // Sizes around the block: a partial last block, several full blocks,
    // small odd sizes. Launches the original cannot run cleanly are dropped
    // by the caller.
    // Smallest first: the caller stops at the first launch too long to run.
    // Trip counts take the launch's size only on the launch of two tiles
    // of one block, one partial (`unit + 1`); elsewhere they stay small,
    // so that the work of a launch grows with the block, not with its
    // square.
    for (g, size, full_counts) in [
        (2u64, 5, false),
        (1, 17, false),
        (1, unit / 2 + 3, false),
        (1, unit + 1, true),
        (2, 2 * unit - unit / 2 - 1, false),
        (3, 3 * unit, false),
    ] {
        let grid = if two_d { [g, g, 1] } else { [g, 1, 1] };
        let blocks: u64 = grid.iter().product();
        let value = |v: VarId| match counts.contains(&v) && !full_counts {
            true => size.clamp(1, COUNT_CAP) as f64,
            false => size.max(1) as f64,
        };
        let mut args = BTreeMap::new();
        let mut arrays = BTreeMap::new();
        for v in k.scalar_params() {
            let var = &k.vars[v];
            let x = if var.ty.is_float() { 1.5 } else { value(v) };
            args.insert(var.name.clone(), x);
        }
        for p in &k.params {
            match p {
                Param::Scalar(_) | Param::Record { .. } => {}
                Param::Array(a) => {
                    // A 2-D launch's arrays hold a `size × size` matrix; a
                    // 1-D kernel over two sizes gets its arrays grown when
                    // it reads past them (see `run_original`): filling
                    // matrices for every 1-D kernel cost more than the
                    // simulations.
                    let matrix = if two_d { (size + 1) * size } else { size + 1 };
                    let len = (4 * threads * blocks).max(matrix).clamp(4096, 1 << 20);
                    let arr = &k.arrays[*a];
                    arrays.insert(
                        arr.name.clone(),
                        random_array(arr, len, 7 + out.len() as u64),
                    );
                }
            }
        }
        let defines = k
            .symbols
            .iter()
            .map(|&v| (k.vars[v].name.clone(), value(v)))
            .collect();
        out.push(LaunchSpec {
            grid: grid.to_vec(),
            block: block.to_array().to_vec(),
            shared_bytes: if dynamic_shared { 8 * threads } else { 0 },
            args,
            arrays,
            defines,
        });
    }
    out
}

/// Largest value a trip count takes on most synthesized launches: two
/// warps' worth of iterations and a partial third.
const COUNT_CAP: u64 = 2 * 32 + 3;

/// The scalar parameters and symbols of `k` that are trip counts: each
/// bounds some loop whose condition is the same for every thread, and no
/// condition that differs between threads (`if (i < n)` makes `n` an
/// extent of the threads, which test launches must cover whatever the
/// block). A flow-insensitive look: a variable differs between threads
/// when some assignment to it reads the thread index, a warp primitive,
/// an atomic's result or another such variable.
fn trip_counts(k: &Kernel) -> BTreeSet<VarId> {
    let threaded = thread_dependent(k);
    let (mut uniform, mut varying) = (BTreeSet::new(), BTreeSet::new());
    visit_stmts(&k.body, &mut |s| {
        let (cond, is_loop) = match s {
            Stmt::If { cond, .. } => (cond, false),
            Stmt::Loop {
                cond: Some(cond), ..
            } => (cond, true),
            _ => return,
        };
        let into = match differs(cond, &threaded) {
            true => &mut varying,
            false if is_loop => &mut uniform,
            false => return,
        };
        cond.visit(&mut |x| {
            if let ExprKind::Var(v) = x.kind {
                into.insert(v);
            }
        });
    });
    let inputs: BTreeSet<VarId> = k.scalar_params().chain(k.symbols.iter().copied()).collect();
    uniform
        .difference(&varying)
        .filter(|v| inputs.contains(v))
        .copied()
        .collect()
}

/// The variables of `k` that may differ between the threads of a launch
/// (see [`trip_counts`]).
fn thread_dependent(k: &Kernel) -> BTreeSet<VarId> {
    let mut out = BTreeSet::new();
    loop {
        let before = out.len();
        visit_stmts(&k.body, &mut |s| match s {
            Stmt::Assign { var, value, .. } if differs(value, &out) => {
                out.insert(*var);
            }
            Stmt::Atomic {
                result: Some(var), ..
            } => {
                out.insert(*var);
            }
            _ => {}
        });
        if out.len() == before {
            return out;
        }
    }
}

/// Whether `e` may differ between threads: it reads the thread index, a
/// warp primitive or a variable of `threaded`.
fn differs(e: &Expr, threaded: &BTreeSet<VarId>) -> bool {
    let mut d = false;
    e.visit(&mut |x| {
        d |= match &x.kind {
            ExprKind::Builtin(Builtin::ThreadIdx(_)) => true,
            ExprKind::Var(v) => threaded.contains(v),
            ExprKind::Call(f, _) => f.is_warp(),
            _ => false,
        }
    });
    d
}

/// Whether kernel `k` reads builtin `b` anywhere.
pub fn uses(k: &Kernel, b: Builtin) -> bool {
    let mut found = false;
    visit_exprs(&k.body, &mut |e| found |= e.kind == ExprKind::Builtin(b));
    found
}

/// `len` elements of random data for array `arr`, as test launches fill
/// them: floating-point values in [-2, 2], integers in [0, 9] (an array of
/// structs with an integer field: every field in [0, 9], so that integer
/// fields used as indices are not negative).
pub fn random_array(arr: &Array, len: u64, seed: u64) -> ArraySpec {
    let (min, max) = if arr.layout.types.iter().all(|t| t.is_float()) {
        (-2.0, 2.0)
    } else {
        (0.0, 9.0)
    };
    ArraySpec {
        len,
        len_expr: None,
        init: InitKind::Random,
        seed,
        min,
        max,
        value: 0.0,
        values: Vec::new(),
        fields: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::parse::parse_source;
    use crate::ir::lower::lower_kernel;
    use crate::source::SourceFile;

    fn kernel(src: &str) -> Kernel {
        let file = parse_source(SourceFile::new("k.cu", src));
        lower_kernel(&file, "k").expect("lowers")
    }

    fn names(k: &Kernel, vars: &BTreeSet<VarId>) -> Vec<String> {
        vars.iter().map(|&v| k.vars[v].name.clone()).collect()
    }

    /// A scalar that only bounds loops every thread runs alike is a trip
    /// count; one compared with a thread's index, directly or through a
    /// variable, is an extent of the threads.
    #[test]
    fn trip_counts_are_scalars_of_uniform_loops_only() {
        let rows = kernel(
            "__global__ void k(int *A, int *B, int w, int h) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  for (int j = 0; j < h; j += 2) { B[j * w + i] += A[i]; }\n}\n",
        );
        assert_eq!(names(&rows, &trip_counts(&rows)), ["h"]);
        let guarded = kernel(
            "__global__ void k(float *a, int n, int m) {\n  int row = blockIdx.x * blockDim.x + threadIdx.x;\n  if (row < n) { for (int c = 0; c < m; c++) a[row * m + c] += 1.0f; }\n  for (int c = 0; c < n; c++) a[c] += 1.0f;\n}\n",
        );
        assert_eq!(names(&guarded, &trip_counts(&guarded)), ["m"]);
        let strided = kernel(
            "__global__ void k(float *a, int n) {\n  int t = threadIdx.x + blockIdx.x * blockDim.x;\n  int s = t;\n  for (int i = s; i < n; i += blockDim.x * gridDim.x) a[i] = 0.0f;\n}\n",
        );
        assert!(trip_counts(&strided).is_empty());
        let atomic = kernel(
            "__global__ void k(int *c, float *a, int n) {\n  int slot = atomicAdd(c, 1);\n  for (int i = 0; i < n; i++) if (slot < n) a[slot] += 1.0f;\n}\n",
        );
        assert!(trip_counts(&atomic).is_empty());
    }

    /// On a large block, a trip count is small on every synthesized launch
    /// but the one of two tiles of one block, and extents still reach
    /// three blocks: the threads times the iterations of the largest
    /// launch grow with the block, not with its square.
    #[test]
    fn synthesized_trip_counts_do_not_grow_with_the_block_squared() {
        let rows = kernel(
            "__global__ void k(int *A, int *B, int w, int h) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  for (int j = 0; j < h; j += 2) { B[j * w + i] += A[i]; }\n}\n",
        );
        let launches = synthesized(&rows, crate::launch::block([1024, 1, 1]).unwrap());
        let work = |s: &LaunchSpec| {
            let threads: u64 = s.grid.iter().chain(&s.block).product();
            threads as f64 * s.args["h"]
        };
        let full: Vec<_> = launches
            .iter()
            .filter(|s| s.args["h"] > COUNT_CAP as f64)
            .collect();
        assert_eq!(full.len(), 1, "one launch covers two tiles of the block");
        assert_eq!((full[0].grid[0], full[0].args["h"]), (1, 1025.0));
        assert_eq!(
            launches.iter().map(|s| s.args["w"]).fold(0.0, f64::max),
            3072.0
        );
        let most = launches.iter().map(work).fold(0.0, f64::max);
        assert!(most <= 1024.0 * 1025.0, "{most}");
    }
}
