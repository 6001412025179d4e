//! Rewriting a template. Every instantiation of a template shares its
//! text, so a rewrite found for one instantiation (the search's kernel)
//! edits them all: it is kept only when, for every other instantiation
//! the file launches or names (`--instantiate`, `copper.toml`), it passes
//! the same differential simulation against that instantiation's
//! original (on that instantiation's own test launches), its bounds hold
//! on those runs, and the ranking metric's bound is no worse than that
//! instantiation's best version so far. The applied rewrite's description
//! names every instantiation it was checked for. The other
//! instantiations then take the rewrite as their result ([`Through`]).

use copper::launch::Dims;
use std::sync::Arc;
use std::time::Instant;

use copper::bound::Config;
use copper::cuda::parse::ParsedFile;
use copper::ir::lower::lower_kernel;
use copper::sim::params::LaunchSpec;
use copper_transforms::check::{Checker, Terms};

use super::{
    self_check, Analyzed, Applied, Cache, Env, KernelResult, Lineage, Settings, Unchecked, Verdict,
};
use crate::launch::{Includer, KnownShape};
use crate::rank::total::{compare_excused, compare_work, Excuse};

/// A kernel to search or to check rewrites on: its name, its parameter
/// file's launch, its launch shape, and for a header's kernel the file
/// given that includes the header.
#[derive(Clone, Debug)]
pub struct Target {
    /// The kernel (`transpose<float>` for an instantiation).
    pub name: String,
    /// The parameter file's launch of it, when there is one.
    pub spec: Option<LaunchSpec>,
    /// Its launch shape.
    pub shape: KnownShape,
    /// For a kernel defined in a header: the includer's launches of it,
    /// which give its test launch and sizes; its grid is then only
    /// reported, never assumed by the analysis (other includers launch
    /// it with others).
    pub includer: Option<Includer>,
}

impl Target {
    /// The kernel `name` of a file given (not a header's), with its
    /// parameter file's launch `spec` and its launch `shape`.
    pub fn new(name: &str, spec: Option<LaunchSpec>, shape: KnownShape) -> Target {
        Target {
            name: name.to_string(),
            spec,
            shape,
            includer: None,
        }
    }

    /// The grid the analysis assumes: the shape's, unless the kernel is a
    /// header's (its bounds and rewrites hold for every grid).
    pub fn analyzed_grid(&self) -> Option<Dims> {
        self.shape.grid.filter(|_| self.includer.is_none())
    }
}

/// Another instantiation of the searched kernel's template, ready to check
/// candidates on.
pub(super) struct Sibling {
    /// Its name.
    pub name: String,
    /// Its analysis configuration (its own block and grid).
    config: Config,
    /// Its original, simulated on its test launches.
    checker: Checker,
    /// Its original's analysis.
    original: Arc<Analyzed>,
}

/// The other instantiations `others`, each analyzed as written in `file`
/// and given a checker; the first that cannot be checked makes every
/// candidate unchecked. Their analyses come back too: each one's best
/// version so far.
pub(super) fn prepare(
    file: &ParsedFile,
    others: &[Target],
    settings: &Settings,
    cache: &Cache,
    deadline: Instant,
) -> Result<(Vec<Sibling>, Vec<Arc<Analyzed>>), Unchecked> {
    let mut siblings = Vec::new();
    let mut originals = Vec::new();
    for t in others {
        let wrap = |source: Unchecked| Unchecked::Instance {
            name: t.name.clone(),
            source: Box::new(source),
        };
        let config = Config {
            block: t.shape.block,
            grid: t.analyzed_grid(),
            ..settings.config
        };
        let original = cache
            .analyze(
                file.clone(),
                &t.name,
                None,
                &config,
                &settings.metrics,
                Lineage::default(),
            )
            .map_err(|e| wrap(Unchecked::NotRewritten(e.to_string())))?;
        let plan = crate::launch::test_plan(
            file,
            &original.kernel,
            t.spec.as_ref(),
            &t.shape,
            t.includer.as_ref(),
        );
        let checker = Checker::measuring(
            file,
            &t.name,
            plan.spec.as_ref(),
            plan.block,
            Some(deadline),
            config.hw,
            settings.metrics.clone(),
        )
        .map_err(|source| {
            wrap(Unchecked::Original {
                source,
                path: file.source.path.clone(),
                with_params: t.spec.is_some(),
            })
        })?;
        if let Some(why) = self_check(&original, checker.runs(), &config).first() {
            return Err(wrap(Unchecked::SelfCheck(why.clone())));
        }
        siblings.push(Sibling {
            name: t.name.clone(),
            config,
            checker,
            original: Arc::clone(&original),
        });
        originals.push(original);
    }
    Ok((siblings, originals))
}

impl Sibling {
    /// The block it is analyzed and checked with, when known.
    pub fn block(&self) -> Option<Dims> {
        self.config.block
    }

    /// Its original's analysis.
    pub fn original(&self) -> &Arc<Analyzed> {
        &self.original
    }
}

