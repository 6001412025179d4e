//! The search for one kernel (COpPER §3, best first): the baseline
//! analysis, then rounds. In each round every transform not applied yet
//! proposes candidates for the best kernel so far; candidates are checked
//! against the original kernel by differential simulation and analyzed, in
//! parallel; the best of the round whose bound beats the incumbent's (under
//! the ranking metric) becomes the incumbent. The search ends when a round
//! finds nothing better or every transform has been applied.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use copper::bound::check::violations;
use copper::bound::{Config, MetricBound, Outcome, Prepared};
use copper::cost::Metric;
use copper::cuda::ast::Function;
use copper::cuda::parse::ParsedFile;
use copper::cuda::relaunch::{Relaunch, Reshape};
use copper::ir::Kernel;
use copper::sim::params::LaunchSpec;
use copper::sim::test_launch::Run;
use copper_transforms::check::{materialize, Checker, Terms};
use copper_transforms::read_only::Suggestion;
use copper_transforms::{Candidate, Context, Skip, Transform};
use rayon::prelude::*;

use crate::launch::KnownShape;
use crate::nvcc::{CompileError, Nvcc};
use crate::rank::total::{compare_excused, compare_work, Excuse};
use crate::rank::{Comparison, Ranker, Ranking};
use copper::lint::block_size::verdict;
use copper::lint::BlockSize;
use lazy::LazyChecker;
use preconditions::preconditions;
use read_only_path::suggest_read_only;

mod cache;
mod errors;
mod instances;
mod later;
mod lazy;
mod preconditions;
mod read_only_path;
pub mod sizes;
mod work;

pub use later::Later;

pub use cache::Cache;
pub use errors::{ReadOnlyError, SearchError, Unchecked};
pub use instances::{Target, Through};

/// What the search does.
pub struct Settings {
    /// Analysis configuration (hardware, degree, LP size, and the time
    /// budget of each kernel's whole search); block and grid are set per
    /// kernel.
    pub config: Config,
    /// Metrics to bound.
    pub metrics: Vec<Metric>,
    /// Which of `metrics` ranks candidates.
    pub rank_metric: usize,
    /// How bounds are compared.
    pub ranking: Ranking,
    /// The transforms tried, in order.
    pub transforms: Vec<Box<dyn Transform>>,
    /// The user's CUDA compiler (`--nvcc`): a candidate is chosen only
    /// when the file with it compiles.
    pub compiler: Option<Nvcc>,
    /// Whether rewrites may sum floating-point values in another order
    /// (`--allow-reassociation`; their results are checked within a
    /// tolerance).
    pub allow_reassociation: bool,
    /// Most work units the checks of one kernel's candidates may use in
    /// all (`--max-check-steps`, default
    /// [`copper_transforms::check::SEARCH_CHECK_STEPS`]): the search
    /// stops after the round that reaches it.
    pub max_check_steps: u64,
}

/// One version of a kernel, analyzed.
pub struct Analyzed {
    /// The file with this version in it.
    pub file: ParsedFile,
    /// This version.
    pub function: Function,
    /// It, lowered.
    pub kernel: Kernel,
    /// Its analysis facts.
    pub prepared: Prepared,
    /// Its bounds, one per metric of the settings.
    pub bounds: Vec<MetricBound>,
    /// Seconds the analysis took.
    pub seconds: f64,
    /// What its rewrites changed besides the kernel's text.
    pub lineage: Lineage,
}

/// What a version's rewrites changed besides the kernel's text, which
/// every later version inherits.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lineage {
    /// For a version that runs on the original's launch reshaped (thread
    /// remapping, one warp per row): how, and the edits of the host code
    /// that do it, in the whole file.
    pub relaunch: Option<Relaunch>,
    /// Whether it sums floating-point values in another order than the
    /// original (`--allow-reassociation`).
    pub reassociated: bool,
    /// For a version equivalent to the original only on launches of at
    /// least this many threads (the split exchange: [`Candidate::covers`]).
    pub covers: Option<String>,
    /// Whether a rewrite wrote it for the analyzed block only
    /// ([`Candidate::fixes_block_size`]).
    pub block_specific: bool,
    /// What its rewrites assume of the callers ([`Candidate::assumes`]).
    pub assumes: Vec<String>,
    /// A hazard one of its rewrites removes that the cost model does not
    /// see ([`Candidate::repairs`]), which excuses a constant per warp
    /// more in its guarded form too.
    pub repairs: Option<String>,
}

