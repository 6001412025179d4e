//! The AARA bound engine (automatic amortized resource analysis, after
//! RaCUDA): a sound worst-case cost bound per
//! warp, as a polynomial in the kernel's parameters, for any metric.
//!
//! Pipeline ([`prepare`], once per kernel): jump elimination → ghost
//! counters for loops the launch fixes → thread dependence → symbols and
//! atoms → linear facts → base functions → memory bounds per access site.
//! Then per metric ([`Prepared::bound`]): backward constraint generation
//! (RaCUDA Fig. 4) → lexicographic LP (highest degree first) → the entry
//! potential, bounded over the kernel's inputs.

pub mod aara;
mod assumption;
pub mod base;
pub mod check;
mod counter;
mod exact;
pub mod expr;
mod floor;
pub mod ghost;
mod lexi;
mod limit;
pub mod lp;
pub mod overflow;
pub mod potential;
mod reason;
pub mod stride;
mod wrap;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::absint::deps::{self, Dep, DepFacts, LaunchFacts, State};
use crate::absint::divmod::{self, WarpIndex};
use crate::absint::facts::{self, LinFacts};
use crate::absint::linear::{Constraints, LinExpr, Sym};
use crate::absint::memory;
use crate::absint::symbols::{SymKind, Symbols};
use crate::cost::{CostTable, Hardware, Metric};
use crate::cuda::relaunch::Reshape;
use crate::ir::sites::load_index;
use crate::ir::structured::{without_jumps, FlagKind};
use crate::ir::{Kernel, SiteId, Stmt, VarId, VarKind};
use crate::launch::{Dims, Part};
use crate::poly::{Poly, Rational};
use aara::Aara;
pub use assumption::{AssumptionRecord, GridCause, InputAssumption, Subject};
use base::Bases;
pub use expr::{BoundExpr, Term};
use lp::{Lin, LpError};
use potential::Pot;
pub use reason::NoBound;

/// What the analysis is told about the launch and hardware.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Hardware model.
    pub hw: Hardware,
    /// Block shape, when fixed (the bound is per warp of such a block).
    pub block: Option<Dims>,
    /// Grid shape, when fixed.
    pub grid: Option<Dims>,
    /// Highest degree of the base functions (1 to 4).
    pub degree: u32,
    /// Largest LP (variables plus constraints) solved; a kernel needing a
    /// larger one gets "no bound".
    pub max_lp: usize,
    /// Most statement visits of the abstract interpretation
    /// ([`facts::Limits::steps`]), every run of it for the kernel
    /// counted on its own: the deterministic work limit, past which every
    /// metric gets "no bound" saying so.
    pub max_steps: usize,
    /// Wall-clock safety net for one kernel, preparation and every metric
    /// together; past it, the metrics not yet bounded get "no bound", which
    /// says that a faster machine may get further. Generous: the work
    /// limits decide first.
    pub budget: Duration,
}

/// Default [`Config::max_steps`].
pub const DEFAULT_MAX_STEPS: usize = 200_000;

/// Default [`Config::budget`], in seconds.
pub const DEFAULT_BUDGET: u64 = 200;

impl Default for Config {
    fn default() -> Config {
        Config {
            hw: Hardware::default(),
            block: None,
            grid: None,
            degree: 2,
            max_lp: 200_000,
            max_steps: DEFAULT_MAX_STEPS,
            budget: Duration::from_secs(DEFAULT_BUDGET),
        }
    }
}

impl Config {
    /// The configuration for a kernel that runs on its launch reshaped (a
    /// rewrite that changed the launch with it), or as it is. A part the
    /// reshape takes past CUDA's limits (a grid of 100000 blocks along x
    /// with x and y exchanged) is no longer known: bounds then hold for
    /// any.
    pub fn reshaped(self, reshape: Option<Reshape>) -> Config {
        let Some(r) = reshape else { return self };
        let known = |d: Option<Dims>, part, f: &dyn Fn([u64; 3]) -> [u64; 3]| {
            d.and_then(|d| Dims::checked(part, f(d.to_array())).ok())
        };
        Config {
            block: known(self.block, Part::Block, &|b| r.block(b)),
            grid: known(self.grid, Part::Grid, &|g| r.grid(g)),
            ..self
        }
    }
}

