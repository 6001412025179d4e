//! Every candidate is checked before it is offered: printed, spliced into
//! the file, re-parsed, lowered, and simulated against the original on
//! several launches — the parameter file's, variants with other data, fewer
//! blocks and a partial last block, or synthesized ones when there is no
//! parameter file. Every global array must end bit for bit the same, and
//! the candidate must not fail where the original does not. Where the
//! original does not rely on the lanes of a warp running in lock step (its
//! results stay the same with each warp run as two halves one after the
//! other), the candidate must not either, on the launch with the largest
//! blocks.

use copper::launch::Dims;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use copper::cost::{Hardware, Metric};
use copper::cuda::ast::{type_key, BaseType, Function};
use copper::cuda::parse::{parse_source, ParsedFile};
use copper::cuda::relaunch::Reshape;
use copper::cuda::rewrite::{edit_functions, rewrite_functions};
use copper::ir::lower::lower_kernel;
use copper::ir::Kernel;
use copper::sim::params::{InitKind, LaunchSpec};
use copper::sim::test_launch::{
    run_original, synthesized, Fail, Run, LAUNCH_STEPS, STEP_BUDGET, SYNTH_STEP_BUDGET,
};
use copper::sim::work::Work;
use copper::sim::{inputs_from_spec, simulate_owned, ArrayData, InputError, SimOptions};

use crate::Candidate;

mod aliased;
mod tolerance;
pub use aliased::AliasedRuns;
pub use tolerance::{reassociation_tolerance, CHECKED_WITHIN};

/// A simulation's final global arrays, by name ([`copper::sim::SimResult::arrays`]).
type Arrays = Vec<(String, ArrayData)>;

/// Launches on which the original must be matched.
pub const MIN_LAUNCHES: usize = 3;

/// Most work units ([`copper::sim::work::Work`]: instructions, access
/// lanes and array values given) the original may use while a checker is built, every
/// test launch together (the reruns that grow a synthesized launch's
/// arrays, the tight launch and the split-warp run included): the
/// deterministic work limit of the original's share of a search.
pub const ORIGINAL_STEPS: u64 = 40_000_000;

/// A candidate's check may use this many times the work units
/// ([`copper::sim::work::Work`]) the original used while the checker was
/// built ([`CHECK_SLACK`] more), never more than [`ORIGINAL_STEPS`]: each
/// check's deterministic work limit, so that a search of many candidates
/// stays bounded too.
pub const CHECK_FACTOR: u64 = 4;

/// Most work units every candidate check of one checker (one kernel's
/// search) may use in all, [`Checker::check_kernel`] and
/// [`Checker::aliased`] together: two checks at the largest allowance
/// each. A search looks at it between its rounds
/// ([`Checker::checks_used`]), where the sum no longer depends on the
/// order in which a round's candidates were checked, so that where it
/// stops is the same on every machine.
pub const SEARCH_CHECK_STEPS: u64 = 2 * ORIGINAL_STEPS;

/// Work units every candidate's check may use beyond
/// [`CHECK_FACTOR`] times the original's.
pub const CHECK_SLACK: u64 = 1_000_000;

