//! Every candidate is checked before it is offered: printed, spliced into
//! the file, re-parsed, lowered, and simulated against the original on
//! several launches — the parameter file's, variants with other data, fewer
//! blocks and a partial last block, or synthesized ones when there is no
//! parameter file. Every global array must end bit for bit the same, and
//! the candidate must not fail where the original does not.

use std::collections::BTreeMap;
use std::time::Instant;

use copper::cost::{Hardware, Metric};
use copper::cuda::ast::{BaseType, Function};
use copper::cuda::parse::{parse_source, ParsedFile};
use copper::cuda::rewrite::{edit_functions, rewrite_functions};
use copper::ir::lower::lower_kernel;
use copper::ir::{visit_exprs, Array, Builtin, ExprKind, Kernel, Param};
use copper::sim::params::{ArraySpec, InitKind, LaunchSpec};
use copper::sim::{inputs_from_spec, simulate_owned, SimOptions, SimResult};

/// Launches on which the original must be matched.
pub const MIN_LAUNCHES: usize = 3;

/// Most instructions a warp may execute in a check (original and candidate
/// alike).
const STEP_BUDGET: u64 = 5_000_000;

/// Checks candidates of one kernel against the original.
pub struct Checker {
    file: ParsedFile,
    /// Launches the original runs cleanly on, with its results.
    launches: Vec<Run>,
    /// How every simulation runs: hardware, metrics, step budget, race
    /// detection and the deadline (the search's time budget).
    options: SimOptions,
}

/// One simulation of a check: the launch, the point its bounds are
/// evaluated at (arguments and launch builtins) and the results.
pub struct Run {
    /// The launch.
    pub spec: LaunchSpec,
    /// Its bound point ([`copper::sim::Inputs::bound_point`]).
    pub at: BTreeMap<String, f64>,
    /// What the simulator reported.
    pub result: SimResult,
}

/// Why the original does not run on a test launch.
enum Fail {
    /// The launch does not fit the kernel.
    Setup(String),
    /// The simulation failed.
    Sim(copper::sim::SimError),
}

/// Most elements a synthesized array grows to.
const MAX_GROWN: u64 = 1 << 22;

/// Most instructions a warp of the original may execute on a synthesized
/// launch (a test launch is small; a kernel whose every thread loops over
/// the whole input is tested on the smaller launches).
const SYNTH_STEP_BUDGET: u64 = 300_000;