impl Lineage {
    /// How its launches differ from the original's, if they do.
    pub fn reshape(&self) -> Option<Reshape> {
        self.relaunch.as_ref().map(|r| r.reshape)
    }

    /// How its results must match the original's.
    fn terms(&self) -> Terms {
        Terms {
            reshape: self.reshape(),
            reassociated: self.reassociated,
            covers: self.covers.clone(),
        }
    }
}

/// What happened to one candidate.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Chosen: the best candidate of its transform, better than the
    /// incumbent (why).
    Chosen(String),
    /// Better than the incumbent, but another candidate was better still.
    Outranked(String),
    /// Not better than the incumbent (why).
    NotBetter(String),
    /// Dropped: its results differ from the original's, or it does not
    /// compile (why).
    Failed(String),
    /// Dropped because it could not be checked at all: no clean test
    /// launch of the original, or the original does not compile with
    /// `--nvcc` (why). Nothing is known about it.
    Unchecked(String),
}

/// A candidate and its fate.
pub struct Considered {
    /// What it changed.
    pub description: String,
    /// Its fate.
    pub verdict: Verdict,
    /// Its analysis, when it got that far.
    pub analyzed: Option<Arc<Analyzed>>,
    /// For a rewrite of a template that improves the searched
    /// instantiation: its analyses for the template's other
    /// instantiations (in the order they were given), once checked.
    pub instances: Vec<Arc<Analyzed>>,
}

/// One transform's turn.
pub struct Step {
    /// The round of the search (from 1): each round tries every transform
    /// not applied yet on the best version so far.
    pub round: usize,
    /// The transform.
    pub transform: &'static str,
    /// Its candidates.
    pub considered: Vec<Considered>,
    /// What it left alone, and why.
    pub skipped: Vec<Skip>,
}

/// A transform that made it into the result.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    /// The transform.
    pub transform: &'static str,
    /// What it changed.
    pub description: String,
    /// Why it helps: which cost term shrank.
    pub why: String,
}

/// The outcome of the search for one kernel.
pub struct KernelResult {
    /// The kernel.
    pub name: String,
    /// The kernel as written.
    pub original: Arc<Analyzed>,
    /// The best version found (the original when nothing helped).
    pub best: Arc<Analyzed>,
    /// The transforms applied, in order.
    pub applied: Vec<Applied>,
    /// Every transform's turn, round by round.
    pub steps: Vec<Step>,
    /// Launches every candidate was checked on, or why none could be;
    /// `None` when no candidate beat the incumbent's bound, so none needed
    /// a check (and the original was not simulated).
    pub checked_on: Option<Result<usize, Unchecked>>,
    /// Why copper does not rewrite this kernel at all (an `#include` or
    /// `#if` branches inside it, its text in a header): it is left
    /// unchanged on purpose, not for want of a check.
    pub not_rewritten: Option<String>,
    /// Where the test launches came from, and what copper assumed.
    pub assumptions: Vec<String>,
    /// The sizes the kernel is used at (`--at`, or the arguments of the
    /// parameter file's or the host code's launch), to evaluate its bounds.
    pub sizes: Option<sizes::Sizes>,
    /// How its candidates were compared (at the sizes, or without them).
    pub ranker: Ranker,
    /// Whether the test launches were built without a parameter file, or
    /// scaled down from its launch (so the assumptions are worth
    /// printing).
    pub assumed: bool,
    /// With `--nvcc`: whether the file as written compiles (when it does
    /// not, no candidate could be compiled, so none was chosen).
    pub compiled: Option<Result<(), CompileError>>,
    /// Why the search stopped before every transform had its turn (the
    /// time budget), when it did.
    pub stopped: Option<String>,
    /// The read-only data path suggestion for the best version (not
    /// applied: the bounds cannot rank it), or why there is none; `None`
    /// when no pointer parameter would qualify.
    pub read_only: Option<Result<Suggestion, ReadOnlyError>>,
    /// Bounds found below a simulated cost by the self-check (the
    /// original's, which leaves the kernel unchecked, or a candidate's,
    /// which drops it unchecked): internal errors, one message each.
    pub internal_errors: Vec<String>,
    /// Seconds the whole search took.
    pub seconds: f64,
    /// For an improved instantiation of a template: the rewritten
    /// template's analysis for each of the template's other
    /// instantiations, checked for each.
    pub instances: Vec<Arc<Analyzed>>,
    /// What the best version assumes of its callers that the original
    /// did not (the block it is written for), one sentence each; each is
    /// also a `// copper:` comment at the top of its body.
    pub preconditions: Vec<String>,
    /// For an instantiation of a template searched through another one
    /// (its lead), which improved: the template's rewrite, which changes
    /// this instantiation too. Its analysis is then [`KernelResult::best`].
    pub through: Option<Through>,
}