/// Why a kernel cannot be checked, or a candidate fails its check; each
/// message is the reason users see.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CheckError {
    /// The original kernel does not lower (its diagnostic's message).
    #[error("{0}")]
    NotLowered(String),
    /// Too few test launches run cleanly on the original.
    #[error("the original kernel cannot be checked: {why} (only {ran} of the test launches run cleanly; {MIN_LAUNCHES} are needed)")]
    Original {
        /// Why the first launch that failed did.
        why: String,
        /// How many ran cleanly.
        ran: usize,
    },
    /// The candidate cannot be written as an edit of the file (the
    /// printer's refusal).
    #[error(transparent)]
    Edit(#[from] copper::cuda::edit::EditRefused),
    /// The printed candidate does not parse.
    #[error("the printed candidate does not parse: {0}")]
    Unparsable(String),
    /// The printed candidate parses to another kernel.
    #[error("the printed candidate parses to a different kernel")]
    Reparsed,
    /// The candidate does not lower.
    #[error("the candidate does not lower: {0}")]
    NotLowerable(String),
    /// The candidate takes other parameters than a launch gives.
    #[error("launch {launch}: the candidate's parameters differ: {source}")]
    Parameters {
        /// The launch's index.
        launch: usize,
        /// Why the launch does not fit.
        source: InputError,
    },
    /// The candidate's simulation fails where the original's does not.
    #[error("launch {launch}: the candidate fails: {message}")]
    Fails {
        /// The launch's index.
        launch: usize,
        /// The simulator's message.
        message: String,
    },
    /// Too few test launches run as many threads as the rewrite assumes
    /// covered (`covers`).
    #[error("only {ran} of the test launches run at least `{threads}` threads, the elements the rewrite assumes covered")]
    TooFewCovering {
        /// How many do.
        ran: usize,
        /// The threads assumed.
        threads: String,
    },
    /// The candidate's results change when the halves of each warp run
    /// one after the other, where the original's do not.
    #[error("launch {launch}: {array} differs from the original's when the two halves of each warp run one after the other (the candidate relies on the lanes of a warp running in lock step)")]
    Lockstep {
        /// The launch's index.
        launch: usize,
        /// The array, quoted.
        array: String,
    },
    /// The candidate's results differ from the original's.
    #[error(
        "launch {launch} ({blocks} blocks of {threads}): {array} differs from the original's{}",
        if *reassociated { " by more than the reassociation tolerance" } else { "" }
    )]
    Differs {
        /// The launch's index.
        launch: usize,
        /// Its blocks.
        blocks: u64,
        /// Its threads per block.
        threads: u64,
        /// The array, quoted (or "an array").
        array: String,
        /// Whether floating-point results were compared within the
        /// reassociation tolerance.
        reassociated: bool,
    },
}