/// A candidate checked for every other instantiation.
pub(super) struct Checked {
    /// Its analysis for each, in the order of the siblings.
    pub analyses: Vec<Arc<Analyzed>>,
    /// For the description: the instantiations it was checked for, and
    /// what running it with promised-apart arrays aliased showed.
    pub notes: Vec<String>,
}

/// Checks a candidate, which makes `file` (the file with it), for each
/// sibling: the same results as the sibling's original, bounds that hold
/// on its runs, a ranking bound no worse than `best` (the sibling's best
/// version so far), or at most a constant per warp worse where the
/// candidate has an `excuse`, as for the searched instantiation. `this`
/// is the searched instantiation, checked on `launches` launches. The
/// verdict that drops the candidate otherwise.
pub(super) fn check(
    file: &ParsedFile,
    this: (&str, usize),
    siblings: &[Sibling],
    best: &[Arc<Analyzed>],
    lineage: &Lineage,
    excuse: Excuse,
    env: &Env,
) -> Result<Checked, Verdict> {
    let (settings, cache) = (env.settings, env.cache);
    if lineage.relaunch.is_some() {
        return Err(Verdict::Failed(
            "it changes the launches, which copper does not do for a template with other instantiations".into(),
        ));
    }
    let terms = Terms {
        reshape: None,
        reassociated: lineage.reassociated,
        covers: lineage.covers.clone(),
    };
    let mut analyses = Vec::new();
    let mut checked = vec![format!("`{}` ({} launches)", this.0, this.1)];
    for (s, incumbent) in siblings.iter().zip(best) {
        let other =
            |why: String| format!("`{}`, another instantiation of the template: {why}", s.name);
        let kernel = lower_kernel(file, &s.name)
            .map_err(|d| Verdict::Failed(other(format!("it does not lower: {}", d.message))))?;
        let runs = s
            .checker
            .check_kernel(&kernel, terms.clone())
            .map_err(|why| Verdict::Failed(format!("it breaks {}", other(why.to_string()))))?;
        let analyzed = cache
            .analyze(
                file.clone(),
                &s.name,
                Some(kernel),
                &s.config,
                &settings.metrics,
                lineage.clone(),
            )
            .map_err(|why| Verdict::Failed(other(why.to_string())))?;
        if let Some(why) = self_check(&analyzed, &runs, &s.config).first() {
            return Err(Verdict::Unchecked(other(why.clone())));
        }
        let m = settings.rank_metric;
        let (old, new) = (incumbent.work(m), analyzed.work(m));
        let worse = compare_work(env.ranker, old, new).is_better();
        if worse && !compare_excused(env.ranker, new, old, excuse).is_better() {
            let why = compare_work(env.ranker, new, old);
            return Err(Verdict::NotBetter(format!(
                "it is worse for {}",
                other(why.reason().to_string())
            )));
        }
        match worse {
            true => checked.push(format!(
                "`{}` ({} launches; {}, at most a constant per warp)",
                s.name,
                s.checker.launches(),
                compare_work(env.ranker, new, old).reason()
            )),
            false => checked.push(format!("`{}` ({} launches)", s.name, s.checker.launches())),
        }
        analyses.push(analyzed);
    }
    Ok(Checked {
        analyses,
        notes: vec![format!(
            "the template's rewrite checked for every instantiation: {}",
            checked.join(", ")
        )],
    })
}

/// The rewrite of a template that another instantiation's search (the
/// lead's) chose, as it changes this instantiation.
#[derive(Clone, Debug, PartialEq)]
pub struct Through {
    /// The instantiation whose search chose it.
    pub lead: String,
    /// Its transforms, each with why it helps this instantiation: the
    /// ranking metric's comparison for this instantiation's bounds.
    pub applied: Vec<Applied>,
    /// Whether this instantiation's bound is better by the ranking too
    /// (a template is rewritten for its lead: the others' bounds may not
    /// fall).
    pub better: bool,
}

impl KernelResult {
    /// Takes the rewrite of the template that `lead`'s search chose (`lead`
    /// is another instantiation of the template this one instantiates) as
    /// this instantiation's result, when `lead` improved and its rewrite
    /// was checked for this one; otherwise nothing changes.
    pub fn adopt(&mut self, lead: &KernelResult, settings: &Settings) {
        if !lead.improved() || self.improved() {
            return;
        }
        let Some(mine) = lead.instances.iter().find(|a| a.function.name == self.name) else {
            return;
        };
        let m = settings.rank_metric;
        let verdict = compare_work(&self.ranker, mine.work(m), self.original.work(m));
        let applied = lead
            .applied
            .iter()
            .map(|a| Applied {
                why: verdict.reason().to_string(),
                ..a.clone()
            })
            .collect();
        self.best = mine.clone();
        self.through = Some(Through {
            lead: lead.name.clone(),
            applied,
            better: verdict.is_better(),
        });
    }
}