impl KernelResult {
    /// Whether a better version was found.
    pub fn improved(&self) -> bool {
        !self.applied.is_empty()
    }

    /// The best version's text as it stands in its file (for an
    /// improved kernel: the original text edited by the rewrites).
    pub fn best_text(&self) -> String {
        let file = &self.best.file;
        file.item(&self.name)
            .and_then(|i| file.source.text.get(i.span.start..i.span.end))
            .map_or_else(
                || copper::cuda::print::function(&self.best.function),
                str::to_string,
            )
    }

    /// Why the result is not known to be final: nothing improved, and no
    /// test launch of the original runs cleanly (a race, an out-of-bounds
    /// access), some candidate was dropped unchecked (the first such
    /// reason), or the search stopped at its time budget.
    pub fn unchecked(&self) -> Option<String> {
        if self.improved() || self.not_rewritten.is_some() {
            return None;
        }
        if let Some(Err(why)) = &self.checked_on {
            return Some(why.to_string());
        }
        self.steps
            .iter()
            .flat_map(|s| &s.considered)
            .find_map(|c| match &c.verdict {
                Verdict::Unchecked(why) => Some(why.clone()),
                _ => None,
            })
            .or(self.stopped.clone())
    }
}

/// Searches for a better version of kernel `name` of `file` (the whole
/// file `host`, or the excerpt of it the kernel needs), launched as
/// `shape`, checked on variants of the parameter file's launch `spec`
/// (synthesized launches without one). An instantiation of a template is
/// not rewritten: a rewrite must hold for every instantiation
/// ([`optimize_target`]).
pub fn optimize_kernel(
    file: &ParsedFile,
    host: &ParsedFile,
    name: &str,
    spec: Option<&LaunchSpec>,
    shape: &KnownShape,
    settings: &Settings,
    cache: &Cache,
) -> Result<KernelResult, SearchError> {
    let target = Target::new(name, spec.cloned(), shape.clone());
    let others = Err(format!(
        "`{name}` is an instantiation of a template: a rewrite of it would change every instantiation, and this command checks one"
    ));
    optimize_target(file, host, &target, others, settings, cache)
}