/// Checks candidates of one kernel against the original.
pub struct Checker {
    file: ParsedFile,
    /// The original kernel, lowered.
    original: Kernel,
    /// Launches the original runs cleanly on, with its results.
    launches: Vec<Run>,
    /// How every simulation runs: hardware, metrics, step budgets (per
    /// warp and per launch), race detection and the deadline (the
    /// search's wall-clock safety net).
    options: SimOptions,
    /// The launch on which candidates also run with split warps
    /// ([`split_launch`]).
    split: Option<usize>,
    /// Instructions each candidate's check may run in all ([`CHECK_FACTOR`]).
    check_steps: u64,
    /// Work units the candidates' checks used so far, all together
    /// ([`SEARCH_CHECK_STEPS`]).
    checks_used: AtomicU64,
    /// The original's arrays on each launch with its floating-point inputs
    /// made non-negative ([`tolerance`]), run when the first candidate
    /// that reassociates sums is checked; `None` where that run fails.
    magnitudes: OnceLock<Vec<Option<Arrays>>>,
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
        block: Option<Dims>,
        deadline: Option<Instant>,
    ) -> Result<Checker, CheckError> {
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
        block: Option<Dims>,
        deadline: Option<Instant>,
        hw: Hardware,
        metrics: Vec<Metric>,
    ) -> Result<Checker, CheckError> {
        let work = Arc::new(Work::new(ORIGINAL_STEPS));
        let mut options = SimOptions {
            hw,
            metrics,
            step_budget: STEP_BUDGET,
            detect_races: true,
            max_steps: Some(LAUNCH_STEPS),
            work: Some(Arc::clone(&work)),
            deadline,
            ..SimOptions::default()
        };
        let kernel =
            lower_kernel(file, name).map_err(|d| CheckError::NotLowered(d.message.clone()))?;
        let specs = match base {
            Some(b) => variants(b),
            None => synthesized(&kernel, block.unwrap_or(Dims::SYNTHESIZED_BLOCK)),
        };
        let mut launches = Vec::new();
        let mut first_error = None;
        for spec in specs {
            // Each launch's arrays are built before its simulation looks
            // at the deadline: a late search builds no more of them.
            if past(&options) {
                first_error.get_or_insert(WALL_CLOCK.into());
                break;
            }
            match run_original(&kernel, spec, base.is_none(), &options) {
                Ok(l) => launches.push(l),
                // Synthesized launches grow: the next ones would exhaust
                // the budget too.
                Err(Fail::Sim(e))
                    if base.is_none() && e.message.starts_with(copper::sim::WORK_LIMIT) =>
                {
                    first_error.get_or_insert(match work.spent() {
                        true => format!(
                            "its test launches need more than {ORIGINAL_STEPS} work units in all (simulated instructions, access lanes and array values), the checks' work limit"
                        ),
                        false => format!(
                            "it runs more than {LAUNCH_STEPS} instructions in all on the larger test launches"
                        ),
                    });
                    break;
                }
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
            return Err(CheckError::Original {
                why: first_error.unwrap_or_else(|| "no launch was built".into()),
                ran: launches.len(),
            });
        }
        // Arrays as short as the original allows: a candidate that reads
        // an element the original never reads fails there, out of bounds,
        // where longer test arrays would hide it.
        let smallest = launches.iter().min_by_key(|r| launch_work(&r.spec));
        if let Some(t) = smallest
            .filter(|_| !past(&options))
            .and_then(|run| tight(&kernel, run, &options))
        {
            launches.push(t);
        }
        let split = split_launch(&kernel, &launches, &options);
        // Each candidate's check gets an allowance of its own, from what
        // the original ran: the same for every candidate, whichever order
        // they are checked in.
        let check_steps = work
            .used()
            .saturating_mul(CHECK_FACTOR)
            .saturating_add(CHECK_SLACK)
            .min(ORIGINAL_STEPS);
        options.work = None;
        Ok(Checker {
            file: file.clone(),
            original: kernel,
            launches,
            options,
            split,
            check_steps,
            checks_used: AtomicU64::new(0),
            magnitudes: OnceLock::new(),
        })
    }

    /// How many launches a candidate must match.
    pub fn launches(&self) -> usize {
        self.launches.len()
    }

    /// The candidate as it would be in the file, re-parsed and lowered;
    /// then simulated on every launch and compared with the original.
    pub fn check(&self, candidate: &Function) -> Result<(), CheckError> {
        let (_, kernel) = materialize(&self.file, candidate)?;
        self.check_kernel(&kernel, Terms::default()).map(drop)
    }

    /// [`Checker::check`] for a transform's candidate: one that changes
    /// the launch ([`Candidate::relaunch`]) runs on each launch reshaped
    /// as the edited host code launches it.
    pub fn check_candidate(&self, candidate: &Candidate) -> Result<(), CheckError> {
        let (_, kernel) = materialize(&self.file, &candidate.function)?;
        let terms = Terms {
            reshape: candidate.relaunch.as_ref().map(|r| r.reshape),
            reassociated: candidate.reassociates,
            covers: candidate.covers.clone(),
        };
        self.check_kernel(&kernel, terms).map(drop)
    }

    /// The original's runs on the launches a candidate must match.
    pub fn runs(&self) -> &[Run] {
        &self.launches
    }

    /// Simulates a candidate kernel (lowered from the file with the
    /// candidate in it, see [`materialize`]) on every launch and compares
    /// the final global arrays with the original's, bit for bit unless
    /// `terms` says otherwise. Returns the candidate's runs, in the order
    /// of [`Checker::runs`].
    pub fn check_kernel(&self, kernel: &Kernel, terms: Terms) -> Result<Vec<Run>, CheckError> {
        let options = self.check_options(1);
        let runs = self.runs_of(kernel, terms, &options);
        self.charge_check(&options);
        runs
    }

    /// The magnitude runs ([`tolerance`]): the original on each launch
    /// with the absolute values of its floating-point inputs, charged to
    /// [`Checker::checks_used`] once.
    fn magnitudes(&self) -> &[Option<Arrays>] {
        self.magnitudes.get_or_init(|| {
            let options = self.check_options(1);
            let runs = self
                .launches
                .iter()
                .map(|run| {
                    let inputs = inputs_from_spec(&self.original, &run.spec).ok()?;
                    let result =
                        simulate_owned(&self.original, tolerance::absolute(inputs), &options);
                    result.ok().map(|r| r.arrays)
                })
                .collect();
            self.charge_check(&options);
            runs
        })
    }

    /// Work units the candidates' checks have used so far, all together
    /// ([`SEARCH_CHECK_STEPS`]).
    pub fn checks_used(&self) -> u64 {
        self.checks_used.load(Ordering::Relaxed)
    }

    /// Adds what one check's simulations (run with `options`) used to
    /// [`Checker::checks_used`].
    fn charge_check(&self, options: &SimOptions) {
        if let Some(w) = &options.work {
            self.checks_used.fetch_add(w.used(), Ordering::Relaxed);
        }
    }

    /// [`Checker::check_kernel`]'s simulations, with `options`.
    fn runs_of(
        &self,
        kernel: &Kernel,
        terms: Terms,
        options: &SimOptions,
    ) -> Result<Vec<Run>, CheckError> {
        let mut runs = Vec::new();
        for (
            i,
            Run {
                spec, result: want, ..
            },
        ) in self.launches.iter().enumerate()
        {
            if !covered(spec, terms.covers.as_deref()) {
                continue;
            }
            if past(options) {
                return Err(CheckError::Fails {
                    launch: i,
                    message: WALL_CLOCK.into(),
                });
            }
            let spec = &reshaped_launch(spec, terms.reshape);
            let inputs = inputs_from_spec(kernel, spec)
                .map_err(|source| CheckError::Parameters { launch: i, source })?;
            let at = inputs.bound_point();
            let got = simulate_owned(kernel, inputs, options).map_err(|e| CheckError::Fails {
                launch: i,
                message: e.message,
            })?;
            let threads = spec.block.iter().product::<u64>();
            let magnitudes = match terms.reassociated {
                true => self.magnitudes()[i].as_deref(),
                false => None,
            };
            if let Some(array) = difference(&got.arrays, &want.arrays, &terms, threads, magnitudes)
            {
                return Err(CheckError::Differs {
                    launch: i,
                    blocks: spec.grid.iter().product::<u64>(),
                    threads,
                    array,
                    reassociated: terms.reassociated,
                });
            }
            if self.split == Some(i) && !kernel.lockstep_only() {
                let split = SimOptions {
                    split_warps: true,
                    ..options.clone()
                };
                let inputs = inputs_from_spec(kernel, spec)
                    .map_err(|source| CheckError::Parameters { launch: i, source })?;
                let halves =
                    simulate_owned(kernel, inputs, &split).map_err(|e| CheckError::Fails {
                        launch: i,
                        message: format!(
                            "with the halves of each warp run one after the other: {}",
                            e.message
                        ),
                    })?;
                if let Some(array) =
                    difference(&halves.arrays, &want.arrays, &terms, threads, magnitudes)
                {
                    return Err(CheckError::Lockstep { launch: i, array });
                }
            }
            runs.push(Run {
                spec: spec.clone(),
                at,
                result: got,
            });
        }
        if let Some(threads) = terms.covers.filter(|_| runs.len() < MIN_LAUNCHES) {
            return Err(CheckError::TooFewCovering {
                ran: runs.len(),
                threads,
            });
        }
        Ok(runs)
    }

    /// The launches a candidate must match.
    pub fn launch_specs(&self) -> impl Iterator<Item = &LaunchSpec> {
        self.launches.iter().map(|r| &r.spec)
    }

    /// How the simulations of one check run: with an allowance of `times`
    /// a candidate's ([`CHECK_FACTOR`]) of their own.
    fn check_options(&self, times: u64) -> SimOptions {
        SimOptions {
            work: Some(Arc::new(Work::new(self.check_steps.saturating_mul(times)))),
            ..self.options.clone()
        }
    }
}