/// A kernel prepared for bounding under any metric.
pub struct Prepared {
    /// The analysis view of the kernel (jump-free, with ghost counters).
    pub kernel: Kernel,
    deps: DepFacts,
    lin: LinFacts,
    syms: Symbols,
    bases: Bases,
    mem: HashMap<SiteId, u64>,
    /// What the row/column splits tell of each access's index.
    splits: HashMap<SiteId, WarpIndex>,
    ghosts: HashMap<VarId, crate::absint::trips::Trips>,
    /// Each base's factors at the kernel's start, bounded over the inputs
    /// (`None` where it has no value per warp there).
    entry: Vec<Option<Vec<Poly>>>,
    entry_state: State,
    config: Config,
    /// When preparation started (the budget counts from there).
    started: Instant,
    /// Why preparation stopped short, when it did.
    over_budget: Option<NoBound>,
    /// The statement holding each access site.
    sites: crate::ir::sites::SitePaths,
    /// The jump flags [`without_jumps`] added (not the kernel's
    /// variables), and the jump each records.
    flags: Vec<(VarId, FlagKind)>,
    memo: Mutex<aara::TransferMemo>,
    /// What the bounds assume of the inputs (empty for most kernels): a
    /// bound holds for the inputs that satisfy all of them.
    pub assumptions: Vec<InputAssumption>,
}

/// The result of bounding one projection of a metric.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// A bound per warp.
    Bound(BoundExpr),
    /// No bound: why, and the loop it is about when there is one.
    NoBound(NoBound, Option<crate::source::Span>),
}

/// Bounds of one metric for one kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricBound {
    /// Metric name.
    pub metric: String,
    /// Per-warp bound of the work projection (the lock-step cost).
    pub work: Outcome,
    /// Per-warp bound of the span projection.
    pub span: Outcome,
    /// LP size: variables.
    pub lp_vars: usize,
    /// LP size: constraints.
    pub lp_constraints: usize,
    /// Seconds spent.
    pub seconds: f64,
    /// What the bounds assume of the kernel's inputs: they hold for the
    /// inputs that satisfy every one (empty for most kernels).
    pub assumes: Vec<InputAssumption>,
}

/// What the analyses know of the launch under `config`.
fn launch_facts(config: &Config) -> LaunchFacts {
    LaunchFacts {
        block: config.block,
        grid: config.grid,
        warp: config.hw.warp_size as u64,
    }
}

