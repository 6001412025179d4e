//! The lock-step simulator (evaluation mode, RaCUDA §7): runs a whole
//! launch under the cost semantics and reports the cost of every warp under
//! every metric, per-site transaction and conflict counts, and the final
//! contents of global arrays. It is the oracle the analysis and the
//! rewrites are tested against.

mod blocks;
pub mod code;
pub mod exec;
mod fill;
pub mod footprint;
mod order;
pub mod params;
pub mod scale;
pub mod size_expr;
pub mod test_launch;
pub mod work;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::cost::{Counts, Hardware, Metric};
use crate::cuda::ast::Space;
use crate::ir::{Kernel, Param, Scalar, Value};
use crate::launch::{Shape, ShapeError};
use blocks::{add_by_statement, sampled_blocks};
use exec::{GlobalArray, LaunchCtx, Races, Storage};
pub use exec::{SimError, SiteStats};
use fill::fill_array;
pub use fill::{fill, fill_typed, fill_value};
use order::{run_blocks, Order, Snapshot};
use params::LaunchSpec;

/// Why a launch cannot be built or simulated from its description.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The launch shape is refused.
    #[error(transparent)]
    Shape(#[from] ShapeError),
    /// More threads than copper simulates.
    #[error("the launch has {0} threads; copper simulates at most {MAX_THREADS} (give fewer blocks: costs per warp do not depend on their number)")]
    TooManyThreads(u64),
    /// More array components in all than copper simulates.
    #[error("the arrays hold {0} values (each struct or vector element counts its components); copper simulates at most {MAX_ELEMENTS} in one launch")]
    TooManyElements(u64),
    /// One array longer than copper simulates.
    #[error("array length {0} is more than copper simulates ({MAX_ELEMENTS})")]
    ArrayTooLong(u64),
    /// A scalar parameter the parameter file gives no value.
    #[error("the parameter file gives no value for argument `{arg}` of `{kernel}` (add it under [kernel.{}.args])", params::kernel_key(kernel))]
    MissingArgument {
        /// The parameter.
        arg: String,
        /// The kernel.
        kernel: String,
    },
    /// A fractional value for an integer parameter.
    #[error("argument `{arg}` is an integer ({ty}) but the parameter file gives {value}")]
    NonIntegerArgument {
        /// The parameter.
        arg: String,
        /// Its C type.
        ty: &'static str,
        /// The value given.
        value: f64,
    },
    /// A value outside the parameter's type.
    #[error("argument `{arg}` is {value}, out of the range of its type ({ty})")]
    ArgumentOutOfRange {
        /// The parameter.
        arg: String,
        /// Its C type.
        ty: &'static str,
        /// The value given.
        value: f64,
    },
    /// An array parameter the parameter file does not describe.
    #[error("the parameter file describes no array `{array}` for `{kernel}` (add [kernel.{}.arrays.{array}] with `len`)", params::kernel_key(kernel))]
    MissingArray {
        /// The array.
        array: String,
        /// The kernel.
        kernel: String,
    },
    /// An identifier used without definition and without a value.
    #[error("`{name}` is not defined in the file: pass -D{name}=… or give its value under [kernel.{kernel}.defines]")]
    UndefinedSymbol {
        /// The identifier.
        name: String,
        /// The kernel.
        kernel: String,
    },
    /// A value for an undefined identifier that is no `int`.
    #[error("`{name}` is {value} in [kernel.{kernel}.defines]; an undefined identifier stands for an `int`")]
    SymbolNotInt {
        /// The identifier.
        name: String,
        /// The value given.
        value: f64,
        /// The kernel.
        kernel: String,
    },
    /// A value under `args` for a name that is no scalar parameter.
    #[error("`{name}` is not a scalar parameter of `{kernel}`")]
    UnknownArgument {
        /// The name.
        name: String,
        /// The kernel.
        kernel: String,
    },
    /// A field fill naming no field of the array's elements.
    #[error("array `{array}` has no field `{field}` (its components: {components})")]
    NoField {
        /// The array.
        array: String,
        /// The field named.
        field: String,
        /// The element's components, listed.
        components: String,
    },
    /// `init = "values"` with no values.
    #[error("`init = \"values\"` needs a non-empty `values` list")]
    NoValues,
    /// `init = "random"` with `min > max`.
    #[error("random range is empty (min {min} > max {max})")]
    EmptyRange {
        /// `min`
        min: f64,
        /// `max`
        max: f64,
    },
}