/// What a check stopped by its wall-clock safety net says.
const WALL_CLOCK: &str =
    "the search stopped at the wall-clock limit (raise it with --budget); results may differ on a faster machine";

/// Whether the simulations' deadline has passed.
fn past(options: &SimOptions) -> bool {
    options.deadline.is_some_and(|d| Instant::now() >= d)
}

/// How a candidate's runs must match the original's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Terms {
    /// The candidate runs on each launch reshaped so (x and y of its grid
    /// and block exchanged, or more blocks: [`reshaped_launch`]).
    pub reshape: Option<Reshape>,
    /// The candidate sums floating-point values in another order: its
    /// floating-point arrays must match within
    /// [`reassociation_tolerance`], its other arrays bit for bit.
    pub reassociated: bool,
    /// The candidate is compared only on launches of at least this many
    /// threads ([`Candidate::covers`]), of which there must be
    /// [`MIN_LAUNCHES`].
    pub covers: Option<String>,
}

/// The first of the arrays `got` that does not match `want` under
/// `terms` (quoted, or "an array" when they are not the same arrays), for
/// blocks of `threads`; a reassociated sum's tolerance uses the magnitude
/// run's arrays `magnitudes` where there are ([`tolerance`]).
fn difference(
    got: &[(String, ArrayData)],
    want: &[(String, ArrayData)],
    terms: &Terms,
    threads: u64,
    magnitudes: Option<&[(String, ArrayData)]>,
) -> Option<String> {
    let magnitude = |name: &str| {
        magnitudes?
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, data)| data)
    };
    let differs = |g: &(String, ArrayData), w: &(String, ArrayData)| {
        g.0 != w.0
            || match terms.reassociated {
                true => !tolerance::within_tolerance(&g.1, &w.1, threads, magnitude(&w.0)),
                false => g.1 != w.1,
            }
    };
    if got.len() != want.len() {
        return Some("an array".into());
    }
    got.iter()
        .zip(want)
        .find(|(g, w)| differs(g, w))
        .map(|(g, _)| format!("`{}`", g.0))
}

