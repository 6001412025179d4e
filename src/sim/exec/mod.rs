//! Lock-step execution of the warps of one block (RaCUDA Fig. 3 per warp,
//! Fig. 6 for `__syncthreads()`), charging resource counters.
//!
//! This module holds the launch and block state and the block scheduler
//! (warps run in turn up to each barrier); the submodules each do one job:
//! `control` runs one warp's instructions on its SIMT reconvergence
//! stack, `memory` performs array accesses (bounds, cost, site
//! statistics, race detection, atomics), and `eval` evaluates expressions.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;

use crate::cost::{Counter, Counts, Hardware, COUNTERS};
use crate::ir::{Kernel, Scalar};
use crate::source::Span;

use super::code::Ins;
use crate::launch::Shape;
use control::Frame;

mod coalescing;
mod consecutive;
mod control;
mod eval;
mod memory;

/// Values of one expression in every lane of a warp, as bit patterns of
/// the expression's type.
pub type Lanes = [u64; 32];
const ZERO_LANES: Lanes = [0; 32];

/// Where an array lives during a launch.
#[derive(Clone, Copy, Debug)]
pub enum Storage {
    /// Index into the launch's global arrays.
    Global(usize),
    /// Index into the block's shared arrays.
    Shared(usize),
    /// Index into each warp's local arrays.
    Local(usize),
}

/// A global array of a launch: element bits, shared by all blocks.
pub struct GlobalArray {
    /// Type of each component of an element.
    pub types: Vec<Scalar>,
    /// Bit patterns, one per component of each element.
    pub data: Vec<AtomicU64>,
    /// Which blocks touched each element, when races between blocks are
    /// detected or recorded ([`Races`]); empty otherwise.
    pub touched: Vec<AtomicU64>,
}

/// What a launch does when blocks access the same global element, one of
/// them writing (recorded for the arrays whose [`GlobalArray::touched`] is
/// kept).
#[derive(Clone, Copy, Debug)]
pub enum Races<'a> {
    /// Nothing: blocks run in launch order.
    Off,
    /// Such an access is an error, a data race between blocks.
    Detect,
    /// Blocks run in parallel: such an access sets the flag and stops the
    /// block, so that the launch runs again in launch order
    /// (`sim::order`).
    Record(&'a std::sync::atomic::AtomicBool),
}

/// Statistics of one access site over a launch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SiteStats {
    /// Warp-level requests.
    pub requests: u64,
    /// Lanes that took part, summed over requests.
    pub lanes: u64,
    /// Transactions (global) or conflict degrees (shared), summed.
    pub transactions: u64,
    /// Largest transactions/conflict degree of one request.
    pub max_transactions: u64,
    /// Global requests that took more transactions than the same lanes
    /// would at consecutive elements from an aligned start (lane `l` at
    /// element `l`): uncoalesced requests. 0 for shared accesses.
    pub uncoalesced: u64,
    /// Uncoalesced requests in which the lanes of some row of the block
    /// took more transactions than they would at consecutive elements from
    /// *any* start (lane `l` at element `l + s`): more than misalignment
    /// explains.
    pub scattered: u64,
}

impl SiteStats {
    /// Adds another block's statistics.
    pub fn merge(&mut self, o: &SiteStats) {
        self.requests += o.requests;
        self.lanes += o.lanes;
        self.transactions += o.transactions;
        self.max_transactions = self.max_transactions.max(o.max_transactions);
        self.uncoalesced += o.uncoalesced;
        self.scattered += o.scattered;
    }
}

/// A runtime error at a source location, in a given block and thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimError {
    /// What went wrong.
    pub message: String,
    /// Where in the source.
    pub span: Span,
    /// `blockIdx`
    pub block: [u64; 3],
    /// `threadIdx` of a thread involved.
    pub thread: [u64; 3],
    /// Whether it is a data race (two threads accessing one element, one
    /// of them writing, in no fixed order or with different values).
    pub race: bool,
}

/// What the launch gives every block.
pub struct LaunchCtx<'a> {
    /// The kernel.
    pub kernel: &'a Kernel,
    /// Its flattened code.
    pub code: &'a [Ins<'a>],
    /// Hardware model.
    pub hw: Hardware,
    /// Launch shape.
    pub shape: Shape,
    /// Bit patterns of scalar parameters, by variable.
    pub param_values: &'a [u64],
    /// Storage of every array.
    pub storage: &'a [Storage],
    /// Global arrays.
    pub globals: &'a [GlobalArray],
    /// Lengths of shared arrays (elements).
    pub shared_lens: &'a [u64],
    /// Lengths of local arrays (elements per lane).
    pub local_lens: &'a [u64],
    /// Most instructions one warp may execute.
    pub step_budget: u64,
    /// When the simulation must stop (see [`crate::sim::SimOptions`]).
    pub deadline: Option<std::time::Instant>,
    /// Whether a read of a shared element no thread of the block wrote
    /// is an error (the checks' mode, with race detection): shared memory
    /// starts undefined, whatever the simulator's zeros say.
    pub detect_uninitialized: bool,
    /// What accesses of global elements by several blocks do
    /// ([`Races`]).
    pub races: Races<'a>,
    /// Whether each warp runs as two half-warps, lanes 0–15 then 16–31,
    /// each up to the next barrier ([`crate::sim::SimOptions::split_warps`]).
    pub split_warps: bool,
    /// Whether each warp also counts its costs per statement
    /// ([`Warp::by_statement`]).
    pub by_statement: bool,
    /// The launch's work limit, all warps together, named when a block
    /// is stopped by it ([`crate::sim::SimOptions::max_steps`]).
    pub max_steps: Option<u64>,
}