error_message!(InputError);

/// Default most instructions a warp may execute before the simulator
/// declares the kernel non-terminating.
pub const DEFAULT_STEP_BUDGET: u64 = 10_000_000;

/// How the error of a launch stopped by [`SimOptions::max_steps`] begins.
pub const WORK_LIMIT: &str = "the simulation stopped after";

/// The error of a launch stopped by [`SimOptions::deadline`].
pub const WALL_CLOCK: &str =
    "the simulation stopped at the wall-clock limit; results may differ on a faster machine";

/// The error message of a launch stopped by its work limit of `limit`
/// work units ([`SimOptions::max_steps`], [`SimOptions::work`]).
/// The error of a launch stopped by its work limit `limit` at `block`.
fn over_limit(kernel: &Kernel, limit: u64, block: [u64; 3]) -> SimError {
    SimError {
        message: work_limit_message(limit),
        span: kernel.span,
        block,
        thread: [0; 3],
        race: false,
    }
}

pub fn work_limit_message(limit: u64) -> String {
    format!("{WORK_LIMIT} {limit} work units (instructions and memory accesses, all warps together), its work limit")
}

/// Blocks run (in parallel where they may be) between two checks of
/// [`SimOptions::max_steps`]: a fixed number, so that where a launch stops
/// depends on no thread count.
pub const LIMIT_CHUNK: usize = 64;

/// Most array elements one simulated launch may hold, all arrays together
/// (8 bytes each: 256 MiB, and the final contents again, and their JSON
/// with `simulate --dump`); larger launches are refused before anything
/// is allocated.
pub const MAX_ELEMENTS: u64 = 1 << 25;

/// Most threads one simulated launch may have (blocks times block size);
/// costs per warp do not need more blocks.
pub const MAX_THREADS: u64 = 1 << 26;

/// The contents of an array: the scalar type of each component of an
/// element, and one bit pattern per component (8 bytes each, so large
/// launches stay affordable). A scalar array has one type; an array of
/// structs stores its components in memory order (`a[0].x, a[0].y, …,
/// a[1].x, …`), component `k` of every element of type `types[k]`.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayData {
    /// Type of each component of an element.
    pub types: Vec<Scalar>,
    /// Bit patterns ([`Value::to_bits`]).
    pub bits: Vec<u64>,
}

impl ArrayData {
    /// A scalar array holding `values`, converted to `elem`.
    pub fn from_values(elem: Scalar, values: impl IntoIterator<Item = Value>) -> ArrayData {
        ArrayData {
            types: vec![elem],
            bits: values
                .into_iter()
                .map(|v| v.convert(elem).to_bits())
                .collect(),
        }
    }

    /// The type of stored value `i`.
    pub fn type_at(&self, i: usize) -> Scalar {
        self.types[i % self.types.len()]
    }

    /// Stored value `i` (component `i % types.len()` of an element).
    pub fn get(&self, i: usize) -> Value {
        Value::from_bits(self.bits[i], self.type_at(i))
    }

    /// Number of stored values (elements times components).
    pub fn len(&self) -> usize {
        self.bits.len()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }

    /// The stored values, in memory order.
    pub fn values(&self) -> impl Iterator<Item = Value> + '_ {
        (0..self.bits.len()).map(|i| self.get(i))
    }
}

/// Concrete inputs of a launch.
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    /// Launch shape.
    pub shape: Shape,
    /// Scalar argument values by parameter name, and the values of the
    /// kernel's symbols by name.
    pub scalars: BTreeMap<String, Value>,
    /// Initial array contents by name (pointer parameters and any
    /// `__constant__`/`__device__` global the file overrides).
    pub arrays: BTreeMap<String, ArrayData>,
    /// Bytes of dynamic shared memory.
    pub shared_bytes: u64,
}

impl Inputs {
    /// The point a bound is evaluated at for this launch: the scalar
    /// arguments by name, `gridDim.x` … and `blockDim.x` ….
    pub fn bound_point(&self) -> BTreeMap<String, f64> {
        let mut at: BTreeMap<String, f64> = self
            .scalars
            .iter()
            .map(|(k, x)| (k.clone(), x.as_f64()))
            .collect();
        for (d, n) in ["x", "y", "z"].iter().enumerate() {
            at.insert(format!("gridDim.{n}"), self.shape.grid()[d] as f64);
            at.insert(format!("blockDim.{n}"), self.shape.block()[d] as f64);
        }
        at
    }
}