/// The launch among `launches` the original `kernel` also runs cleanly on,
/// to the same arrays, with the halves of each warp run one after the
/// other (the one with the largest blocks): candidates must then too.
/// `None` when it relies on lock step, or cannot be split.
fn split_launch(kernel: &Kernel, launches: &[Run], options: &SimOptions) -> Option<usize> {
    if kernel.lockstep_only() || copper::lint::atomics::order_dependent(kernel).is_some() {
        return None;
    }
    let (i, run) = launches
        .iter()
        .enumerate()
        .max_by_key(|(i, r)| (r.spec.block.iter().product::<u64>(), usize::MAX - i))?;
    let split = SimOptions {
        split_warps: true,
        ..options.clone()
    };
    let inputs = inputs_from_spec(kernel, &run.spec).ok()?;
    let halves = simulate_owned(kernel, inputs, &split).ok()?;
    (halves.arrays == run.result.arrays).then_some(i)
}

/// Whether `spec` runs at least `threads` threads (a length expression
/// over its integer arguments and `-D` symbols); `true` when nothing is
/// asked, `false` when the expression cannot be evaluated.
fn covered(spec: &LaunchSpec, threads: Option<&str>) -> bool {
    let Some(threads) = threads else {
        return true;
    };
    let mut values = spec.args.clone();
    values.extend(spec.defines.clone());
    let launched: u64 = spec.grid.iter().chain(&spec.block).product();
    copper::sim::size_expr::eval(threads, &values).is_ok_and(|n| launched >= n)
}

/// A launch reshaped as `reshape` says (the launch a rewrite that
/// changes the launch runs on in place of the original's), or as it is.
pub fn reshaped_launch(spec: &LaunchSpec, reshape: Option<Reshape>) -> LaunchSpec {
    let mut out = spec.clone();
    if let Some(r) = reshape {
        r.lists(&mut out.grid, &mut out.block);
    }
    out
}