/// A warp's progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Running,
    AtSync,
    Done,
}

/// One warp's state.
pub struct Warp {
    /// Index of the warp in its block.
    pub index: u64,
    valid: u32,
    /// `threadIdx` of each lane.
    tid: [[u64; 3]; 32],
    vars: Vec<Lanes>,
    locals: Vec<Vec<u64>>,
    pc: usize,
    mask: u32,
    frames: Vec<Frame>,
    status: Status,
    /// Resource counters charged so far.
    pub counts: Counts,
    /// Counters at the last barrier (for span).
    pub counts_at_sync: Counts,
    /// Span (per metric) at the last barrier.
    pub span_base: Vec<f64>,
    steps: u64,
    /// Work units charged so far: its instructions, and its lanes'
    /// global and shared accesses ([`ACCESS_LANES_PER_UNIT`]).
    work: u64,
    span: Span,
    /// With [`LaunchCtx::by_statement`]: the counters charged while each
    /// statement ran, by the start of its span (loop bookkeeping goes to
    /// the statement before it).
    pub by_statement: Option<HashMap<usize, Counts>>,
}

/// A block being executed.
pub struct Block<'a> {
    ctx: &'a LaunchCtx<'a>,
    /// `blockIdx`
    pub block: [u64; 3],
    shared: Vec<Vec<u64>>,
    /// Per shared array, which elements' values were written in this
    /// block (only with [`LaunchCtx::detect_uninitialized`]).
    shared_written: Vec<Vec<bool>>,
    /// While a value stored to shared memory is computed
    /// ([`Block::store`]): the lanes whose value read an element no thread
    /// wrote (the store leaves their elements undefined in turn).
    undefined_lanes: Option<u32>,
    /// Per-site statistics.
    pub sites: Vec<SiteStats>,
    /// Per array (by [`ArrayId`]): one past the largest element index
    /// accessed, 0 when none was.
    pub extents: Vec<u64>,
    /// The warps.
    pub warps: Vec<Warp>,
    /// Most instructions of all warps of this block together: past it,
    /// the block stops with the launch's work-limit error.
    pub cap: u64,
    /// Instructions the warps ran in the runs of them that ended.
    spent: u64,
    /// Most work units the warp running now may reach (its units when it
    /// started plus what is left of `cap`).
    warp_cap: u64,
    /// What coalesced accesses take, by lanes and footprint.
    consecutive: consecutive::ConsecutiveMemo,
}

/// Lanes of a global or shared access charged one work unit together:
/// such an access costs the simulator about as much per two lanes
/// (bounds, element, race and coalescing bookkeeping) as a whole warp
/// instruction of arithmetic, so that a unit takes about the same time
/// whatever the kernel does (`docs/optimize.md`; `cargo bench --bench
/// simulate` prints the time a unit takes in loops of each kind: before
/// accesses were charged, a unit of a loop of global accesses took 8
/// times one of arithmetic).
pub const ACCESS_LANES_PER_UNIT: u64 = 2;

fn lanes_of(mask: u32) -> impl Iterator<Item = usize> {
    (0..32).filter(move |l| mask & (1 << l) != 0)
}