/// The original on `spec`, and its results. A synthesized launch
/// (`grow`) whose arrays are too short for the original's accesses is
/// retried with arrays four times longer, up to [`MAX_GROWN`] elements.
fn run_original(
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
        let inputs = inputs_from_spec(kernel, &spec).map_err(Fail::Setup)?;
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
/// ([`synthesized`]), its arrays grown as the checks grow them: `Ok`, or
/// why it does not run cleanly (the simulator's error; `None` when the
/// launch cannot be built).
pub fn runs_on_block(
    kernel: &Kernel,
    block: [u64; 3],
    deadline: Option<Instant>,
) -> Result<(), Option<copper::sim::SimError>> {
    let spec = synthesized(kernel, block).into_iter().next().ok_or(None)?;
    grown(kernel, spec, deadline).map(drop)
}

/// The synthesized launch `spec` with its arrays grown until the original
/// reads and writes in bounds, as the checks run it (races detected); the
/// simulator's error when it still does not run cleanly (`None` when the
/// launch cannot be built).
pub fn grown(
    kernel: &Kernel,
    spec: LaunchSpec,
    deadline: Option<Instant>,
) -> Result<LaunchSpec, Option<copper::sim::SimError>> {
    let options = SimOptions {
        step_budget: STEP_BUDGET,
        detect_races: true,
        deadline,
        ..SimOptions::default()
    };
    match run_original(kernel, spec, true, &options) {
        Ok(run) => Ok(run.spec),
        Err(Fail::Setup(_)) => Err(None),
        Err(Fail::Sim(e)) => Err(Some(e)),
    }
}

/// Threads times array elements: how much simulating a launch costs.
fn launch_work(spec: &LaunchSpec) -> u64 {
    let threads: u64 = spec.grid.iter().chain(&spec.block).product();
    let elements: u64 = spec.arrays.values().map(|a| a.len).sum();
    threads.saturating_add(elements)
}

/// Longest array cut in the tight launch: longer ones stay as they are.
const MAX_TIGHTENED: u64 = 1 << 20;

/// The launch of `run` with each array cut to the elements the original
/// accessed there ([`SimResult::extents`]), and the original's results on
/// it; `None` when it then does not run cleanly. A kernel cannot see an
/// array's length, and random data of one seed agree on their common
/// prefix, so the original runs the same on the cut arrays, and on no
/// shorter ones: this is the launch a binary search over each length
/// would find, for one simulation.
fn tight(kernel: &Kernel, run: &Run, options: &SimOptions) -> Option<Run> {
    let mut spec = run.spec.clone();
    for ((name, _), &extent) in run.result.arrays.iter().zip(&run.result.extents) {
        if let Some(a) = spec.arrays.get_mut(name) {
            if a.len <= MAX_TIGHTENED {
                a.len = extent.min(a.len);
                a.len_expr = None;
            }
        }
    }
    let inputs = inputs_from_spec(kernel, &spec).ok()?;
    let at = inputs.bound_point();
    let result = simulate_owned(kernel, inputs, options).ok()?;
    Some(Run { spec, at, result })
}

impl Checker {
    /// Prepares the launches for kernel `name` of `file`: variants of
    /// `base` (the parameter file's launch) when given, else synthesized
    /// ones with block `block` (64 threads when unknown). Fails when fewer
    /// than [`MIN_LAUNCHES`] launches run cleanly on the original. Every
    /// simulation, here and in later checks, stops at `deadline`, and
    /// measures the built-in metrics on the default hardware.
    pub fn new(
        file: &ParsedFile,
        name: &str,
        base: Option<&LaunchSpec>,
        block: Option<[u64; 3]>,
        deadline: Option<Instant>,
    ) -> Result<Checker, String> {
        let defaults = SimOptions::default();
        Checker::measuring(
            file,
            name,
            base,
            block,
            deadline,
            defaults.hw,
            defaults.metrics,
        )
    }

    /// Like [`Checker::new`], with every simulation measuring `metrics` on
    /// hardware `hw` (what the caller's bounds are for, so that they can be
    /// compared with every run: [`Checker::runs`], [`Checker::check_kernel`]).
    pub fn measuring(
        file: &ParsedFile,
        name: &str,
        base: Option<&LaunchSpec>,
        block: Option<[u64; 3]>,
        deadline: Option<Instant>,
        hw: Hardware,
        metrics: Vec<Metric>,
    ) -> Result<Checker, String> {
        let options = SimOptions {
            hw,
            metrics,
            step_budget: STEP_BUDGET,
            detect_races: true,
            deadline,
            ..SimOptions::default()
        };
        let kernel = lower_kernel(file, name).map_err(|d| d.message.clone())?;
        let specs = match base {
            Some(b) => variants(b),
            None => synthesized(&kernel, block.unwrap_or([64, 1, 1])),
        };
        let mut launches = Vec::new();
        let mut first_error = None;
        for spec in specs {
            match run_original(&kernel, spec, base.is_none(), &options) {
                Ok(l) => launches.push(l),
                // Synthesized launches grow: the next ones would exhaust
                // the budget too.
                Err(Fail::Sim(e)) if base.is_none() && e.message.starts_with("step budget") => {
                    let (line, _) = file.source.line_col(e.span.start);
                    first_error.get_or_insert(format!(
                        "it runs more than {SYNTH_STEP_BUDGET} instructions per warp (at line {line}) on the larger test launches"
                    ));
                    break;
                }
                Err(e) => {
                    first_error.get_or_insert(match e {
                        Fail::Setup(m) => m,
                        Fail::Sim(e) => {
                            let (line, _) = file.source.line_col(e.span.start);
                            let how = if e.message.starts_with("data race") {
                                "races"
                            } else {
                                "fails"
                            };
                            format!("it {how} at line {line}: {}", e.message)
                        }
                    });
                }
            }
        }
        if launches.len() < MIN_LAUNCHES {
            let why = first_error.unwrap_or_else(|| "no launch was built".into());
            return Err(format!(
                "the original kernel cannot be checked: {why} (only {} of the test launches run cleanly; {MIN_LAUNCHES} are needed)",
                launches.len()
            ));
        }
        // Arrays as short as the original allows: a candidate that reads
        // an element the original never reads fails there, out of bounds,
        // where longer test arrays would hide it.
        let smallest = launches.iter().min_by_key(|r| launch_work(&r.spec));
        if let Some(t) = smallest.and_then(|run| tight(&kernel, run, &options)) {
            launches.push(t);
        }
        Ok(Checker {
            file: file.clone(),
            launches,
            options,
        })
    }

    /// How many launches a candidate must match.
    pub fn launches(&self) -> usize {
        self.launches.len()
    }

    /// The candidate as it would be in the file, re-parsed and lowered;
    /// then simulated on every launch and compared with the original.
    pub fn check(&self, candidate: &Function) -> Result<(), String> {
        let (_, kernel) = materialize(&self.file, candidate)?;
        self.check_kernel(&kernel).map(drop)
    }

    /// The original's runs on the launches a candidate must match.
    pub fn runs(&self) -> &[Run] {
        &self.launches
    }

    /// Simulates a candidate kernel (lowered from the file with the
    /// candidate in it, see [`materialize`]) on every launch and compares
    /// the final global arrays with the original's, bit for bit. Returns
    /// the candidate's runs, in the order of [`Checker::runs`].
    pub fn check_kernel(&self, kernel: &Kernel) -> Result<Vec<Run>, String> {
        let mut runs = Vec::new();
        for (
            i,
            Run {
                spec, result: want, ..
            },
        ) in self.launches.iter().enumerate()
        {
            let inputs = inputs_from_spec(kernel, spec)
                .map_err(|e| format!("launch {i}: the candidate's parameters differ: {e}"))?;
            let at = inputs.bound_point();
            let got = simulate_owned(kernel, inputs, &self.options)
                .map_err(|e| format!("launch {i}: the candidate fails: {}", e.message))?;
            if got.arrays != want.arrays {
                let which = got
                    .arrays
                    .iter()
                    .zip(&want.arrays)
                    .find(|(g, w)| g != w)
                    .map_or_else(|| "an array".to_string(), |(g, _)| format!("`{}`", g.0));
                return Err(format!(
                    "launch {i} ({} blocks of {}): {which} differs from the original's",
                    spec.grid.iter().product::<u64>(),
                    spec.block.iter().product::<u64>()
                ));
            }
            runs.push(Run {
                spec: spec.clone(),
                at,
                result: got,
            });
        }
        Ok(runs)
    }

    /// The launches a candidate must match.
    pub fn launch_specs(&self) -> impl Iterator<Item = &LaunchSpec> {
        self.launches.iter().map(|r| &r.spec)
    }
}

/// A candidate kernel as it would be in the file: printed, spliced in,
/// re-parsed (it must parse back to the same AST), and lowered.
pub fn materialize(
    file: &ParsedFile,
    candidate: &Function,
) -> Result<(ParsedFile, Kernel), String> {
    let changed = std::slice::from_ref(candidate);
    // As an edit of the file's text (what the user will get); where that
    // does not give back the candidate, the kernel reprinted whole.
    let edited = parse_source(file.source.with_text(edit_functions(file, changed)?));
    let reparsed = if edited.function(&candidate.name) == Some(candidate) {
        edited
    } else {
        parse_source(file.source.with_text(rewrite_functions(file, changed)))
    };
    let Some(f) = reparsed.function(&candidate.name) else {
        let why = reparsed
            .all_diagnostics()
            .first()
            .map(|d| d.message.clone())
            .unwrap_or_else(|| "it is missing".into());
        return Err(format!("the printed candidate does not parse: {why}"));
    };
    if f != candidate {
        return Err("the printed candidate parses to a different kernel".into());
    }
    let kernel = lower_kernel(&reparsed, &candidate.name)
        .map_err(|d| format!("the candidate does not lower: {}", d.message))?;
    Ok((reparsed, kernel))
}

/// The parameter file's launch, then: other data (twice); fewer blocks
/// with every integer argument and define cut to leave a partial last
/// block; a third of every argument and define; a block more; fewer blocks
/// over the same sizes.
fn variants(base: &LaunchSpec) -> Vec<LaunchSpec> {
    let mut out = vec![base.clone()];
    for round in 1..=2u64 {
        let mut reseeded = base.clone();
        for (i, a) in reseeded.arrays.values_mut().enumerate() {
            if a.init == InitKind::Random {
                a.seed = a.seed.wrapping_mul(31 * round).wrapping_add(17 + i as u64);
            }
        }
        out.push(reseeded);
    }
    let block: u64 = base.block.iter().product();
    let mut partial = base.clone();
    if let Some(g) = partial.grid.first_mut() {
        *g = (*g).div_ceil(2).max(1);
    }
    for v in partial
        .args
        .values_mut()
        .chain(partial.defines.values_mut())
    {
        if v.fract() == 0.0 && *v > 2.0 {
            // Not a multiple of the block: the last block is partial.
            let cut = (*v - (block / 2) as f64 - 1.0).max(1.0);
            *v = if (cut as u64).is_multiple_of(block.max(1)) {
                cut - 1.0
            } else {
                cut
            }
            .max(1.0);
        }
    }
    out.push(partial);
    let mut smaller = base.clone();
    for v in smaller
        .args
        .values_mut()
        .chain(smaller.defines.values_mut())
    {
        if v.fract() == 0.0 && *v > 3.0 {
            *v = (*v / 3.0).floor().max(1.0);
        }
    }
    out.push(smaller);
    let mut more = base.clone();
    if let Some(g) = more.grid.first_mut() {
        *g += 1;
    }
    out.push(more);
    let mut fewer = base.clone();
    for g in &mut fewer.grid {
        *g = (*g).div_ceil(2);
    }
    if fewer.grid != base.grid {
        out.push(fewer);
    }
    out
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

/// Whether a type is one the transforms can copy element by element.
pub fn copyable(base: &BaseType) -> bool {
    !matches!(base, BaseType::Void | BaseType::Named(_))
}

#[cfg(test)]
mod tests {
    use super::*;
    use copper::cuda::ast::{ExprKind, StmtKind};

    fn file(src: &str) -> ParsedFile {
        parse_source(copper::source::SourceFile::new("t.cu", src))
    }

    const SRC: &str = "__global__ void k(int *a, int *b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) { b[i] = a[i] + 1; } }";

    #[test]
    fn an_equivalent_rewrite_passes_and_a_wrong_one_fails() {
        let f = file(SRC);
        let c = Checker::new(&f, "k", None, Some([32, 1, 1]), None).unwrap();
        assert!(c.launches() >= MIN_LAUNCHES);
        let original = f.function("k").unwrap().clone();
        assert_eq!(c.check(&original), Ok(()));
        // `+ 1` → `+ 2`: every launch notices.
        let mut wrong = original.clone();
        let StmtKind::If { then, .. } = &mut wrong.body[1].kind else {
            panic!()
        };
        let StmtKind::Block(b) = &mut then.kind else {
            panic!()
        };
        let StmtKind::Expr(e) = &mut b[0].kind else {
            panic!()
        };
        let ExprKind::Assign(_, _, rhs) = &mut e.kind else {
            panic!()
        };
        let ExprKind::Binary(_, _, one) = &mut rhs.kind else {
            panic!()
        };
        one.kind = ExprKind::Int {
            value: 2,
            text: "2".into(),
        };
        let err = c.check(&wrong).unwrap_err();
        assert!(err.contains("`b` differs"), "{err}");
    }

    /// The last launch has the arrays of the smallest one cut to what the
    /// original accessed: `a` and `b` to `n` elements (the guard stops
    /// the threads past `n`), so one more element read fails there.
    #[test]
    fn the_tight_launch_cuts_arrays_to_the_accessed_elements() {
        let f = file(SRC);
        let c = Checker::new(&f, "k", None, Some([32, 1, 1]), None).unwrap();
        let last = c.runs().last().unwrap();
        let n = last.spec.args["n"] as u64;
        assert!(n < 32 * last.spec.grid[0], "the last block is partial");
        for name in ["a", "b"] {
            assert_eq!(last.spec.arrays[name].len, n, "{name}");
        }
        assert_eq!(last.result.extents, vec![n, n]);
        // A candidate reading one element past the original fails.
        let past = file(&SRC.replace("a[i] + 1", "a[i] + a[i + 1] - a[i + 1] + 1"));
        let (_, k) = materialize(&f, past.function("k").unwrap()).unwrap();
        let err = c.check_kernel(&k).err().expect("the candidate fails");
        assert!(err.contains("out-of-bounds"), "{err}");
    }
}