/// Prepares a kernel for bounding.
pub fn prepare(k: &Kernel, config: Config) -> Prepared {
    let started = Instant::now();
    let launch = launch_facts(&config);
    let (mut kernel, flags) = without_jumps(k);
    let (mut ghosts, grown) = ghost::add_ghosts(&mut kernel, &launch, &flags);
    let mut deps = deps::analyze_with_flags(&kernel, &launch, &flags);
    let flag_vars = variables(&flags);
    let limits = facts::Limits {
        steps: config.max_steps,
        deadline: started + config.budget,
    };
    let mut syms = Symbols::new(&kernel, launch);
    // Past a limit the facts are empty (every query answers "unknown")
    // and every metric reports the limit.
    let mut lin = facts::analyze(&kernel, &syms, &ghosts, limits);
    let mut assumptions = Vec::new();
    if let Ok(first) = &lin {
        // Counters that may wrap around: the analysis is redone under
        // assumptions on the inputs and the grid that keep them in range,
        // kept where they help.
        let analyze = |s: &Symbols| facts::analyze(&kernel, s, &ghosts, limits).ok();
        if let Some(found) = wrap::assume(&kernel, first, &syms, &flag_vars, &analyze) {
            (assumptions, syms, lin) = (found.0, found.1, Ok(found.2));
        }
    }
    // The trip counts of loops whose signed counters grow up to an input
    // hold where those counters cannot overflow.
    assumptions.extend(grown);
    let assumptions = assumption::merged(assumptions);
    if let Ok(first) = &lin {
        // Loops whose counter starts at a different value in each lane get
        // floor ghosts, and the analyses are redone with them.
        let floors = floor::add_floors(&mut kernel, &deps, first, &syms, &flags);
        if !floors.is_empty() {
            ghosts.extend(floors);
            deps = deps::analyze_with_flags(&kernel, &launch, &flags);
            syms = assuming(Symbols::new(&kernel, launch), &assumptions);
            lin = facts::analyze(&kernel, &syms, &ghosts, limits);
        }
    }
    let over_budget = lin.as_ref().err().map(|cut| match cut {
        facts::Cut::Steps(n) => NoBound::OverSteps(*n),
        facts::Cut::WallClock => NoBound::OverBudget(config.budget.as_secs_f64()),
    });
    let lin = lin.unwrap_or_default();
    let bases = base::collect(
        &kernel,
        &deps,
        &lin,
        &syms,
        config.degree.clamp(1, 4),
        &flag_vars,
    );
    let splits = divmod::analyze(&kernel, &launch);
    let mem = memory_bounds(&kernel, &deps, &splits, &config.hw, config.block);
    let entry = (0..bases.len())
        .map(|i| {
            bases
                .factors(i)
                .iter()
                .map(|&f| syms.entry_poly(&kernel, &bases.linear[f], true))
                .collect()
        })
        .collect();
    let entry_state = kernel
        .vars
        .iter()
        .map(|v| match v.kind {
            VarKind::Param(_) | VarKind::Symbol => Dep::UNIFORM,
            VarKind::Local => Dep::constant_value(0),
        })
        .collect();
    let sites = crate::ir::sites::SitePaths::build(&kernel.body);
    Prepared {
        kernel,
        deps,
        lin,
        syms,
        bases,
        mem,
        splits,
        ghosts,
        entry,
        entry_state,
        config,
        started,
        over_budget,
        sites,
        flags,
        memo: Mutex::default(),
        assumptions,
    }
}

/// The variables of jump flags.
fn variables(flags: &[(VarId, FlagKind)]) -> Vec<VarId> {
    flags.iter().map(|(v, _)| *v).collect()
}

/// `syms` under `assumptions`.
fn assuming(mut syms: Symbols, assumptions: &[InputAssumption]) -> Symbols {
    for a in assumptions {
        a.apply(&mut syms);
    }
    syms
}

/// Worst-case transactions (global) or conflict degree (shared) of every
/// access site, from the thread dependence of its index and, where one
/// gives less, what its row/column split tells ([`divmod`]).
pub fn memory_bounds(
    k: &Kernel,
    deps: &DepFacts,
    splits: &HashMap<SiteId, WarpIndex>,
    hw: &Hardware,
    block: Option<Dims>,
) -> HashMap<SiteId, u64> {
    k.sites
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let a = &k.arrays[s.array];
            let fp = a.footprint(s);
            let dep = deps.index.get(&i).copied().unwrap_or(Dep::Varying);
            let split = splits.get(&i).copied();
            let n = if a.is_shared() {
                let conflicts = |d| memory::conflicts(d, fp, a.fixed_len(), hw, block);
                match split {
                    // Only an exact index keeps the lane order the banks
                    // depend on.
                    Some(WarpIndex::Exact(d)) => conflicts(dep).min(conflicts(d)),
                    _ => conflicts(dep),
                }
            } else {
                let t = memory::transactions(dep, fp, hw, block);
                split.map_or(t, |w| t.min(w.transactions(fp, hw, block)))
            };
            (i, n)
        })
        .collect()
}