impl<'a> Block<'a> {
    /// A block ready to run.
    pub fn new(ctx: &'a LaunchCtx<'a>, block: [u64; 3], metrics: usize) -> Block<'a> {
        let threads = ctx.shape.block_threads();
        let warp = ctx.hw.warp_size as u64;
        let halves: &[u32] = if ctx.split_warps {
            &[0x0000_ffff, 0xffff_0000]
        } else {
            &[u32::MAX]
        };
        let warps = (0..ctx.shape.warps_per_block(warp))
            .flat_map(|w| {
                let n = (threads - w * warp).min(warp);
                let valid = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
                halves
                    .iter()
                    .filter(move |&&half| valid & half != 0)
                    .map(move |&half| Warp::new(ctx, w, valid & half, metrics))
            })
            .collect();
        Block {
            ctx,
            block,
            shared: ctx
                .shared_lens
                .iter()
                .map(|&l| vec![0u64; l as usize])
                .collect(),
            shared_written: ctx
                .shared_lens
                .iter()
                .map(|&l| {
                    vec![
                        false;
                        if ctx.detect_uninitialized {
                            l as usize
                        } else {
                            0
                        }
                    ]
                })
                .collect(),
            undefined_lanes: None,
            sites: vec![SiteStats::default(); ctx.kernel.sites.len()],
            extents: vec![0; ctx.kernel.arrays.len()],
            warps,
            cap: u64::MAX,
            spent: 0,
            warp_cap: u64::MAX,
            consecutive: consecutive::ConsecutiveMemo::default(),
        }
    }

    /// Runs every warp to completion. `on_barrier` is called at each
    /// barrier with the warps (to update spans).
    pub fn run(&mut self, mut on_barrier: impl FnMut(&mut [Warp])) -> Result<(), SimError> {
        loop {
            for w in 0..self.warps.len() {
                if self.warps[w].status == Status::Running {
                    let mut warp = std::mem::replace(&mut self.warps[w], placeholder());
                    let before = warp.work;
                    self.warp_cap = before.saturating_add(self.cap.saturating_sub(self.spent));
                    let r = self.run_warp(&mut warp);
                    self.spent = self.spent.saturating_add(warp.work - before);
                    self.warps[w] = warp;
                    r?;
                }
            }
            if self.warps.iter().all(|w| w.status == Status::Done) {
                return Ok(());
            }
            on_barrier(&mut self.warps);
            for w in &mut self.warps {
                if w.status == Status::AtSync {
                    w.status = Status::Running;
                }
            }
        }
    }

    fn thread_of(&self, w: &Warp, lane: usize) -> [u64; 3] {
        w.tid[lane]
    }

    fn error(&self, w: &Warp, lane: usize, span: Span, message: String) -> SimError {
        SimError {
            message,
            span,
            block: self.block,
            thread: self.thread_of(w, lane),
            race: false,
        }
    }

    fn charge(w: &mut Warp, c: Counter) {
        Self::charge_n(w, c, 1);
    }

    /// Charges counter `c` `n` times, to the warp and, when counted, to
    /// the statement running.
    fn charge_n(w: &mut Warp, c: Counter, n: u64) {
        w.counts[c as usize] += n;
        if let Some(by) = w.by_statement.as_mut() {
            by.entry(w.span.start).or_insert([0; COUNTERS])[c as usize] += n;
        }
    }
}

fn placeholder() -> Warp {
    Warp {
        index: 0,
        valid: 0,
        tid: [[0; 3]; 32],
        vars: Vec::new(),
        locals: Vec::new(),
        pc: 0,
        mask: 0,
        frames: Vec::new(),
        status: Status::Done,
        counts: [0; COUNTERS],
        counts_at_sync: [0; COUNTERS],
        span_base: Vec::new(),
        steps: 0,
        work: 0,
        span: Span::SYNTHETIC,
        by_statement: None,
    }
}

impl Warp {
    /// Warp `w` of a block of launch `ctx`, its lanes `valid` running.
    fn new(ctx: &LaunchCtx, w: u64, valid: u32, metrics: usize) -> Warp {
        let warp = ctx.hw.warp_size as u64;
        let [bx, by, _] = ctx.shape.block().to_array();
        let mut tid = [[0u64; 3]; 32];
        for (lane, t) in tid.iter_mut().enumerate() {
            let lin = w * warp + lane as u64;
            *t = [lin % bx, (lin / bx) % by, lin / (bx * by)];
        }
        Warp {
            index: w,
            valid,
            tid,
            vars: vec![ZERO_LANES; ctx.kernel.vars.len()],
            locals: ctx
                .local_lens
                .iter()
                .map(|&l| vec![0u64; (l * 32) as usize])
                .collect(),
            pc: 0,
            mask: valid,
            frames: Vec::new(),
            status: Status::Running,
            counts: [0; COUNTERS],
            counts_at_sync: [0; COUNTERS],
            span_base: vec![0.0; metrics],
            steps: 0,
            work: 0,
            span: ctx.kernel.span,
            by_statement: ctx.by_statement.then(HashMap::new),
        }
    }

    /// Lanes of this warp that exist (the last warp of a block may be partial).
    pub fn valid_lanes(&self) -> u32 {
        self.valid
    }

    /// Instructions executed so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Work units charged so far ([`crate::sim::work`]): one per
    /// instruction, and one per [`ACCESS_LANES_PER_UNIT`] lanes of each
    /// global or shared access.
    pub fn work(&self) -> u64 {
        self.work
    }

    /// Sets the scalar parameters and symbols in every lane.
    pub fn seed_params(&mut self, values: &[u64], k: &Kernel) {
        for (v, var) in k.vars.iter().enumerate() {
            if var.kind.is_input() {
                self.vars[v] = [values[v]; 32];
            }
        }
    }
}