/// How to simulate.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// Hardware model.
    pub hw: Hardware,
    /// Metrics to report.
    pub metrics: Vec<Metric>,
    /// Most instructions per warp.
    pub step_budget: u64,
    /// Fail on a race between blocks (one block writing a global element
    /// another block reads or writes), which makes results depend on the
    /// order blocks run in; a write that leaves the element unchanged (every
    /// writer writing the same value) is not one. Costs an atomic update per
    /// global access, and blocks run one after another.
    pub detect_races: bool,
    /// Simulate at most this many blocks of the grid (the first, the last
    /// and evenly spaced ones between), for launches too large to run
    /// whole; `None` runs every block. Per-warp costs of the blocks run
    /// are exact; totals cover only them.
    pub sample_blocks: Option<u64>,
    /// Most work units of all warps of the launch together
    /// ([`SimResult::work`]), a deterministic work limit: past it the launch stops with an error
    /// that says so ([`WORK_LIMIT`]), the same on every machine. Blocks are
    /// counted in launch order, checked after each block where blocks run
    /// one after another and after each [`LIMIT_CHUNK`] where they run in
    /// parallel, so the block named is the same too; a block is stopped
    /// inside once it passes its share of what is left (all of it where
    /// blocks run one after another, an equal part for each block of a
    /// parallel chunk). `None` runs until the step budget.
    pub max_steps: Option<u64>,
    /// An allowance this launch shares with others ([`work::Work`]): the
    /// launch is charged the array values it is given, then may run what
    /// is left of it (and no more than `max_steps`), and is charged what
    /// it ran.
    pub work: Option<Arc<work::Work>>,
    /// Last-resort wall-clock safety net: stop with an error once this
    /// instant has passed ([`WALL_CLOCK`]); unlike `max_steps`, what it
    /// cuts depends on the machine. `None`: no clock is read.
    pub deadline: Option<std::time::Instant>,
    /// Run each warp as two halves, lanes 0–15 up to the next barrier and
    /// then lanes 16–31, instead of in lock step: an adversarial schedule
    /// CUDA allows (Volta and later give no lock step without
    /// `__syncwarp`), under which code that exchanges values between the
    /// lanes of a warp through memory without a barrier computes
    /// something else. Kernels that are [`Kernel::lockstep_only`] run in
    /// lock step anyway. Costs are then not those of the model.
    pub split_warps: bool,
}

impl Default for SimOptions {
    fn default() -> SimOptions {
        SimOptions {
            hw: Hardware::default(),
            metrics: crate::cost::BUILTIN_METRICS
                .iter()
                .filter_map(|m| Metric::builtin(m))
                .collect(),
            step_budget: DEFAULT_STEP_BUDGET,
            detect_races: false,
            sample_blocks: None,
            max_steps: None,
            work: None,
            deadline: None,
            split_warps: false,
        }
    }
}

/// Cost of a launch under one metric.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MetricResult {
    /// Metric name.
    pub metric: String,
    /// Largest lock-step cost of one warp (what a per-warp bound covers).
    pub max_warp: f64,
    /// Sum over all warps.
    pub total: f64,
    /// Largest work of one block (sum over its warps).
    pub max_block_work: f64,
    /// Largest span of one block (RaCUDA Fig. 6).
    pub max_block_span: f64,
}

/// Everything a simulation reports.
#[derive(Clone, Debug, PartialEq)]
pub struct SimResult {
    /// Per metric.
    pub metrics: Vec<MetricResult>,
    /// Per access site (indexed like `Kernel::sites`).
    pub sites: Vec<SiteStats>,
    /// Final contents of the global arrays that are parameters, in
    /// parameter order.
    pub arrays: Vec<(String, ArrayData)>,
    /// For each array of `arrays`: one past the largest element index the
    /// launch accessed (0 when none): the fewest elements it runs on.
    pub extents: Vec<u64>,
    /// Blocks simulated.
    pub blocks: u64,
    /// Warps simulated.
    pub warps: u64,
    /// Warp-instructions executed.
    pub instructions: u64,
    /// Work units charged ([`crate::sim::work`]): the instructions, and
    /// the lanes' global and shared accesses
    /// ([`exec::ACCESS_LANES_PER_UNIT`]); what [`SimOptions::max_steps`]
    /// and [`SimOptions::work`] count.
    pub work: u64,
}