/// The range of an array index over all threads of a block: lower and
/// upper bounds as polynomials over the parameters, `blockIdx`, `blockDim`
/// and `gridDim` (every bound listed holds; several may).
#[derive(Clone, Debug, PartialEq)]
pub struct IndexBounds {
    /// `index ≥ each`.
    pub lower: Vec<Poly>,
    /// `index ≤ each`.
    pub upper: Vec<Poly>,
}

impl Prepared {
    /// The range of the index of access site `site` over the threads of a
    /// block (what global-to-shared needs: the segment a block touches).
    /// The site's span identifies the access in the source and the AST.
    /// `None` when the index has no linear form.
    pub fn index_bounds(&self, site: SiteId) -> Option<IndexBounds> {
        let (index, ctx, _) = self.site_context(site)?;
        let l = self.syms.linearize(index, Some(ctx))?;
        let keep =
            |s: Sym| self.syms.is_input(s) || matches!(self.syms.kind(s), SymKind::BlockIdx(_));
        let (lower, upper) = ctx.bounds_over(&l, &keep);
        let poly = |l: &LinExpr| {
            let mut p = Poly::constant(l.constant);
            for (&s, &a) in &l.coeffs {
                p += Poly::var(&self.syms.name(&self.kernel, s)).scale(a);
            }
            p
        };
        Some(IndexBounds {
            lower: lower.iter().map(poly).collect(),
            upper: upper.iter().map(poly).collect(),
        })
    }

    /// Whether the lanes of each warp access distinct elements at `site`
    /// (every lane's element its own), as far as the analysis proves: the
    /// index is a lane-injective affine function of the thread index, plus
    /// uniform terms, times uniform factors the facts show nonzero.
    pub fn lane_injective(&self, site: SiteId) -> bool {
        let Some((index, ctx, st)) = self.site_context(site) else {
            return false;
        };
        self.injective(index, ctx, st)
    }

    fn injective(&self, e: &crate::ir::Expr, ctx: &Constraints, st: &State) -> bool {
        use crate::cuda::ast::BinOp;
        use crate::ir::ExprKind as K;
        let launch = self.syms.launch();
        let uniform = |x: &crate::ir::Expr| deps::dep_of(&self.kernel, launch, x, st).is_uniform();
        let nonzero = |x: &crate::ir::Expr| {
            self.syms.linearize(x, Some(ctx)).is_some_and(|l| {
                ctx.entails_ge0(&l.sub(&LinExpr::int(1)))
                    || ctx.entails_ge0(&l.neg().sub(&LinExpr::int(1)))
            })
        };
        match &e.kind {
            K::Convert { value, .. } if !value.ty.is_float() && !e.ty.is_float() => {
                self.injective(value, ctx, st)
            }
            K::Binary(BinOp::Add | BinOp::Sub, a, b) if uniform(a) => self.injective(b, ctx, st),
            K::Binary(BinOp::Add | BinOp::Sub, a, b) if uniform(b) => self.injective(a, ctx, st),
            K::Binary(BinOp::Mul, a, b) if uniform(a) && nonzero(a) => self.injective(b, ctx, st),
            K::Binary(BinOp::Mul, a, b) if uniform(b) && nonzero(b) => self.injective(a, ctx, st),
            _ => {
                let Dep::Affine(coefs, _) = deps::dep_of(&self.kernel, launch, e, st) else {
                    return false;
                };
                let mut k = [0i64; 3];
                for d in 0..3 {
                    match coefs[d] {
                        deps::Coef::Known(c) => k[d] = c,
                        deps::Coef::Unknown => return false,
                    }
                }
                // Without a block shape, rows narrower than a warp repeat
                // `threadIdx.x` within a warp: nothing is injective.
                let Some(block) = launch.block else {
                    return false;
                };
                memory::warps_of(block, launch.warp).iter().all(|lanes| {
                    let mut offs: Vec<i64> = lanes
                        .iter()
                        .map(|t| k[0] * t[0] + k[1] * t[1] + k[2] * t[2])
                        .collect();
                    let n = offs.len();
                    offs.sort_unstable();
                    offs.dedup();
                    offs.len() == n
                })
            }
        }
    }