/// Searches for a better version of `target`, a kernel of `file` (the
/// whole file `host`, or the excerpt of it the kernel needs), checked on
/// variants of its parameter file's launch (synthesized launches without
/// one). For an instantiation of a template, `others` are the template's
/// other instantiations, for each of which every rewrite is checked too
/// (`file` must hold them), or why the template is not rewritten through
/// this one; a kernel that is no instantiation ignores it.
pub fn optimize_target(
    file: &ParsedFile,
    host: &ParsedFile,
    target: &Target,
    others: Result<&[Target], String>,
    settings: &Settings,
    cache: &Cache,
) -> Result<KernelResult, SearchError> {
    let (name, spec, shape) = (target.name.as_str(), target.spec.as_ref(), &target.shape);
    let start = Instant::now();
    // The budget covers the whole search: the original's analysis, the
    // test launches, and every candidate's check and analysis.
    let deadline = start + settings.config.budget;
    let config = Config {
        block: shape.block,
        grid: target.analyzed_grid(),
        ..settings.config
    };
    let original = cache.analyze(
        file.clone(),
        name,
        None,
        &config,
        &settings.metrics,
        Lineage::default(),
    )?;
    if let Some(spec) = spec {
        crate::launch::check_launch(&original.kernel, spec).map_err(SearchError::Launch)?;
    }
    let instantiation = original.function.template.is_some();
    let refusal = copper::cuda::rewrite::refusal(file, name).or(match &others {
        Err(why) if instantiation => Some(why.clone()),
        _ => None,
    });
    let includer = target.includer.as_ref();
    let plan = crate::launch::test_plan(file, &original.kernel, spec, shape, includer);
    let (launches, of) = crate::launch::sites(file, includer);
    let written = match (spec, &plan.spec, launches.iter().find(|l| l.kernel == name)) {
        (None, Some(s), Some(l)) => Some(sizes::host_launch(&original.kernel, l, s, &of)),
        _ => None,
    };
    let used_at = match (spec, &written) {
        (Some(s), _) => Some((s, "the parameter file's launch".to_string())),
        (None, Some((s, from))) => Some((s, from.clone())),
        (None, None) => None,
    };
    let sizes = sizes::in_use(&settings.ranking, used_at, &original.kernel);
    let ranker = sizes::ranker(
        &settings.ranking,
        sizes.as_ref(),
        &original.kernel,
        plan.block,
    );
    // The original is simulated on the test launches when the first
    // candidate that beats the incumbent needs its check.
    let measured = Arc::clone(&original);
    // A kernel copper does not rewrite has no candidates to check.
    let checker = LazyChecker::new(|| {
        Checker::measuring(
            file,
            name,
            plan.spec.as_ref(),
            plan.block,
            Some(deadline),
            config.hw,
            settings.metrics.clone(),
        )
        .map_err(|source| match past(deadline, &config) {
            Some(late) => Unchecked::Late(late),
            None => Unchecked::Original {
                source,
                path: file.source.path.clone(),
                with_params: spec.is_some(),
            },
        })
        .and_then(|c| match self_check(&measured, c.runs(), &config).first() {
            // Nothing the search measures against this analysis can
            // be trusted: every candidate is left unchecked.
            Some(why) => Err(Unchecked::SelfCheck(why.clone())),
            None => Ok(c),
        })
    });
    // The template's other instantiations, each with its checker and its
    // best version so far: every rewrite of a template is checked for
    // them, so they are simulated up front.
    let (siblings, mut others_best) = match others {
        Ok(others)
            if refusal.is_none()
                && instantiation
                && !others.is_empty()
                && checker.get().is_ok() =>
        {
            match instances::prepare(file, others, settings, cache, deadline) {
                Ok((s, best)) => (Ok(s), best),
                Err(why) => (Err(why), Vec::new()),
            }
        }
        _ => (Ok(Vec::new()), Vec::new()),
    };
    let original_compiles = match &settings.compiler {
        Some(nvcc) => nvcc.compile(&file.source.text, &file.source.path),
        None => Ok(()),
    };
    let env = Env {
        spec,
        shape,
        host,
        original_compiles,
        block_size_independent: matches!(
            verdict(&original.kernel).0,
            BlockSize::Independent { .. }
        ),
        checker: &checker,
        siblings: &siblings,
        config: &config,
        deadline,
        settings,
        ranker: &ranker,
        cache,
        internal_errors: Mutex::new(Vec::new()),
    };
    let mut incumbent = original.clone();
    let mut applied = Vec::new();
    let mut steps = Vec::new();
    // Best first: each round, every transform not applied yet proposes
    // candidates for the incumbent; the best candidate of the round that
    // beats the incumbent replaces it. Each transform applies at most once.
    let mut remaining: Vec<&dyn Transform> = settings.transforms.iter().map(|t| &**t).collect();
    if refusal.is_some() {
        remaining.clear();
    }
    let mut stopped = None;
    while !remaining.is_empty() {
        if let Some(why) =
            past(deadline, &config).or_else(|| checker.out_of_work(settings.max_check_steps))
        {
            stopped = Some(why);
            break;
        }
        let number = steps.iter().map(|s: &Step| s.round).max().unwrap_or(0) + 1;
        let mut round: Vec<Step> = remaining
            .par_iter()
            .map(|t| step(*t, number, &incumbent, &others_best, &env))
            .collect();
        let best = round
            .iter()
            .enumerate()
            .filter_map(|(s, st)| winner(&st.considered, &env).map(|c| (s, c)))
            .reduce(|a, b| {
                let work = |(s, c): (usize, usize)| {
                    (round[s].considered[c].analyzed.as_ref())
                        .expect("analyzed")
                        .work(settings.rank_metric)
                };
                if compare_work(&ranker, work(b), work(a)).is_better() {
                    b
                } else {
                    a
                }
            });
        for (s, st) in round.iter_mut().enumerate() {
            for (c, x) in st.considered.iter_mut().enumerate() {
                if let Verdict::Chosen(why) = &x.verdict {
                    if best != Some((s, c)) {
                        x.verdict = Verdict::Outranked(why.clone());
                    }
                }
            }
        }
        let Some((s, c)) = best else {
            steps.extend(round);
            break;
        };
        let chosen = &round[s].considered[c];
        if let (Verdict::Chosen(why), Some(a)) = (&chosen.verdict, &chosen.analyzed) {
            applied.push(Applied {
                transform: round[s].transform,
                description: chosen.description.clone(),
                why: why.clone(),
            });
            incumbent = a.clone();
            others_best = chosen.instances.clone();
        }
        remaining.remove(s);
        steps.extend(round);
    }
    let (incumbent, preconditions) =
        match preconditions(&original, incumbent, &mut applied, &mut others_best, &env) {
            Ok(x) => x,
            Err(why) => {
                applied.clear();
                stopped = Some(why);
                (original.clone(), Vec::new())
            }
        };
    let mut internal_errors = env
        .internal_errors
        .lock()
        .map(|mut e| std::mem::take(&mut *e))
        .unwrap_or_default();
    let compiled = settings
        .compiler
        .as_ref()
        .map(|_| env.original_compiles.clone());
    let read_only = suggest_read_only(file, &incumbent, spec, &env, refusal.is_some());
    let applied_any = !applied.is_empty();
    let checked_on = match (siblings, &refusal) {
        (_, Some(why)) => Some(Err(Unchecked::NotRewritten(why.clone()))),
        (Err(why), None) => Some(Err(why)),
        (Ok(_), None) => checker.into_built().map(|c| c.map(|c| c.launches())),
    };
    if let Some(Err(Unchecked::SelfCheck(why))) = &checked_on {
        internal_errors.insert(0, why.clone());
    }
    Ok(KernelResult {
        name: name.to_string(),
        original,
        best: incumbent,
        applied,
        steps,
        checked_on,
        not_rewritten: refusal,
        assumptions: plan.assumptions,
        assumed: spec.is_none() || plan.scaled,
        sizes,
        ranker,
        compiled,
        stopped,
        read_only,
        internal_errors,
        seconds: start.elapsed().as_secs_f64(),
        instances: if applied_any { others_best } else { Vec::new() },
        through: None,
        preconditions,
    })
}

