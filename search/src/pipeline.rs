//! The search for one kernel (`002_…` §3): the baseline analysis, then
//! each transform in turn on the best kernel so far. A transform's
//! candidates are checked against the original kernel by differential
//! simulation and analyzed, in parallel; the best of those whose bound
//! beats the incumbent's (under the ranking metric) becomes the incumbent.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use copper::bound::{prepare, Config, MetricBound, Outcome, Prepared};
use copper::cost::Metric;
use copper::cuda::ast::Function;
use copper::cuda::parse::ParsedFile;
use copper::ir::lower::lower_kernel;
use copper::ir::Kernel;
use copper::sim::params::LaunchSpec;
use copper_transforms::check::{materialize, Checker};
use copper_transforms::{Context, Skip, Transform};
use rayon::prelude::*;

use crate::launch::Shape;
use crate::rank::{compare, Comparison, Ranking};

/// What the search does.
pub struct Settings {
    /// Analysis configuration (hardware, degree, LP size, time budget per
    /// kernel version); block and grid are set per kernel.
    pub config: Config,
    /// Metrics to bound.
    pub metrics: Vec<Metric>,
    /// Which of `metrics` ranks candidates.
    pub rank_metric: usize,
    /// How bounds are compared.
    pub ranking: Ranking,
    /// The transforms tried, in order.
    pub transforms: Vec<Box<dyn Transform>>,
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
}

/// Analyses of kernel versions, by a hash of the file text they are in,
/// the kernel's name and the configuration: a candidate met again (the
/// same rewrite from two transforms, the same file in a batch) is not
/// analyzed twice.
#[derive(Default)]
pub struct Cache {
    map: Mutex<HashMap<u64, Arc<Analyzed>>>,
    hits: AtomicU64,
}

impl Cache {
    /// How many analyses were found in the cache.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// The analysis of kernel `name` as it is in `file` (lowered as
    /// `kernel` when the caller has it).
    fn analyze(
        &self,
        file: ParsedFile,
        name: &str,
        kernel: Option<Kernel>,
        config: &Config,
        metrics: &[Metric],
    ) -> Result<Arc<Analyzed>, String> {
        let mut h = DefaultHasher::new();
        file.source.text.hash(&mut h);
        name.hash(&mut h);
        format!("{config:?}{metrics:?}").hash(&mut h);
        let key = h.finish();
        if let Some(a) = self.map.lock().ok().and_then(|m| m.get(&key).cloned()) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(a);
        }
        let start = Instant::now();
        let function = file
            .function(name)
            .cloned()
            .ok_or_else(|| format!("no kernel named `{name}`"))?;
        let kernel = match kernel {
            Some(k) => k,
            None => lower_kernel(&file, name).map_err(|d| d.render())?,
        };
        let prepared = prepare(&kernel, *config);
        let bounds = metrics.iter().map(|m| prepared.bound(m)).collect();
        let a = Arc::new(Analyzed {
            file,
            function,
            kernel,
            prepared,
            bounds,
            seconds: start.elapsed().as_secs_f64(),
        });
        if let Ok(mut m) = self.map.lock() {
            m.insert(key, a.clone());
        }
        Ok(a)
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
    /// Dropped: its results differ from the original's, or it could not
    /// be checked (why).
    Failed(String),
}

/// A candidate and its fate.
pub struct Considered {
    /// What it changed.
    pub description: String,
    /// Its fate.
    pub verdict: Verdict,
    /// Its analysis, when it got that far.
    pub analyzed: Option<Arc<Analyzed>>,
}

/// One transform's turn.
pub struct Step {
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
    /// Every transform's turn.
    pub steps: Vec<Step>,
    /// Launches every candidate was checked on, or why none could be.
    pub checked_on: Result<usize, String>,
    /// Seconds the whole search took.
    pub seconds: f64,
}

impl KernelResult {
    /// Whether a better version was found.
    pub fn improved(&self) -> bool {
        !self.applied.is_empty()
    }
}