/// Refuses to simulate more than [`MAX_THREADS`] threads: the blocks of
/// the launch `shape` that run (all, or `sample` of them).
pub fn check_threads(shape: &Shape, sample: Option<u64>) -> Result<(), InputError> {
    let blocks = shape.blocks();
    let run = sample.map_or(blocks, |k| k.max(2).min(blocks));
    let threads = run.saturating_mul(shape.block_threads());
    if threads > MAX_THREADS {
        return Err(InputError::TooManyThreads(threads));
    }
    Ok(())
}

/// Refuses arrays of more than [`MAX_ELEMENTS`] components in all: the
/// simulator stores one value per component, so an element of a struct or
/// vector array counts its components (a `float4` four).
fn check_size(kernel: &Kernel, spec: &LaunchSpec) -> Result<(), InputError> {
    let components = |name: &str| {
        kernel
            .arrays
            .iter()
            .find(|a| a.name == name)
            .map_or(1, |a| a.layout.slots() as u64)
    };
    let total = spec.arrays.iter().fold(0u64, |n, (name, a)| {
        n.saturating_add(a.len.saturating_mul(components(name)))
    });
    if total > MAX_ELEMENTS {
        return Err(InputError::TooManyElements(total));
    }
    Ok(())
}

/// Builds inputs from a parameter-file launch for `kernel`.
pub fn inputs_from_spec(kernel: &Kernel, spec: &LaunchSpec) -> Result<Inputs, InputError> {
    let shape = spec.shape()?;
    check_size(kernel, spec)?;
    let mut scalars = BTreeMap::new();
    let mut arrays = BTreeMap::new();
    for v in kernel.scalar_params() {
        let var = &kernel.vars[v];
        let Some(x) = spec.args.get(&var.name) else {
            return Err(InputError::MissingArgument {
                arg: var.name.clone(),
                kernel: kernel.name.clone(),
            });
        };
        if !var.ty.is_float() && x.fract() != 0.0 {
            return Err(InputError::NonIntegerArgument {
                arg: var.name.clone(),
                ty: var.ty.c_name(),
                value: *x,
            });
        }
        let value = Value::F(*x).convert(var.ty);
        if !var.ty.is_float() && value.as_f64() != *x {
            return Err(InputError::ArgumentOutOfRange {
                arg: var.name.clone(),
                ty: var.ty.c_name(),
                value: *x,
            });
        }
        scalars.insert(var.name.clone(), value);
    }
    for p in &kernel.params {
        if let Param::Array(a) = p {
            let arr = &kernel.arrays[*a];
            let Some(s) = spec.arrays.get(&arr.name) else {
                return Err(InputError::MissingArray {
                    array: arr.name.clone(),
                    kernel: kernel.name.clone(),
                });
            };
            arrays.insert(arr.name.clone(), fill_array(s, arr)?);
        }
    }
    for &v in &kernel.symbols {
        let name = &kernel.vars[v].name;
        let Some(x) = spec.defines.get(name) else {
            return Err(InputError::UndefinedSymbol {
                name: name.clone(),
                kernel: kernel.name.clone(),
            });
        };
        if x.fract() != 0.0 || *x < i32::MIN as f64 || *x > i32::MAX as f64 {
            return Err(InputError::SymbolNotInt {
                name: name.clone(),
                value: *x,
                kernel: kernel.name.clone(),
            });
        }
        scalars.insert(name.clone(), Value::I(*x as i64));
    }
    for a in kernel
        .arrays
        .iter()
        .filter(|a| a.param.is_none() && a.is_global())
    {
        if let Some(s) = spec.arrays.get(&a.name) {
            arrays.insert(a.name.clone(), fill_array(s, a)?);
        }
    }
    for name in spec.args.keys() {
        if !kernel.scalar_params().any(|v| &kernel.vars[v].name == name) {
            return Err(InputError::UnknownArgument {
                name: name.clone(),
                kernel: kernel.name.clone(),
            });
        }
    }
    Ok(Inputs {
        shape,
        scalars,
        arrays,
        shared_bytes: spec.shared_bytes,
    })
}