/// What every candidate of one kernel is evaluated with.
struct Env<'a> {
    /// The parameter file's launch, when there is one.
    spec: Option<&'a LaunchSpec>,
    /// The kernel's launch shape, and where it came from.
    shape: &'a KnownShape,
    /// The whole file, with the host code that launches the kernel.
    host: &'a ParsedFile,
    /// Whether the original kernel's results are independent of the block
    /// size (BSI), so that a rewrite fixing it should say so.
    block_size_independent: bool,
    /// The original simulated on its test launches, once a candidate
    /// needs it ([`Env::checker`]).
    checker: &'a LazyChecker<'a>,
    /// The other instantiations of the kernel's template, which every
    /// rewrite must also be checked for, or why they cannot be.
    siblings: &'a Result<Vec<instances::Sibling>, Unchecked>,
    /// Whether the file as written compiles with `settings.compiler`
    /// (`Ok` when there is none).
    original_compiles: Result<(), CompileError>,
    config: &'a Config,
    /// When the kernel's search must end.
    deadline: Instant,
    settings: &'a Settings,
    /// How candidates are compared.
    ranker: &'a Ranker,
    cache: &'a Cache,
    /// The self-check's findings so far ([`KernelResult::internal_errors`]).
    internal_errors: Mutex<Vec<String>>,
}