/// A candidate kernel as it would be in the file: printed, spliced in,
/// re-parsed (it must parse back to the same AST), and lowered.
pub fn materialize(
    file: &ParsedFile,
    candidate: &Function,
) -> Result<(ParsedFile, Kernel), CheckError> {
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
        return Err(CheckError::Unparsable(why));
    };
    if f != candidate {
        return Err(CheckError::Reparsed);
    }
    let kernel = lower_kernel(&reparsed, &candidate.name)
        .map_err(|d| CheckError::NotLowerable(d.message))?;
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

/// Whether a type is one the transforms can copy element by element: a
/// scalar keyword type or a 16-bit float (`__half`, `__nv_bfloat16`).
pub fn copyable(base: &BaseType) -> bool {
    match base {
        BaseType::Void => false,
        BaseType::Named(n) => copper::ir::half::type_named(type_key(n)).is_some(),
        _ => true,
    }
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
    fn a_candidate_relying_on_lockstep_warps_fails() {
        // The tree with a barrier after every step, and the "unrolled last
        // warp" without them: bit for bit the same in lock step, not when
        // the halves of a warp run one after the other.
        let head = "__global__ void k(const int *in, int *out) {\n\
            __shared__ int s[128]; unsigned t = threadIdx.x;\n\
            s[t] = in[blockIdx.x * blockDim.x + t]; __syncthreads();\n";
        let tail = "if (t == 0) out[blockIdx.x] = s[0]; }\n";
        let synced = format!(
            "{head}for (unsigned d = 64; d > 0; d >>= 1) {{ if (t < d) s[t] += s[t + d]; __syncthreads(); }}\n{tail}"
        );
        let lockstep = format!(
            "{head}if (t < 64) s[t] += s[t + 64]; __syncthreads();\n\
             if (t < 32) {{ volatile int *v = s; v[t] += v[t + 32]; v[t] += v[t + 16]; v[t] += v[t + 8];\n\
             v[t] += v[t + 4]; v[t] += v[t + 2]; v[t] += v[t + 1]; }}\n{tail}"
        );
        let f = file(&synced);
        let c = Checker::new(&f, "k", None, copper::launch::block([128, 1, 1]).ok(), None).unwrap();
        let candidate = file(&lockstep).function("k").unwrap().clone();
        let err = c.check(&candidate).unwrap_err();
        assert!(matches!(err, CheckError::Lockstep { .. }), "{err}");
        assert!(err.to_string().contains("lock step"), "{err}");
        // The other way round the original relies on lock step: nothing
        // to keep, the candidate passes.
        let f = file(&lockstep);
        let c = Checker::new(&f, "k", None, copper::launch::block([128, 1, 1]).ok(), None).unwrap();
        let candidate = file(&synced).function("k").unwrap().clone();
        assert_eq!(c.check(&candidate), Ok(()));
    }

    #[test]
    fn an_equivalent_rewrite_passes_and_a_wrong_one_fails() {
        let f = file(SRC);
        let c = Checker::new(&f, "k", None, copper::launch::block([32, 1, 1]).ok(), None).unwrap();
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
        assert!(
            matches!(&err, CheckError::Differs { array, .. } if array == "`b`"),
            "{err}"
        );
        assert!(err.to_string().contains("`b` differs"), "{err}");
    }

    /// The last launch has the arrays of the smallest one cut to what the
    /// original accessed: `a` and `b` to `n` elements (the guard stops
    /// the threads past `n`), so one more element read fails there.
    #[test]
    fn the_tight_launch_cuts_arrays_to_the_accessed_elements() {
        let f = file(SRC);
        let c = Checker::new(&f, "k", None, copper::launch::block([32, 1, 1]).ok(), None).unwrap();
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
        let err = c
            .check_kernel(&k, Terms::default())
            .err()
            .expect("the candidate fails");
        assert!(matches!(err, CheckError::Fails { .. }), "{err}");
        assert!(err.to_string().contains("out-of-bounds"), "{err}");
    }
}