    /// The index expression of a site, with the facts and dependence state
    /// where it is evaluated.
    fn site_context(&self, site: SiteId) -> Option<(&crate::ir::Expr, &Constraints, &State)> {
        type Found<'k> = Option<(&'k crate::ir::Expr, &'k Constraints, &'k State)>;
        fn walk<'k>(
            stmts: &'k [Stmt],
            site: SiteId,
            lin: &'k LinFacts,
            deps: &'k DepFacts,
        ) -> Found<'k> {
            for s in stmts {
                let k = deps::key(s);
                let before = lin.before.get(&k).zip(deps.before.get(&k));
                let at = |e: &'k crate::ir::Expr| Some(e).zip(before).map(|(e, (c, d))| (e, c, d));
                let here = |e: &'k crate::ir::Expr| load_index(e, site).and_then(at);
                let found = match s {
                    Stmt::Assign { value, .. } => here(value),
                    Stmt::Store { access, value, .. } | Stmt::Atomic { access, value, .. }
                        if access.site == site =>
                    {
                        let _ = value;
                        at(&access.index)
                    }
                    Stmt::Store { access, value, .. } => {
                        here(&access.index).or_else(|| here(value))
                    }
                    Stmt::Atomic {
                        access,
                        value,
                        compare,
                        ..
                    } => here(&access.index)
                        .or_else(|| here(value))
                        .or_else(|| compare.as_ref().and_then(here)),
                    Stmt::If {
                        cond, then, els, ..
                    } => here(cond)
                        .or_else(|| walk(then, site, lin, deps))
                        .or_else(|| walk(els, site, lin, deps)),
                    Stmt::Loop {
                        cond, body, step, ..
                    } => cond
                        .as_ref()
                        .and_then(|c| {
                            let head = lin.head.get(&k).zip(deps.head.get(&k));
                            load_index(c, site).zip(head).map(|(e, (c, d))| (e, c, d))
                        })
                        .or_else(|| walk(body, site, lin, deps))
                        .or_else(|| walk(step, site, lin, deps)),
                    Stmt::Scope { body, .. } => walk(body, site, lin, deps),
                    _ => None,
                };
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        let stmt = self.sites.stmt(&self.kernel.body, site)?;
        walk(std::slice::from_ref(stmt), site, &self.lin, &self.deps)
    }

    /// The dependence facts of [`Prepared::kernel`] with uniformity
    /// across the whole block ([`deps::analyze_block_wide`]): whether
    /// every thread of a block takes a branch or none does.
    pub fn block_wide_deps(&self) -> DepFacts {
        deps::analyze_block_wide(&self.kernel, &launch_facts(&self.config), &self.flags)
    }

    /// The jump flags of [`Prepared::kernel`] and the jump each records.
    pub fn flags(&self) -> &[(VarId, FlagKind)] {
        &self.flags
    }

    /// Whether the condition of the `if` or loop written at `span` is the
    /// same in every lane of a warp (every copy, for code inlined several
    /// times); `None` when there is no such statement.
    pub fn uniform_at(&self, span: crate::source::Span) -> Option<bool> {
        let mut found = None;
        crate::ir::visit_stmts(&self.kernel.body, &mut |s| {
            let at = match s {
                Stmt::If { span, .. } | Stmt::Loop { span, .. } => *span,
                _ => return,
            };
            if at == span {
                let u = self
                    .deps
                    .uniform_cond
                    .get(&deps::key(s))
                    .copied()
                    .unwrap_or(false);
                found = Some(found.unwrap_or(true) && u);
            }
        });
        found
    }

    /// Whether the condition of the `if` or loop written at `span` only
    /// tests ranges of the thread index (in every inlined copy), so that
    /// divergence there is confined to the edges of the ranges:
    /// - an `if` whose condition is built with `&&`, `||` and `!` from
    ///   comparisons of a value affine in `threadIdx` with a value the
    ///   same in every lane of the block (`i < n`, `x >= 1 && x < w - 1`,
    ///   `tid == 0`), and from such uniform values: a lane's side changes
    ///   only where the compared value crosses the bound, so only the
    ///   warps holding an edge of the range (the partial last warp of a
    ///   row) diverge. `block` is [`Prepared::block_wide_deps`] (computed
    ///   once by the caller): across the block, the lane index
    ///   `threadIdx.x % 32`, which splits every warp, is no affine value;
    /// - a loop whose every comparison tests a counter the loop steps,
    ///   affine in `threadIdx`, against a value uniform in the warp (a
    ///   grid-stride or lane-strided loop): the lanes' trip counts differ
    ///   by the counter's spread over the warp divided by its step, a
    ///   constant, so only the last rounds diverge.
    ///
    /// `false` when there is no such statement.
    pub fn range_test_at(&self, span: crate::source::Span, block: &DepFacts) -> bool {
        let launch = launch_facts(&self.config);
        let mut found = None;
        crate::ir::visit_stmts(&self.kernel.body, &mut |s| {
            let here = match s {
                Stmt::If { span: at, cond, .. } if *at == span => {
                    block.before.get(&deps::key(s)).is_some_and(|st| {
                        let test = RangeTest {
                            k: &self.kernel,
                            launch: &launch,
                            st,
                            block_wide: true,
                            counters: None,
                        };
                        test.holds(cond)
                    })
                }
                Stmt::Loop {
                    span: at,
                    cond: Some(cond),
                    body,
                    step,
                    ..
                } if *at == span => {
                    let mut counters = std::collections::BTreeSet::new();
                    deps::written(body, &mut counters);
                    deps::written(step, &mut counters);
                    self.deps.head.get(&deps::key(s)).is_some_and(|st| {
                        let test = RangeTest {
                            k: &self.kernel,
                            launch: &launch,
                            st,
                            block_wide: false,
                            counters: Some(&counters),
                        };
                        test.holds(cond)
                    })
                }
                _ => return,
            };
            found = Some(found.unwrap_or(true) && here);
        });
        found.unwrap_or(false)
    }

    /// Whether no thread can reach access site `site` under the launch
    /// analyzed: the facts before it are empty (it sits in a branch a
    /// condition on the launch's known dimensions rules out, as the
    /// original code a rewrite keeps for other blocks).
    pub fn unreachable(&self, site: SiteId) -> bool {
        self.site_context(site)
            .is_some_and(|(_, facts, _)| facts.is_bottom())
    }

    /// Whether at most one thread of a block can reach access site `site`:
    /// the facts there pin every `threadIdx` component that can vary (an
    /// access under `if (threadIdx.x == 0)`).
    pub fn single_thread(&self, site: SiteId) -> bool {
        let Some((_, ctx, _)) = self.site_context(site) else {
            return false;
        };
        (0..3u8).all(|d| {
            if self.config.block.is_some_and(|b| b[d as usize] == 1) {
                return true;
            }
            let Some(s) =
                (0..self.syms.len()).find(|&s| self.syms.kind(s) == SymKind::ThreadIdx(d))
            else {
                return false;
            };
            match crate::absint::symbols::int_bounds(ctx, &LinExpr::var(s)) {
                (Some(lo), Some(hi)) => lo == hi,
                _ => false,
            }
        })
    }

    /// The worst-case cost under `cost` of one run of each side (then,
    /// else) of the `if` written at `span`, when that side is loop-free;
    /// `None` when there is no such `if`. Every inlined copy counts: the
    /// dearest is given.
    pub fn branch_costs(
        &self,
        span: crate::source::Span,
        cost: &CostTable,
    ) -> Option<(Option<f64>, Option<f64>)> {
        let a = self.aara(cost);
        let mut found: Option<(Option<f64>, Option<f64>)> = None;
        let worse = |x: Option<f64>, y: Option<f64>| x.zip(y).map(|(x, y)| x.max(y));
        crate::ir::visit_stmts(&self.kernel.body, &mut |s| {
            if let Stmt::If {
                span: at,
                then,
                els,
                ..
            } = s
            {
                if *at == span {
                    let here = (a.straight_cost(then), a.straight_cost(els));
                    found = Some(match found {
                        Some((t, e)) => (worse(t, here.0), worse(e, here.1)),
                        None => here,
                    });
                }
            }
        });
        found
    }

    /// What the analysis was told: hardware, launch shape, budget.
    pub fn config(&self) -> Config {
        self.config
    }

    /// The thread dependence of the index of access site `site`.
    pub fn index_dep(&self, site: SiteId) -> Dep {
        self.deps.index.get(&site).copied().unwrap_or(Dep::Varying)
    }

    /// What the row/column split of access site `site`'s index tells
    /// ([`divmod`]), when it tells something.
    pub fn index_split(&self, site: SiteId) -> Option<WarpIndex> {
        self.splits.get(&site).copied()
    }

    /// The worst-case transactions (global) or conflict degree (shared) of
    /// one warp request at access site `site`.
    pub fn memory_bound(&self, site: SiteId) -> Option<u64> {
        self.mem.get(&site).copied()
    }

    /// Number of base functions.
    pub fn num_bases(&self) -> usize {
        self.bases.len()
    }

    fn aara(&self, cost: &CostTable) -> Aara<'_> {
        Aara {
            k: &self.kernel,
            deps: &self.deps,
            lin: &self.lin,
            syms: &self.syms,
            bases: &self.bases,
            cost: *cost,
            mem: &self.mem,
            ghosts: &self.ghosts,
            flags: &self.flags,
            targets: HashMap::new(),
            lanes: self.config.hw.warp_size as u64,
            lp: lp::Lp::default(),
            memo: &self.memo,
            excluded: std::collections::BTreeSet::new(),
        }
    }

    /// Bounds one metric (work and span projections).
    pub fn bound(&self, metric: &Metric) -> MetricBound {
        let start = Instant::now();
        let (work, vars, cons) = self.bound_table(&metric.work);
        let span = if metric.span == metric.work {
            work.clone()
        } else {
            self.bound_table(&metric.span).0
        };
        MetricBound {
            metric: metric.name.clone(),
            work,
            span,
            lp_vars: vars,
            lp_constraints: cons,
            seconds: start.elapsed().as_secs_f64(),
            assumes: self.assumptions.clone(),
        }
    }

    fn bound_table(&self, cost: &CostTable) -> (Outcome, usize, usize) {
        let over = || Outcome::NoBound(NoBound::OverBudget(self.config.budget.as_secs_f64()), None);
        if let Some(why) = &self.over_budget {
            return (Outcome::NoBound(why.clone(), None), 0, 0);
        }
        if self.started.elapsed() > self.config.budget {
            return (over(), 0, 0);
        }
        let (lp, entry) = self.constraints(cost, &std::collections::BTreeSet::new());
        let (vars, cons) = (lp.num_vars(), lp.num_constraints());
        if vars + cons > self.config.max_lp {
            let why = NoBound::LpTooLarge {
                vars,
                constraints: cons,
                limit: self.config.max_lp,
            };
            return (Outcome::NoBound(why, None), vars, cons);
        }
        if self.started.elapsed() > self.config.budget {
            return (over(), vars, cons);
        }
        let certain = self.aara(cost).certain_cost(&self.kernel.body);
        let outcome = match self.solve_lowest(cost, &lp, entry) {
            Ok((entry, x)) => below_certain(self.extract(&entry, &x), certain),
            Err(LpError::Infeasible) | Err(LpError::Unbounded) => {
                let (why, span) = reason::explain(self, cost);
                Outcome::NoBound(why, span)
            }
            Err(LpError::Solver(e)) => Outcome::NoBound(NoBound::SolverFailed(e), None),
            Err(LpError::Uncertified(e)) => Outcome::NoBound(NoBound::Uncertified(e), None),
        };
        (outcome, vars, cons)
    }

    /// The entry potential at the kernel's start, over the inputs, from an
    /// exact LP solution.
    fn extract(&self, entry: &Pot, x: &[Rational]) -> Outcome {
        let overflow = || Outcome::NoBound(NoBound::Overflow, None);
        let Some(mut constant) = entry.konst.eval_exact(x) else {
            return overflow();
        };
        let mut terms = Vec::new();
        for (&i, q) in &entry.coef {
            let Some(c) = q.eval_exact(x) else {
                return overflow();
            };
            if c <= Rational::ZERO {
                continue;
            }
            let Some(fs) = &self.entry[i] else {
                continue;
            };
            let mut coef = Some(c);
            let mut factors = Vec::new();
            for f in fs {
                match f.as_constant() {
                    Some(k) => coef = coef.and_then(|c| c.checked_mul(k.max(Rational::ZERO))),
                    None => factors.push(f.clone()),
                }
            }
            let Some(coef) = coef else {
                return overflow();
            };
            if factors.is_empty() {
                let Some(sum) = constant.checked_add(coef) else {
                    return overflow();
                };
                constant = sum;
            } else if !coef.is_zero() {
                terms.push(Term { coef, factors });
            }
        }
        match BoundExpr::new(constant, terms) {
            Some(e) => Outcome::Bound(e),
            None => overflow(),
        }
    }
}