impl Env<'_> {
    /// The checker of candidates (built when first asked for), or why
    /// none can be checked: the original does not run cleanly, or another
    /// instantiation of its template cannot be checked.
    fn checker(&self) -> Result<&Checker, &Unchecked> {
        self.siblings.as_ref()?;
        self.checker.get().as_ref()
    }
}

/// Why a candidate could not be checked, when the search is past its
/// wall-clock safety net.
fn past(deadline: Instant, config: &Config) -> Option<String> {
    (Instant::now() >= deadline).then(|| {
        format!(
            "the search stopped at the wall-clock limit of {} s (raise it with --budget); results may differ on a faster machine",
            config.budget.as_secs_f64()
        )
    })
}

/// One transform's turn on the incumbent (and, for a template, the other
/// instantiations' best versions `others`): its candidates, each checked,
/// analyzed and compared with the incumbent, in parallel.
fn step(
    t: &dyn Transform,
    round: usize,
    incumbent: &Arc<Analyzed>,
    others: &[Arc<Analyzed>],
    env: &Env,
) -> Step {
    let cx = Context {
        file: &incumbent.file,
        host: env.host,
        function: &incumbent.function,
        kernel: &incumbent.kernel,
        analysis: &incumbent.prepared,
        block: launched(env.config, incumbent.lineage.reshape()).block,
        params: env.spec,
        allow_reassociation: env.settings.allow_reassociation,
    };
    let proposals = t.propose(&cx);
    let considered = proposals
        .candidates
        .into_par_iter()
        .map(|c| {
            let (verdict, analyzed, checked) = evaluate(&c, incumbent, others, env);
            let reshape = (incumbent.lineage.reshape()).or(c.relaunch.as_ref().map(|r| r.reshape));
            let mut description = c.description;
            let instances = checked.map_or_else(Vec::new, |x| {
                for note in x.notes {
                    description.push_str(&format!("; {note}"));
                }
                x.analyses
            });
            if c.fixes_block_size {
                if let Some(b) = launched(env.config, reshape).block {
                    let source = match env.shape.assumed {
                        true => "the block copper assumed",
                        false => env.shape.source.as_str(),
                    };
                    let independent = match env.block_size_independent {
                        true => "; the original's results did not depend on the block size",
                        false => "",
                    };
                    description.push_str(&format!(
                        " (written for blocks of {}, {source}{independent})",
                        b
                    ));
                }
            }
            Considered {
                description,
                verdict,
                analyzed,
                instances,
            }
        })
        .collect();
    Step {
        round,
        transform: t.name(),
        considered,
        skipped: proposals.skipped,
    }
}