/// Simulates a launch of `kernel` on a copy of `inputs`.
pub fn simulate(
    kernel: &Kernel,
    inputs: &Inputs,
    opts: &SimOptions,
) -> Result<SimResult, SimError> {
    simulate_owned(kernel, inputs.clone(), opts)
}

/// Simulates a launch of `kernel`, using the input arrays' memory for the
/// launch (no copy: what large launches need).
pub fn simulate_owned(
    kernel: &Kernel,
    inputs: Inputs,
    opts: &SimOptions,
) -> Result<SimResult, SimError> {
    simulate_counting(kernel, inputs, opts, false).map(|(r, _)| r)
}

/// [`simulate`], also counting the costs of every statement, summed over
/// the warps of the launch: the counters charged while it ran, by the
/// start of its span, in source order.
pub fn simulate_by_statement(
    kernel: &Kernel,
    inputs: &Inputs,
    opts: &SimOptions,
) -> Result<(SimResult, Vec<(usize, Counts)>), SimError> {
    simulate_counting(kernel, inputs.clone(), opts, true)
}

fn simulate_counting(
    kernel: &Kernel,
    mut inputs: Inputs,
    opts: &SimOptions,
    by_statement: bool,
) -> Result<(SimResult, Vec<(usize, Counts)>), SimError> {
    let setup_error = |message: String| SimError {
        message,
        span: kernel.span,
        block: [0; 3],
        thread: [0; 3],
        race: false,
    };
    opts.hw.validate().map_err(|e| setup_error(e.to_string()))?;
    // A shared allowance is also charged one unit per array value the
    // launch is given: filling, copying and comparing large arrays costs
    // as much as running over them.
    if let Some(w) = &opts.work {
        w.charge(inputs.arrays.values().map(|a| a.len() as u64).sum());
    }
    // The launch's work limit: `max_steps`, and no more than is left of
    // a shared allowance.
    let limit = match (opts.max_steps, opts.work.as_ref().map(|w| w.left())) {
        (Some(m), Some(w)) => Some(m.min(w)),
        (m, w) => m.or(w),
    };
    if limit == Some(0) {
        return Err(over_limit(kernel, 0, [0; 3]));
    }
    check_threads(&inputs.shape, opts.sample_blocks).map_err(|e| setup_error(e.to_string()))?;
    footprint::check(kernel, &inputs).map_err(|e| SimError {
        span: e.span,
        ..setup_error(e.to_string())
    })?;
    let order = Order::of(kernel, opts.detect_races);
    let mut storage = Vec::new();
    let mut globals = Vec::new();
    let mut shared_lens = Vec::new();
    let mut local_lens = Vec::new();
    for (id, a) in kernel.arrays.iter().enumerate() {
        storage.push(match a.space {
            Space::Shared => {
                shared_lens.push(footprint::values_of(a, inputs.shared_bytes));
                Storage::Shared(shared_lens.len() - 1)
            }
            Space::Local => {
                local_lens.push(footprint::values_of(a, inputs.shared_bytes));
                Storage::Local(local_lens.len() - 1)
            }
            _ => {
                let data: Vec<AtomicU64> = match inputs.arrays.remove(&a.name) {
                    // Same size and alignment: collected in place.
                    Some(v) if v.types == a.layout.types => {
                        v.bits.into_iter().map(AtomicU64::new).collect()
                    }
                    Some(v) => v
                        .values()
                        .enumerate()
                        .map(|(i, x)| {
                            let ty = a.slot_type(i % a.layout.slots());
                            AtomicU64::new(x.convert(ty).to_bits())
                        })
                        .collect(),
                    None if a.param.is_some() => {
                        return Err(setup_error(format!(
                            "no contents given for array `{}`",
                            a.name
                        )))
                    }
                    None => {
                        let slots = a.layout.slots();
                        let len = footprint::values_of(a, inputs.shared_bytes) as usize;
                        (0..len)
                            .map(|i| {
                                let ty = a.slot_type(i % slots);
                                let v = a.init.get(i).copied().unwrap_or(Value::ZERO);
                                AtomicU64::new(v.convert(ty).to_bits())
                            })
                            .collect()
                    }
                };
                let touched = if opts.detect_races || order.tracks(id) {
                    (0..data.len()).map(|_| AtomicU64::new(0)).collect()
                } else {
                    Vec::new()
                };
                globals.push(GlobalArray {
                    types: a.layout.types.clone(),
                    data,
                    touched,
                });
                Storage::Global(globals.len() - 1)
            }
        });
    }
    let mut param_values = vec![0u64; kernel.vars.len()];
    for v in kernel.scalar_params().chain(kernel.symbols.iter().copied()) {
        let name = &kernel.vars[v].name;
        let value = inputs
            .scalars
            .get(name)
            .ok_or_else(|| setup_error(format!("no value for `{name}`")))?;
        param_values[v] = value.convert(kernel.vars[v].ty).to_bits();
    }
    let code = code::compile(kernel);
    let met = AtomicBool::new(false);
    let ctx = LaunchCtx {
        kernel,
        code: &code,
        hw: opts.hw,
        shape: inputs.shape,
        param_values: &param_values,
        storage: &storage,
        globals: &globals,
        shared_lens: &shared_lens,
        local_lens: &local_lens,
        step_budget: opts.step_budget,
        deadline: opts.deadline,
        detect_uninitialized: opts.detect_races,
        races: match order {
            _ if opts.detect_races => Races::Detect,
            Order::Parallel { .. } => Races::Record(&met),
            Order::Sequential => Races::Off,
        },
        split_warps: opts.split_warps && !kernel.lockstep_only(),
        by_statement,
        max_steps: limit,
    };
    let block_ids = sampled_blocks(inputs.shape.grid(), opts.sample_blocks);
    let ran = match order {
        Order::Sequential => run_blocks(&ctx, &block_ids, opts, limit, true),
        Order::Parallel { .. } => {
            let snapshot = Snapshot::of(&globals);
            let ran = run_blocks(&ctx, &block_ids, opts, limit, false);
            if met.load(Ordering::Relaxed) {
                // Blocks saw each other's work: again, in launch order.
                snapshot.restore(&globals);
                let ctx = LaunchCtx {
                    races: Races::Off,
                    ..ctx
                };
                run_blocks(&ctx, &block_ids, opts, limit, true)
            } else {
                ran
            }
        }
    };
    if let Some(w) = &opts.work {
        w.charge(ran.charged);
    }
    if let Some(e) = ran.error {
        return Err(e);
    }
    let mut metrics: Vec<MetricResult> = opts
        .metrics
        .iter()
        .map(|m| MetricResult {
            metric: m.name.clone(),
            max_warp: 0.0,
            total: 0.0,
            max_block_work: 0.0,
            max_block_span: 0.0,
        })
        .collect();
    let mut sites = vec![SiteStats::default(); kernel.sites.len()];
    let mut accessed = vec![0u64; kernel.arrays.len()];
    let (mut warps, mut instructions, mut work) = (0, 0, 0);
    let mut statements: BTreeMap<usize, Counts> = BTreeMap::new();
    for o in ran.outcomes.into_iter().flatten() {
        let o = o.map_err(|f| f.error)?;
        add_by_statement(&mut statements, o.by_statement);
        for (r, (max_warp, total, work, span)) in metrics.iter_mut().zip(o.per_metric) {
            r.max_warp = r.max_warp.max(max_warp);
            r.total += total;
            r.max_block_work = r.max_block_work.max(work);
            r.max_block_span = r.max_block_span.max(span);
        }
        for (s, b) in sites.iter_mut().zip(&o.sites) {
            s.merge(b);
        }
        for (e, b) in accessed.iter_mut().zip(&o.extents) {
            *e = (*e).max(*b);
        }
        warps += o.warps;
        instructions += o.instructions;
        work += o.work;
    }
    let mut globals: Vec<Option<GlobalArray>> = globals.into_iter().map(Some).collect();
    let (arrays, extents) = kernel
        .params
        .iter()
        .filter_map(|p| match p {
            Param::Array(a) => Some(*a),
            Param::Scalar(_) | Param::Record { .. } => None,
        })
        .filter_map(|a| {
            let Storage::Global(g) = storage[a] else {
                return None;
            };
            let arr = globals[g].take()?;
            let bits = arr.data.into_iter().map(AtomicU64::into_inner).collect();
            let data = ArrayData {
                types: arr.types,
                bits,
            };
            Some(((kernel.arrays[a].name.clone(), data), accessed[a]))
        })
        .unzip();
    let result = SimResult {
        metrics,
        sites,
        arrays,
        extents,
        blocks: block_ids.len() as u64,
        warps,
        instructions,
        work,
    };
    Ok((result, statements.into_iter().collect()))
}