/// A constant bound below the cost every warp certainly incurs is an
/// internal error (a bound of 0 for a kernel whose every path loads from
/// global memory): no bound, saying so, rather than a wrong number.
fn below_certain(outcome: Outcome, certain: f64) -> Outcome {
    match &outcome {
        Outcome::Bound(e) if e.terms.is_empty() && e.constant.to_f64() < certain - 1e-9 => {
            Outcome::NoBound(
                NoBound::BelowCertainCost {
                    bound: e.constant,
                    certain,
                },
                None,
            )
        }
        _ => outcome,
    }
}

/// Whether a condition only tests ranges of the thread index
/// ([`Prepared::range_test_at`]).
struct RangeTest<'a> {
    k: &'a Kernel,
    launch: &'a LaunchFacts,
    /// The dependences before the test.
    st: &'a State,
    /// Uniform across the block (an `if`) or the warp (a loop).
    block_wide: bool,
    /// For a loop, the variables it writes: the affine side of each
    /// comparison must be one of its counters.
    counters: Option<&'a std::collections::BTreeSet<VarId>>,
}

impl RangeTest<'_> {
    fn dep(&self, e: &crate::ir::Expr) -> Dep {
        if self.block_wide {
            deps::dep_of_block_wide(self.k, self.launch, e, self.st)
        } else {
            deps::dep_of(self.k, self.launch, e, self.st)
        }
    }

    /// Whether `e` mentions a counter of the loop (always, for an `if`).
    fn counted(&self, e: &crate::ir::Expr) -> bool {
        let Some(counters) = self.counters else {
            return true;
        };
        let mut found = false;
        e.visit(&mut |x| {
            if let crate::ir::ExprKind::Var(v) = &x.kind {
                found |= counters.contains(v);
            }
        });
        found
    }

    fn holds(&self, e: &crate::ir::Expr) -> bool {
        use crate::cuda::ast::BinOp;
        use crate::ir::{ExprKind, Unary};
        match &e.kind {
            ExprKind::And(a, b) | ExprKind::Or(a, b) => self.holds(a) && self.holds(b),
            ExprKind::Unary(Unary::Not, a) => self.holds(a),
            ExprKind::Convert { value, .. } => self.holds(value),
            ExprKind::Binary(
                BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne,
                a,
                b,
            ) => {
                let (da, db) = (self.dep(a), self.dep(b));
                let side = |x: &crate::ir::Expr, dx: Dep, dy: Dep| {
                    dx.affine_parts().is_some() && dy.is_uniform() && self.counted(x)
                };
                side(a, da, db) || side(b, db, da)
            }
            _ => self.dep(e).is_uniform(),
        }
    }
}

#[cfg(test)]
mod tests;