/// The analysis configuration of a version: the search's, with the block
/// and grid reshaped for a version that runs on a reshaped launch.
fn launched(config: &Config, reshape: Option<Reshape>) -> Config {
    config.reshaped(reshape)
}

/// Analyzes one candidate and compares it with the incumbent; a candidate
/// that beats it is then checked against the original (for a template,
/// also for its other instantiations, whose best versions are `others`).
/// A candidate that loses on its bound is never simulated.
fn evaluate(
    candidate: &Candidate,
    incumbent: &Analyzed,
    others: &[Arc<Analyzed>],
    env: &Env,
) -> (Verdict, Option<Arc<Analyzed>>, Option<instances::Checked>) {
    let (settings, cache) = (env.settings, env.cache);
    if incumbent.lineage.relaunch.is_some() && candidate.relaunch.is_some() {
        let why = "it changes the launch, which an earlier rewrite already changed";
        return (Verdict::Failed(why.into()), None, None);
    }
    let lineage = Lineage {
        relaunch: (incumbent.lineage.relaunch.clone()).or_else(|| candidate.relaunch.clone()),
        reassociated: incumbent.lineage.reassociated || candidate.reassociates,
        covers: (incumbent.lineage.covers.clone()).or_else(|| candidate.covers.clone()),
        block_specific: incumbent.lineage.block_specific || candidate.fixes_block_size,
        assumes: (incumbent.lineage.assumes.iter())
            .chain(&candidate.assumes)
            .cloned()
            .collect(),
        repairs: (incumbent.lineage.repairs.clone()).or_else(|| candidate.repairs.clone()),
    };
    let version_config = launched(env.config, lineage.reshape());
    let config = &Config {
        budget: env.deadline.saturating_duration_since(Instant::now()),
        ..version_config
    };
    let unchecked = || past(env.deadline, env.config).map(Verdict::Unchecked);
    let (file, kernel) = match materialize(&incumbent.file, &candidate.function) {
        Ok(x) => x,
        Err(why) => return (Verdict::Failed(why.to_string()), None, None),
    };
    let analyzed = match cache.analyze(
        file,
        &candidate.function.name,
        Some(kernel),
        config,
        &settings.metrics,
        lineage,
    ) {
        Ok(a) => a,
        Err(why) => return (Verdict::Failed(why.to_string()), None, None),
    };
    let m = settings.rank_metric;
    if matches!(analyzed.bounds[m].work, Outcome::NoBound(..)) {
        if let Some(v) = unchecked() {
            return (v, Some(analyzed), None);
        }
    }
    let (new, old) = (analyzed.work(m), incumbent.work(m));
    let excuse = Excuse {
        repairs: candidate.repairs.as_deref(),
        contention: candidate.contention.as_deref(),
    };
    let comparison = compare_excused(env.ranker, new, old, excuse);
    let why = match comparison {
        Comparison::Better(why) => why,
        Comparison::NotBetter(why) => return (Verdict::NotBetter(why), Some(analyzed), None),
    };
    let checker = match env.checker() {
        Ok(c) => c,
        Err(why) => return (Verdict::Unchecked(why.to_string()), Some(analyzed), None),
    };
    let runs = match checker.check_kernel(&analyzed.kernel, analyzed.lineage.terms()) {
        Ok(runs) => runs,
        Err(why) => {
            let verdict = unchecked().unwrap_or(Verdict::Failed(why.to_string()));
            return (verdict, Some(analyzed), None);
        }
    };
    let wrong = self_check(&analyzed, &runs, &version_config);
    if let Some(why) = wrong.first() {
        if let Ok(mut found) = env.internal_errors.lock() {
            found.extend(wrong.iter().cloned());
        }
        return (Verdict::Unchecked(why.clone()), Some(analyzed), None);
    }
    let aliased = promise_worth(candidate, &analyzed, checker);
    let this = (candidate.function.name.as_str(), checker.launches());
    let siblings = match env.siblings {
        Ok(s) if s.is_empty() => Ok(aliased.map(|note| instances::Checked {
            analyses: Vec::new(),
            notes: vec![note],
        })),
        Ok(s) => instances::check(
            &analyzed.file,
            this,
            s,
            others,
            &analyzed.lineage,
            excuse,
            env,
        )
        .map(|mut c| {
            c.notes.extend(aliased);
            Some(c)
        }),
        Err(why) => Err(Verdict::Unchecked(why.to_string())),
    };
    match siblings.and_then(|c| compiles(&analyzed, env).map(|()| c)) {
        Ok(checked) => (Verdict::Chosen(why), Some(analyzed), checked),
        Err(e) => (e, Some(analyzed), None),
    }
}