/// Searches for a better version of kernel `name` of `file`, launched as
/// `shape`, checked on variants of the parameter file's launch `spec`
/// (synthesized launches without one).
pub fn optimize_kernel(
    file: &ParsedFile,
    name: &str,
    spec: Option<&LaunchSpec>,
    shape: &Shape,
    settings: &Settings,
    cache: &Cache,
) -> Result<KernelResult, String> {
    let start = Instant::now();
    let config = Config {
        block: shape.block,
        grid: shape.grid,
        ..settings.config
    };
    let original = cache.analyze(file.clone(), name, None, &config, &settings.metrics)?;
    let checker = Checker::new(file, name, spec, shape.block);
    let mut incumbent = original.clone();
    let mut applied = Vec::new();
    let mut steps = Vec::new();
    for t in &settings.transforms {
        let cx = Context {
            file: &incumbent.file,
            function: &incumbent.function,
            kernel: &incumbent.kernel,
            analysis: &incumbent.prepared,
            block: shape.block,
        };
        let proposals = t.propose(&cx);
        let mut considered: Vec<Considered> = proposals
            .candidates
            .into_par_iter()
            .map(|c| {
                let (verdict, analyzed) =
                    evaluate(&c.function, &incumbent, &checker, &config, settings, cache);
                Considered {
                    description: c.description,
                    verdict,
                    analyzed,
                }
            })
            .collect();
        if let Some(w) = winner(&considered, settings) {
            for (i, c) in considered.iter_mut().enumerate() {
                if let Verdict::Chosen(why) = &c.verdict {
                    if i != w {
                        c.verdict = Verdict::Outranked(why.clone());
                    }
                }
            }
            let chosen = &considered[w];
            if let (Verdict::Chosen(why), Some(a)) = (&chosen.verdict, &chosen.analyzed) {
                applied.push(Applied {
                    transform: t.name(),
                    description: chosen.description.clone(),
                    why: why.clone(),
                });
                incumbent = a.clone();
            }
        }
        steps.push(Step {
            transform: t.name(),
            considered,
            skipped: proposals.skipped,
        });
    }
    Ok(KernelResult {
        name: name.to_string(),
        original,
        best: incumbent,
        applied,
        steps,
        checked_on: checker.map(|c| c.launches()),
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Checks, analyzes and compares one candidate.
fn evaluate(
    candidate: &Function,
    incumbent: &Analyzed,
    checker: &Result<Checker, String>,
    config: &Config,
    settings: &Settings,
    cache: &Cache,
) -> (Verdict, Option<Arc<Analyzed>>) {
    let checker = match checker {
        Ok(c) => c,
        Err(why) => return (Verdict::Failed(format!("cannot be checked: {why}")), None),
    };
    let (file, kernel) = match materialize(&incumbent.file, candidate) {
        Ok(x) => x,
        Err(why) => return (Verdict::Failed(why), None),
    };
    if let Err(why) = checker.check_kernel(&kernel) {
        return (Verdict::Failed(why), None);
    }
    let analyzed = match cache.analyze(
        file,
        &candidate.name,
        Some(kernel),
        config,
        &settings.metrics,
    ) {
        Ok(a) => a,
        Err(why) => return (Verdict::Failed(why), None),
    };
    let m = settings.rank_metric;
    let verdict = match compare(
        &settings.ranking,
        &analyzed.bounds[m].work,
        &incumbent.bounds[m].work,
    ) {
        Comparison::Better(why) => Verdict::Chosen(why),
        Comparison::NotBetter(why) => Verdict::NotBetter(why),
    };
    (verdict, Some(analyzed))
}

/// The best of the candidates that beat the incumbent: one no other beats.
fn winner(considered: &[Considered], settings: &Settings) -> Option<usize> {
    let bound = |i: usize| -> &Outcome {
        &considered[i].analyzed.as_ref().expect("analyzed").bounds[settings.rank_metric].work
    };
    let mut best: Option<usize> = None;
    for (i, c) in considered.iter().enumerate() {
        if !matches!(c.verdict, Verdict::Chosen(_)) {
            continue;
        }
        best = match best {
            Some(b) if !compare(&settings.ranking, bound(i), bound(b)).is_better() => Some(b),
            _ => Some(i),
        };
    }
    best
}
