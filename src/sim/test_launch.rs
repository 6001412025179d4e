//! Test launches: the original kernel run on a launch, and launches
//! synthesized for a kernel without a parameter file, their arrays grown
//! until the original reads and writes in bounds. The rewrite checker
//! (`copper_transforms::check`), the launch planner and the race search of
//! the lint run kernels on them.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::ir::{visit_exprs, Array, Builtin, ExprKind, Kernel, Param};
use crate::sim::params::{ArraySpec, InitKind, LaunchSpec};
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
/// retried with arrays four times longer, up to [`MAX_GROWN`] elements.
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
    loop {
        let inputs = inputs_from_spec(kernel, &spec).map_err(|e| Fail::Setup(e.to_string()))?;
        let at = inputs.bound_point();
        match simulate_owned(kernel, inputs, &opts) {
            Ok(result) => return Ok(Run { spec, at, result }),
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

/// Runs the original on the smallest launch synthesized around `block`
/// ([`synthesized`]), its arrays grown as the checks grow them, each run
/// of it stopping after `max_steps` instructions (or at `deadline`): `Ok`,
/// or why it does not run cleanly (the simulator's error; `None` when the
/// launch cannot be built).
pub fn runs_on_block(
    kernel: &Kernel,
    block: [u64; 3],
    max_steps: u64,
    deadline: Option<Instant>,
) -> Result<(), Option<crate::sim::SimError>> {
    let spec = synthesized(kernel, block).into_iter().next().ok_or(None)?;
    grown(kernel, spec, max_steps, deadline).map(drop)
}

/// The synthesized launch `spec` with its arrays grown until the original
/// reads and writes in bounds, as the checks run it (races detected); the
/// simulator's error when it still does not run cleanly (`None` when the
/// launch cannot be built). Each run stops after `max_steps` instructions
/// ([`SimOptions::max_steps`]) or at the safety net `deadline`.
pub fn grown(
    kernel: &Kernel,
    spec: LaunchSpec,
    max_steps: u64,
    deadline: Option<Instant>,
) -> Result<LaunchSpec, Option<crate::sim::SimError>> {
    let options = SimOptions {
        step_budget: STEP_BUDGET,
        detect_races: true,
        max_steps: Some(max_steps),
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
pub fn synthesized(k: &Kernel, block: [u64; 3]) -> Vec<LaunchSpec> {
    let threads: u64 = block.iter().product();
    let two_d = block[1] > 1 || uses(k, Builtin::BlockIdx(1));
    // Sizes are counted in the unit one block covers along x.
    let unit = if two_d { block[0] } else { threads };
    // `extern __shared__` memory: 8 bytes per thread (a `double` each).
    let dynamic_shared = k.arrays.iter().any(|a| a.is_shared() && a.dims.is_empty());
    let mut out = Vec::new();
    // Sizes around the block: a partial last block, several full blocks,
    // small odd sizes. Launches the original cannot run cleanly are dropped
    // by the caller.
    // Smallest first: the caller stops at the first launch too long to run.
    for (g, size) in [
        (2u64, 5),
        (1, 17),
        (1, unit / 2 + 3),
        (1, unit + 1),
        (2, 2 * unit - unit / 2 - 1),
        (3, 3 * unit),
    ] {
        let grid = if two_d { [g, g, 1] } else { [g, 1, 1] };
        let blocks: u64 = grid.iter().product();
        let mut args = BTreeMap::new();
        let mut arrays = BTreeMap::new();
        for v in k.scalar_params() {
            let var = &k.vars[v];
            let x = if var.ty.is_float() {
                1.5
            } else {
                size.max(1) as f64
            };
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
            .map(|&v| (k.vars[v].name.clone(), size.max(1) as f64))
            .collect();
        out.push(LaunchSpec {
            grid: grid.to_vec(),
            block: block.to_vec(),
            shared_bytes: if dynamic_shared { 8 * threads } else { 0 },
            args,
            arrays,
            defines,
        });
    }
    out
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