/// What the promise that some pointer parameters do not overlap is
/// worth, for a candidate that makes one: it and the original run with
/// each promised pair passed one array ([`Checker::aliased`]).
fn promise_worth(candidate: &Candidate, analyzed: &Analyzed, checker: &Checker) -> Option<String> {
    // A pair either way round is one promise.
    let mut pairs: Vec<(String, String)> = (candidate.promised_apart.iter())
        .map(|(r, w)| match r < w {
            true => (r.clone(), w.clone()),
            false => (w.clone(), r.clone()),
        })
        .collect();
    pairs.sort();
    pairs.dedup();
    if pairs.is_empty() {
        return None;
    }
    let named: Vec<String> = pairs
        .iter()
        .map(|(r, w)| format!("`{r}` and `{w}`"))
        .collect();
    let runs = checker.aliased(&analyzed.kernel, &pairs, &analyzed.lineage.terms());
    Some(format!(
        "passed one array for {}, {}",
        named.join(", "),
        runs.said()
    ))
}

/// The bounds of `version` compared with every simulation of it in `runs`
/// whose launch has the analyzed shape (`config`'s block and grid, where
/// fixed): one internal-error message per bound below a simulated cost.
fn self_check(version: &Analyzed, runs: &[Run], config: &Config) -> Vec<String> {
    let name = &version.function.name;
    runs.iter()
        .filter_map(|r| Some((r, r.spec.shape().ok()?)))
        .filter(|(_, shape)| {
            config.block.is_none_or(|b| b == shape.block())
                && config.grid.is_none_or(|g| g == shape.grid())
        })
        .flat_map(|(r, shape)| {
            let found = violations(
                &version.bounds,
                &r.result,
                &r.at,
                &shape,
                config.hw.warp_size as u64,
            );
            found.into_iter().map(move |v| {
                format!(
                    "{} (at {} blocks of {})",
                    v.message(name),
                    shape.grid(),
                    shape.block()
                )
            })
        })
        .collect()
}

/// Whether a candidate's file compiles with the user's compiler, when
/// one was given; the verdict that drops it when not.
fn compiles(candidate: &Analyzed, env: &Env) -> Result<(), Verdict> {
    let Some(nvcc) = &env.settings.compiler else {
        return Ok(());
    };
    if let Err(e) = &env.original_compiles {
        return Err(Verdict::Unchecked(format!(
            "it could not be compiled with nvcc: the file as written does not compile either ({e})"
        )));
    }
    let source = &candidate.file.source;
    nvcc.compile(&source.text, &source.path)
        .map_err(|e| Verdict::Failed(format!("nvcc rejects it: {e}")))
}

/// The best of the candidates that beat the incumbent: one no other beats.
fn winner(considered: &[Considered], env: &Env) -> Option<usize> {
    let work = |i: usize| {
        (considered[i].analyzed.as_ref())
            .expect("analyzed")
            .work(env.settings.rank_metric)
    };
    let mut best: Option<usize> = None;
    for (i, c) in considered.iter().enumerate() {
        if !matches!(c.verdict, Verdict::Chosen(_)) {
            continue;
        }
        best = match best {
            Some(b) if !compare_work(env.ranker, work(i), work(b)).is_better() => Some(b),
            _ => Some(i),
        };
    }
    best
}

#[cfg(test)]
mod tests;
