//! Lock-step execution of the warps of one block (`000_…` Fig. 3 per warp,
//! Fig. 6 for `__syncthreads()`), charging resource counters.

use std::sync::atomic::{AtomicU64, Ordering};

use super::code::Ins;
use super::params::Shape;
use crate::cost::{Counter, Counts, Footprint, Hardware, COUNTERS};
use crate::ir::value::{binary, wrap, ArithError};
use crate::ir::{
    math, Access, ArrayId, AtomicOp, Builtin, Expr, ExprKind, Kernel, MathFn, Scalar, ScopeId,
    Unary, Value, VarKind,
};
use crate::source::Span;

/// Instructions a warp runs between two looks at the clock (when the
/// simulation has a deadline).
const DEADLINE_EVERY: u64 = 1 << 14;

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
    /// Element type.
    pub elem: Scalar,
    /// Element bit patterns.
    pub data: Vec<AtomicU64>,
    /// Which blocks touched each element, when races between blocks are
    /// detected ([`AccessState`]); empty otherwise.
    pub touched: Vec<AtomicU64>,
}

/// What blocks did to one global element so far, packed in a `u64`: a
/// race between blocks is one block writing an element another block
/// reads or writes (blocks are not ordered; atomics are exempt).
struct AccessState;

impl AccessState {
    const UNTOUCHED: u64 = 0;
    const READ_BY_MANY: u64 = u64::MAX;

    fn by(block: u64, write: bool) -> u64 {
        ((block + 1) << 1) | write as u64
    }

    /// The state after `block` accesses the element, or the other block
    /// it races with (`None`: several readers).
    fn next(cur: u64, block: u64, write: bool) -> Result<u64, Option<u64>> {
        match cur {
            Self::UNTOUCHED => Ok(Self::by(block, write)),
            Self::READ_BY_MANY if write => Err(None),
            Self::READ_BY_MANY => Ok(cur),
            s if s >> 1 == block + 1 => Ok(s | write as u64),
            s if s & 1 == 0 && !write => Ok(Self::READ_BY_MANY),
            s => Err(Some((s >> 1) - 1)),
        }
    }
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
}

/// A warp's progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Running,
    AtSync,
    Done,
}

/// Reconvergence frames of the SIMT stack.
#[derive(Clone, Debug)]
enum Frame {
    If {
        else_pc: usize,
        join_pc: usize,
        else_mask: u32,
        then_done: u32,
        in_else: bool,
    },
    Loop {
        scope: ScopeId,
        exit_pc: usize,
        step_pc: usize,
        done: u32,
        continued: u32,
    },
    Scope {
        scope: ScopeId,
        exit_pc: usize,
        exited: u32,
    },
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
    span: Span,
}

/// A block being executed.
pub struct Block<'a> {
    ctx: &'a LaunchCtx<'a>,
    /// `blockIdx`
    pub block: [u64; 3],
    shared: Vec<Vec<u64>>,
    /// Per-site statistics.
    pub sites: Vec<SiteStats>,
    /// Per array (by [`ArrayId`]): one past the largest element index
    /// accessed, 0 when none was.
    pub extents: Vec<u64>,
    /// The warps.
    pub warps: Vec<Warp>,
}

fn lanes_of(mask: u32) -> impl Iterator<Item = usize> {
    (0..32).filter(move |l| mask & (1 << l) != 0)
}

impl<'a> Block<'a> {
    /// A block ready to run.
    pub fn new(ctx: &'a LaunchCtx<'a>, block: [u64; 3], metrics: usize) -> Block<'a> {
        let threads = ctx.shape.block_threads();
        let warp = ctx.hw.warp_size as u64;
        let warps = (0..ctx.shape.warps_per_block(warp))
            .map(|w| {
                let n = (threads - w * warp).min(warp);
                let valid = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
                let [bx, by, _] = ctx.shape.block;
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
                    span: ctx.kernel.span,
                }
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
            sites: vec![SiteStats::default(); ctx.kernel.sites.len()],
            extents: vec![0; ctx.kernel.arrays.len()],
            warps,
        }
    }

    /// Runs every warp to completion. `on_barrier` is called at each
    /// barrier with the warps (to update spans).
    pub fn run(&mut self, mut on_barrier: impl FnMut(&mut [Warp])) -> Result<(), SimError> {
        loop {
            for w in 0..self.warps.len() {
                if self.warps[w].status == Status::Running {
                    let mut warp = std::mem::replace(&mut self.warps[w], placeholder());
                    let r = self.run_warp(&mut warp);
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

    /// A warp-level primitive on the lanes of `mask`, from its arguments'
    /// values in every lane. Lanes of the member mask that are not running
    /// (exited, or outside the block) do not take part. Undefined behaviour
    /// is an error: a shuffle reading a lane that is not running it, a
    /// width that is not a power of two up to the warp size.
    fn warp_call(&self, w: &Warp, f: MathFn, vals: &[Lanes], mask: u32) -> Result<Lanes, SimError> {
        let mut out = ZERO_LANES;
        let warp = self.ctx.hw.warp_size.min(32);
        let Some(first) = lanes_of(mask).next() else {
            return Ok(out);
        };
        if f == MathFn::ActiveMask {
            return Ok([mask as u64; 32]);
        }
        match f {
            MathFn::Ballot | MathFn::Any | MathFn::All => {
                let votes = lanes_of(mask)
                    .filter(|&l| vals[1][l] != 0)
                    .fold(0u32, |m, l| m | 1 << l);
                let members = vals[0][first] as u32 & mask;
                let v = match f {
                    MathFn::Ballot => (votes & members) as u64,
                    MathFn::Any => (votes & members != 0) as u64,
                    _ => (votes & members == members) as u64,
                };
                for l in lanes_of(mask) {
                    out[l] = v;
                }
            }
            _ => {
                for l in lanes_of(mask) {
                    let width = vals[3][l] as u32;
                    if !width.is_power_of_two() || width > warp {
                        return Err(self.error(
                            w,
                            l,
                            w.span,
                            format!("undefined behaviour: shuffle width {} is not a power of two up to {warp}", vals[3][l] as u32 as i32),
                        ));
                    }
                    let src = math::shuffle_source(f, l as u32, vals[2][l] as u32, width);
                    if src >= warp || mask & (1 << src) == 0 {
                        return Err(self.error(
                            w,
                            l,
                            w.span,
                            format!("undefined behaviour: a shuffle in lane {l} reads lane {src}, which is not running it"),
                        ));
                    }
                    out[l] = vals[1][src as usize];
                }
            }
        }
        Ok(out)
    }

    fn charge(w: &mut Warp, c: Counter) {
        w.counts[c as usize] += 1;
    }

    /// Runs a warp until it finishes or reaches a barrier.
    fn run_warp(&mut self, w: &mut Warp) -> Result<(), SimError> {
        let code = self.ctx.code;
        loop {
            if w.mask == 0 && !self.unwind(w) {
                w.status = Status::Done;
                return Ok(());
            }
            let Some(ins) = code.get(w.pc).copied() else {
                w.status = Status::Done;
                return Ok(());
            };
            w.steps += 1;
            if w.steps.is_multiple_of(DEADLINE_EVERY)
                && self
                    .ctx
                    .deadline
                    .is_some_and(|d| std::time::Instant::now() > d)
            {
                let lane = lanes_of(w.mask).next().unwrap_or(0);
                return Err(self.error(
                    w,
                    lane,
                    w.span,
                    "the simulation ran past its time budget".to_string(),
                ));
            }
            if w.steps > self.ctx.step_budget {
                let lane = lanes_of(w.mask).next().unwrap_or(0);
                return Err(self.error(
                    w,
                    lane,
                    w.span,
                    format!("step budget of {} instructions per warp exhausted (the kernel may not terminate; raise it with --max-steps)", self.ctx.step_budget),
                ));
            }
            w.pc += 1;
            match ins {
                Ins::Assign { var, value, span } => {
                    w.span = span;
                    let v = self.eval(w, value, w.mask)?;
                    Self::charge(w, Counter::VWrite);
                    let slot = &mut w.vars[var];
                    for l in lanes_of(w.mask) {
                        slot[l] = v[l];
                    }
                }
                Ins::Store {
                    access,
                    value,
                    span,
                } => {
                    w.span = span;
                    self.store(w, access, value)?;
                }
                Ins::Atomic {
                    op,
                    access,
                    value,
                    compare,
                    result,
                    span,
                } => {
                    w.span = span;
                    self.atomic(w, op, access, value, compare, result)?;
                }
                Ins::If {
                    cond,
                    else_pc,
                    join_pc,
                    span,
                } => {
                    w.span = span;
                    let c = self.eval(w, cond, w.mask)?;
                    let t = lanes_of(w.mask)
                        .filter(|&l| truthy(c[l], cond.ty))
                        .fold(0u32, |m, l| m | 1 << l);
                    let f = w.mask & !t;
                    Self::charge(w, Counter::If);
                    if t != 0 && f != 0 {
                        Self::charge(w, Counter::Div);
                    }
                    if t != 0 {
                        w.frames.push(Frame::If {
                            else_pc,
                            join_pc,
                            else_mask: f,
                            then_done: 0,
                            in_else: false,
                        });
                        w.mask = t;
                    } else {
                        w.frames.push(Frame::If {
                            else_pc,
                            join_pc,
                            else_mask: 0,
                            then_done: 0,
                            in_else: true,
                        });
                        w.mask = f;
                        w.pc = else_pc;
                    }
                }
                Ins::Else => {
                    if let Some(Frame::If {
                        else_pc,
                        join_pc,
                        else_mask,
                        then_done,
                        in_else,
                    }) = w.frames.last_mut()
                    {
                        *then_done = w.mask;
                        if *else_mask != 0 {
                            w.mask = *else_mask;
                            *else_mask = 0;
                            *in_else = true;
                            w.pc = *else_pc;
                        } else {
                            w.pc = *join_pc;
                        }
                    }
                }
                Ins::Join => {
                    if let Some(Frame::If {
                        then_done, in_else, ..
                    }) = w.frames.pop()
                    {
                        w.mask = if in_else {
                            w.mask | then_done
                        } else {
                            then_done
                        };
                    }
                }
                Ins::LoopEnter {
                    scope,
                    exit_pc,
                    step_pc,
                } => {
                    w.frames.push(Frame::Loop {
                        scope,
                        exit_pc,
                        step_pc,
                        done: 0,
                        continued: 0,
                    });
                }
                Ins::LoopTest {
                    cond,
                    back_pc,
                    span,
                } => {
                    w.span = span;
                    let t = match cond {
                        None => w.mask,
                        Some(c) => {
                            let v = self.eval(w, c, w.mask)?;
                            Self::charge(w, Counter::If);
                            lanes_of(w.mask)
                                .filter(|&l| truthy(v[l], c.ty))
                                .fold(0u32, |m, l| m | 1 << l)
                        }
                    };
                    let f = w.mask & !t;
                    if t != 0 && f != 0 {
                        Self::charge(w, Counter::Div);
                    }
                    if let Some(Frame::Loop { done, exit_pc, .. }) = w.frames.last_mut() {
                        *done |= f;
                        if t == 0 {
                            w.mask = *done;
                            w.pc = *exit_pc;
                            w.frames.pop();
                            continue;
                        }
                    }
                    w.mask = t;
                    if let Some(b) = back_pc {
                        w.pc = b;
                    }
                }
                Ins::LoopStep => {
                    if let Some(Frame::Loop { continued, .. }) = w.frames.last_mut() {
                        w.mask |= *continued;
                        *continued = 0;
                    }
                }
                Ins::Goto(pc) => w.pc = pc,
                Ins::ScopeEnter { scope, exit_pc } => w.frames.push(Frame::Scope {
                    scope,
                    exit_pc,
                    exited: 0,
                }),
                Ins::ScopeExit => {
                    if let Some(Frame::Scope { exited, .. }) = w.frames.pop() {
                        w.mask |= exited;
                    }
                }
                Ins::Break(scope) => {
                    let m = w.mask;
                    for f in w.frames.iter_mut().rev() {
                        match f {
                            Frame::Loop { scope: s, done, .. } if *s == scope => {
                                *done |= m;
                                break;
                            }
                            Frame::Scope {
                                scope: s, exited, ..
                            } if *s == scope => {
                                *exited |= m;
                                break;
                            }
                            _ => {}
                        }
                    }
                    w.mask = 0;
                }
                Ins::Continue(scope) => {
                    let m = w.mask;
                    for f in w.frames.iter_mut().rev() {
                        if let Frame::Loop {
                            scope: s,
                            continued,
                            ..
                        } = f
                        {
                            if *s == scope {
                                *continued |= m;
                                break;
                            }
                        }
                    }
                    w.mask = 0;
                }
                Ins::Return => w.mask = 0,
                Ins::Sync { span } => {
                    w.span = span;
                    Self::charge(w, Counter::Sync);
                    let waiting = self.parked(w);
                    if waiting != 0 {
                        let lane = lanes_of(waiting).next().unwrap_or(0);
                        return Err(self.error(
                            w,
                            lane,
                            span,
                            "`__syncthreads()` reached by only part of the block (it is inside a branch or loop some threads of this warp did not take)".into(),
                        ));
                    }
                    w.status = Status::AtSync;
                    return Ok(());
                }
            }
        }
    }

    /// Lanes that are alive but not executing (waiting in a frame).
    fn parked(&self, w: &Warp) -> u32 {
        w.frames.iter().fold(0u32, |m, f| {
            m | match f {
                Frame::If {
                    else_mask,
                    then_done,
                    in_else,
                    ..
                } => *else_mask | if *in_else { *then_done } else { 0 },
                Frame::Loop {
                    done, continued, ..
                } => *done | *continued,
                Frame::Scope { exited, .. } => *exited,
            }
        })
    }

    /// After the active lanes all left (break, continue, return), finds the
    /// next lanes to run. Returns false when the warp is finished.
    fn unwind(&self, w: &mut Warp) -> bool {
        while let Some(f) = w.frames.last_mut() {
            match f {
                Frame::If {
                    else_pc,
                    else_mask,
                    then_done,
                    in_else,
                    ..
                } if !*in_else && *else_mask != 0 => {
                    w.mask = *else_mask;
                    *else_mask = 0;
                    *then_done = 0;
                    *in_else = true;
                    w.pc = *else_pc;
                    return true;
                }
                Frame::If {
                    join_pc,
                    then_done,
                    in_else: true,
                    ..
                } if *then_done != 0 => {
                    w.mask = *then_done;
                    w.pc = *join_pc + 1;
                    w.frames.pop();
                    return true;
                }
                Frame::If { .. } => {
                    w.frames.pop();
                }
                Frame::Loop {
                    continued, step_pc, ..
                } if *continued != 0 => {
                    w.mask = *continued;
                    *continued = 0;
                    w.pc = *step_pc + 1;
                    return true;
                }
                Frame::Loop { done, exit_pc, .. } => {
                    let (d, e) = (*done, *exit_pc);
                    w.frames.pop();
                    if d != 0 {
                        w.mask = d;
                        w.pc = e;
                        return true;
                    }
                }
                Frame::Scope {
                    exited, exit_pc, ..
                } => {
                    let (x, e) = (*exited, *exit_pc);
                    w.frames.pop();
                    if x != 0 {
                        w.mask = x;
                        w.pc = e;
                        return true;
                    }
                }
            }
        }
        false
    }

    /// Number of elements of an array (its storage holds one value per
    /// component of each element).
    fn array_len(&self, a: ArrayId) -> u64 {
        let values = match self.ctx.storage[a] {
            Storage::Global(g) => self.ctx.globals[g].data.len() as u64,
            Storage::Shared(s) => self.shared[s].len() as u64,
            Storage::Local(l) => self.ctx.local_lens[l],
        };
        values / self.ctx.kernel.arrays[a].layout.slots() as u64
    }

    /// Where component `a.slot` of element `i` is stored.
    fn flat(&self, a: &Access, i: i64) -> i64 {
        i * self.ctx.kernel.arrays[a.array].layout.slots() as i64 + a.slot as i64
    }

    /// Evaluates an access's element index and checks bounds.
    fn indices(&mut self, w: &mut Warp, a: &Access, mask: u32) -> Result<[i64; 32], SimError> {
        let idx = self.eval(w, &a.index, mask)?;
        let len = self.array_len(a.array);
        let mut out = [0i64; 32];
        let mut extent = self.extents[a.array];
        for l in lanes_of(mask) {
            let i = idx[l] as i64;
            if i < 0 || i as u64 >= len {
                let site = &self.ctx.kernel.sites[a.site];
                let name = &self.ctx.kernel.arrays[a.array].name;
                return Err(self.error(
                    w,
                    l,
                    site.span,
                    format!("out-of-bounds access `{name}[{i}]` (the array has {len} elements)"),
                ));
            }
            out[l] = i;
            extent = extent.max(i as u64 + 1);
        }
        self.extents[a.array] = extent;
        Ok(out)
    }

    /// Charges the memory cost of an access and records site statistics
    /// (nothing for the components of a vector access after the first).
    fn charge_access(&mut self, w: &mut Warp, a: &Access, idx: &[i64; 32], mask: u32, write: bool) {
        if !a.charged {
            return;
        }
        let mut buf = [0i64; 32];
        let mut k = 0;
        for l in lanes_of(mask) {
            buf[k] = idx[l];
            k += 1;
        }
        let active = &buf[..k];
        let fp = self.ctx.kernel.arrays[a.array].footprint(&self.ctx.kernel.sites[a.site]);
        let mut ideal = u64::MAX;
        let (n, c_req, c_n) = match self.ctx.storage[a.array] {
            Storage::Global(_) => {
                let n = self.ctx.hw.mem_reads(active, fp);
                // With a lane active the ideal is at least 1: only more
                // than one transaction can exceed it.
                if n > 1 {
                    let mut lanes = [0i64; 32];
                    for (k, l) in lanes_of(mask).enumerate() {
                        lanes[k] = l as i64;
                    }
                    ideal = self.ctx.hw.mem_reads(&lanes[..k], fp);
                }
                if write {
                    (n, Counter::GWrite, Counter::GWriteN)
                } else {
                    (n, Counter::GRead, Counter::GReadN)
                }
            }
            Storage::Shared(_) => {
                let n = self.ctx.hw.conflicts(active, fp);
                if write {
                    (n, Counter::SWrite, Counter::SWriteN)
                } else {
                    (n, Counter::SRead, Counter::SReadN)
                }
            }
            Storage::Local(_) => {
                Self::charge(w, if write { Counter::VWrite } else { Counter::Var });
                return;
            }
        };
        w.counts[c_req as usize] += 1;
        w.counts[c_n as usize] += n;
        let s = &mut self.sites[a.site];
        s.requests += 1;
        s.lanes += active.len() as u64;
        s.transactions += n;
        s.max_transactions = s.max_transactions.max(n);
        s.uncoalesced += (n > ideal) as u64;
        if n > ideal && self.scattered_row(w, idx, mask, fp) {
            self.sites[a.site].scattered += 1;
        }
    }

    /// Whether the active lanes of some row of the block (same
    /// `threadIdx.y` and `.z`) take more transactions than they would at
    /// consecutive elements from any start: more than misalignment
    /// explains.
    fn scattered_row(&self, w: &Warp, idx: &[i64; 32], mask: u32, fp: Footprint) -> bool {
        let shifts = (self.ctx.hw.transaction_bytes / fp.stride.max(1)).max(1);
        let mut done = 0u32;
        for l in lanes_of(mask) {
            if done & (1 << l) != 0 {
                continue;
            }
            let row = &w.tid[l][1..];
            let (mut lanes, mut elems) = ([0i64; 32], [0i64; 32]);
            let mut k = 0;
            for m in lanes_of(mask) {
                if &w.tid[m][1..] == row {
                    done |= 1 << m;
                    lanes[k] = m as i64;
                    elems[k] = idx[m];
                    k += 1;
                }
            }
            let run = &mut lanes[..k];
            let mut contiguous = 0;
            for _ in 0..shifts {
                contiguous = contiguous.max(self.ctx.hw.mem_reads(run, fp));
                run.iter_mut().for_each(|l| *l += 1);
            }
            if self.ctx.hw.mem_reads(&elems[..k], fp) > contiguous {
                return true;
            }
        }
        false
    }

    /// Records a plain (not atomic) access of a global element for race
    /// detection (`written`: the bits a write stores); an error when
    /// another block wrote it, or it writes what another block accessed. A
    /// write that leaves the element as it is changes nothing whatever the
    /// order of blocks (every writer writing the same value), so it is not
    /// recorded. Blocks run one after another when races are detected, so
    /// that this is deterministic.
    fn track(
        &self,
        w: &Warp,
        a: &Access,
        i: i64,
        lane: usize,
        written: Option<u64>,
    ) -> Result<(), SimError> {
        let Storage::Global(g) = self.ctx.storage[a.array] else {
            return Ok(());
        };
        let Some(cell) = self.ctx.globals[g].touched.get(self.flat(a, i) as usize) else {
            return Ok(());
        };
        let write = written.is_some();
        if written.is_some_and(|bits| {
            self.ctx.globals[g].data[self.flat(a, i) as usize].load(Ordering::Relaxed) == bits
        }) {
            return Ok(());
        }
        let [gx, gy, _] = self.ctx.shape.grid;
        let me = self.block[0] + gx * (self.block[1] + gy * self.block[2]);
        let mut cur = cell.load(Ordering::Relaxed);
        loop {
            match AccessState::next(cur, me, write) {
                Ok(next) if next == cur => return Ok(()),
                Ok(next) => match cell.compare_exchange_weak(
                    cur,
                    next,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return Ok(()),
                    Err(now) => cur = now,
                },
                Err(other) => {
                    let name = &self.ctx.kernel.arrays[a.array].name;
                    let other = match other {
                        Some(b) => format!("block {}", unflatten(b, self.ctx.shape.grid)),
                        None => "other blocks".to_string(),
                    };
                    let verb = if write { "writes" } else { "reads" };
                    return Err(SimError {
                        race: true,
                        ..self.error(
                            w,
                            lane,
                            self.ctx.kernel.sites[a.site].span,
                            format!(
                                "data race between blocks: thread {} of block {} {verb} `{name}[{i}]`, which {other} also accessed, one of them writing (blocks run in no fixed order)",
                                triple(self.thread_of(w, lane)),
                                triple(self.block)
                            ),
                        )
                    });
                }
            }
        }
    }

    fn read(&self, w: &Warp, a: ArrayId, i: i64, lane: usize) -> u64 {
        match self.ctx.storage[a] {
            Storage::Global(g) => self.ctx.globals[g].data[i as usize].load(Ordering::Relaxed),
            Storage::Shared(s) => self.shared[s][i as usize],
            Storage::Local(l) => w.locals[l][i as usize * 32 + lane],
        }
    }

    fn write(&mut self, w: &mut Warp, a: ArrayId, i: i64, lane: usize, bits: u64) {
        match self.ctx.storage[a] {
            Storage::Global(g) => {
                self.ctx.globals[g].data[i as usize].store(bits, Ordering::Relaxed)
            }
            Storage::Shared(s) => self.shared[s][i as usize] = bits,
            Storage::Local(l) => w.locals[l][i as usize * 32 + lane] = bits,
        }
    }

    fn store(&mut self, w: &mut Warp, a: &Access, value: &Expr) -> Result<(), SimError> {
        let mask = w.mask;
        let idx = self.indices(w, a, mask)?;
        let v = self.eval(w, value, mask)?;
        self.charge_access(w, a, &idx, mask, true);
        if !matches!(self.ctx.storage[a.array], Storage::Local(_)) {
            self.check_same_step_writes(w, a, &idx, &v, mask)?;
        }
        for l in lanes_of(mask) {
            self.track(w, a, idx[l], l, Some(v[l]))?;
            self.write(w, a.array, self.flat(a, idx[l]), l, v[l]);
        }
        Ok(())
    }

    /// Two lanes writing different values to one element in one step is a
    /// data race.
    fn check_same_step_writes(
        &self,
        w: &Warp,
        a: &Access,
        idx: &[i64; 32],
        v: &Lanes,
        mask: u32,
    ) -> Result<(), SimError> {
        let mut prev: Option<i64> = None;
        let increasing = lanes_of(mask).all(|l| {
            let ok = prev.is_none_or(|p| idx[l] > p);
            prev = Some(idx[l]);
            ok
        });
        if increasing {
            return Ok(());
        }
        let mut pairs: Vec<(i64, usize)> = lanes_of(mask).map(|l| (idx[l], l)).collect();
        pairs.sort_unstable();
        for p in pairs.windows(2) {
            let ((i, l1), (j, l2)) = (p[0], p[1]);
            if i == j && v[l1] != v[l2] {
                let t1 = self.thread_of(w, l1);
                let name = &self.ctx.kernel.arrays[a.array].name;
                return Err(SimError {
                    race: true,
                    ..self.error(
                        w,
                        l2,
                        self.ctx.kernel.sites[a.site].span,
                        format!(
                            "data race: threads {} and {} of block {} write different values to `{name}[{i}]` in the same step",
                            triple(t1),
                            triple(self.thread_of(w, l2)),
                            triple(self.block)
                        ),
                    )
                });
            }
        }
        Ok(())
    }

    fn atomic(
        &mut self,
        w: &mut Warp,
        op: AtomicOp,
        a: &Access,
        value: &Expr,
        compare: Option<&Expr>,
        result: Option<usize>,
    ) -> Result<(), SimError> {
        let mask = w.mask;
        let idx = self.indices(w, a, mask)?;
        let v = self.eval(w, value, mask)?;
        let c = match compare {
            Some(c) => Some(self.eval(w, c, mask)?),
            None => None,
        };
        self.charge_access(w, a, &idx, mask, true);
        let elem = self.ctx.kernel.arrays[a.array].elem;
        let mut old = ZERO_LANES;
        for l in lanes_of(mask) {
            let cur = self.read(w, a.array, self.flat(a, idx[l]), l);
            let val = |b: u64| Value::from_bits(b, elem);
            let new = atomic_result(op, val(cur), val(v[l]), c.map(|c| val(c[l])), elem);
            old[l] = cur;
            self.write(w, a.array, self.flat(a, idx[l]), l, new.to_bits());
        }
        if let Some(r) = result {
            Self::charge(w, Counter::VWrite);
            for l in lanes_of(mask) {
                w.vars[r][l] = old[l];
            }
        }
        Ok(())
    }

    /// Evaluates `e` on the lanes of `mask`, charging its cost once. Lanes
    /// hold bit patterns of values of type `e.ty` ([`Value::to_bits`]).
    fn eval(&mut self, w: &mut Warp, e: &Expr, mask: u32) -> Result<Lanes, SimError> {
        let mut out = ZERO_LANES;
        self.eval_into(w, e, mask, &mut out)?;
        Ok(out)
    }

    /// [`Block::eval`] into `out` (lanes outside `mask` set to 0): the
    /// recursion writes each operand in place instead of returning 256
    /// bytes through a `Result` at every node.
    fn eval_into(
        &mut self,
        w: &mut Warp,
        e: &Expr,
        mask: u32,
        out: &mut Lanes,
    ) -> Result<(), SimError> {
        *out = ZERO_LANES;
        let ty = e.ty;
        match &e.kind {
            ExprKind::Const(v) => {
                Self::charge(w, Counter::Const);
                *out = [v.to_bits(); 32];
            }
            ExprKind::Var(v) => {
                match self.ctx.kernel.vars[*v].kind {
                    VarKind::Param(_) => Self::charge(w, Counter::Param),
                    VarKind::Local => Self::charge(w, Counter::Var),
                    // Charged as the literal a `-D` would give.
                    VarKind::Symbol => Self::charge(w, Counter::Const),
                }
                *out = w.vars[*v];
            }
            ExprKind::Builtin(b) => {
                let shape = self.ctx.shape;
                let per_block = |d: [u64; 3], i: u8| d[i as usize];
                match b {
                    Builtin::ThreadIdx(d) => {
                        Self::charge(w, Counter::Var);
                        for l in lanes_of(mask) {
                            out[l] = w.tid[l][*d as usize];
                        }
                    }
                    Builtin::BlockIdx(d) => {
                        Self::charge(w, Counter::Param);
                        *out = [per_block(self.block, *d); 32];
                    }
                    Builtin::BlockDim(d) => {
                        Self::charge(w, Counter::Param);
                        *out = [per_block(shape.block, *d); 32];
                    }
                    Builtin::GridDim(d) => {
                        Self::charge(w, Counter::Param);
                        *out = [per_block(shape.grid, *d); 32];
                    }
                    Builtin::WarpSize => {
                        Self::charge(w, Counter::Param);
                        *out = [self.ctx.hw.warp_size as u64; 32];
                    }
                }
            }
            ExprKind::Unary(op, x) => {
                let mut v = ZERO_LANES;
                self.eval_into(w, x, mask, &mut v)?;
                Self::charge(w, Counter::Op);
                for l in lanes_of(mask) {
                    let a = Value::from_bits(v[l], x.ty);
                    out[l] = match (op, a) {
                        (Unary::Neg, Value::F(f)) => Value::F(-f),
                        (Unary::Neg, Value::I(i)) => {
                            let r = i.wrapping_neg();
                            if ty.is_signed()
                                && (i.checked_neg().is_none() || wrap(r, ty) != Value::I(r))
                            {
                                return Err(self.error(
                                    w,
                                    l,
                                    w.span,
                                    arith_message(ArithError::SignedOverflow),
                                ));
                            }
                            wrap(r, ty)
                        }
                        (Unary::Not, a) => Value::I(!a.truthy() as i64),
                        (Unary::BitNot, a) => wrap(!a.as_i64(), ty),
                    }
                    .to_bits();
                }
            }
            ExprKind::Binary(op, l, r) => {
                let mut a = ZERO_LANES;
                self.eval_into(w, l, mask, &mut a)?;
                let mut b = ZERO_LANES;
                self.eval_into(w, r, mask, &mut b)?;
                Self::charge(w, Counter::Op);
                if fast_binary(*op, l.ty, &a, &b, mask, out) {
                    return Ok(());
                }
                for lane in lanes_of(mask) {
                    let (x, y) = (
                        Value::from_bits(a[lane], l.ty),
                        Value::from_bits(b[lane], r.ty),
                    );
                    out[lane] = binary(*op, x, y, l.ty)
                        .map_err(|e| self.error(w, lane, w.span, arith_message(e)))?
                        .to_bits();
                }
            }
            ExprKind::And(l, r) | ExprKind::Or(l, r) => {
                let is_and = matches!(e.kind, ExprKind::And(..));
                let mut a = ZERO_LANES;
                self.eval_into(w, l, mask, &mut a)?;
                Self::charge(w, Counter::Op);
                let rest = lanes_of(mask)
                    .filter(|&x| truthy(a[x], l.ty) == is_and)
                    .fold(0u32, |m, x| m | 1 << x);
                let mut b = ZERO_LANES;
                if rest != 0 {
                    self.eval_into(w, r, rest, &mut b)?;
                }
                for lane in lanes_of(mask) {
                    let v = if rest & (1 << lane) != 0 {
                        truthy(b[lane], r.ty)
                    } else {
                        truthy(a[lane], l.ty)
                    };
                    out[lane] = v as u64;
                }
            }
            ExprKind::Select(c, a, b) => {
                let mut cv = ZERO_LANES;
                self.eval_into(w, c, mask, &mut cv)?;
                Self::charge(w, Counter::Op);
                let t = lanes_of(mask)
                    .filter(|&x| truthy(cv[x], c.ty))
                    .fold(0u32, |m, x| m | 1 << x);
                let f = mask & !t;
                let (mut av, mut bv) = (ZERO_LANES, ZERO_LANES);
                if t != 0 {
                    self.eval_into(w, a, t, &mut av)?;
                }
                if f != 0 {
                    self.eval_into(w, b, f, &mut bv)?;
                }
                for lane in lanes_of(mask) {
                    out[lane] = if t & (1 << lane) != 0 {
                        av[lane]
                    } else {
                        bv[lane]
                    };
                }
            }
            ExprKind::Convert { value, explicit } => {
                let mut v = ZERO_LANES;
                self.eval_into(w, value, mask, &mut v)?;
                if *explicit {
                    Self::charge(w, Counter::Op);
                }
                let from = value.ty;
                let int_to_int = !from.is_float() && !ty.is_float() && ty != Scalar::Bool;
                for l in lanes_of(mask) {
                    out[l] = if int_to_int {
                        wrap(v[l] as i64, ty).to_bits()
                    } else {
                        Value::from_bits(v[l], from)
                            .convert_from(from, ty)
                            .to_bits()
                    };
                }
            }
            ExprKind::Load(a) => {
                let idx = self.indices(w, a, mask)?;
                self.charge_access(w, a, &idx, mask, false);
                for l in lanes_of(mask) {
                    self.track(w, a, idx[l], l, None)?;
                    out[l] = self.read(w, a.array, self.flat(a, idx[l]), l);
                }
            }
            ExprKind::Call(f, args) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(w, a, mask)?);
                }
                Self::charge(w, Counter::Op);
                if f.is_warp() {
                    *out = self.warp_call(w, *f, &vals, mask)?;
                    return Ok(());
                }
                let arg_ty = args.first().map_or(ty, |a| a.ty);
                let mut lane_args = Vec::with_capacity(args.len());
                for l in lanes_of(mask) {
                    lane_args.clear();
                    lane_args.extend(
                        args.iter()
                            .enumerate()
                            .map(|(i, a)| Value::from_bits(vals[i][l], a.ty)),
                    );
                    out[l] = math::eval(*f, &lane_args, arg_ty, ty).to_bits();
                }
            }
        }
        Ok(())
    }
}

/// The block index of a flattened block number.
/// `(x, y, z)`
fn triple(d: [u64; 3]) -> String {
    format!("({}, {}, {})", d[0], d[1], d[2])
}

fn unflatten(b: u64, grid: [u64; 3]) -> String {
    let [gx, gy, _] = grid;
    format!("({}, {}, {})", b % gx, (b / gx) % gy, b / (gx * gy))
}

/// C truth of a lane holding a value of type `ty`.
fn truthy(bits: u64, ty: Scalar) -> bool {
    if ty.is_float() {
        f64::from_bits(bits) != 0.0
    } else {
        bits != 0
    }
}

/// `a op b` on every lane for the common integer and floating-point
/// cases; false when the general path must handle it.
fn fast_binary(
    op: crate::cuda::ast::BinOp,
    ty: Scalar,
    a: &Lanes,
    b: &Lanes,
    mask: u32,
    out: &mut Lanes,
) -> bool {
    use crate::cuda::ast::BinOp as B;
    let comparison = matches!(op, B::Lt | B::Gt | B::Le | B::Ge | B::Eq | B::Ne);
    if ty.is_float() {
        let f: fn(f64, f64) -> f64 = match op {
            B::Add => |x, y| x + y,
            B::Sub => |x, y| x - y,
            B::Mul => |x, y| x * y,
            B::Div => |x, y| x / y,
            B::Lt => |x, y| (x < y) as u8 as f64,
            B::Gt => |x, y| (x > y) as u8 as f64,
            B::Le => |x, y| (x <= y) as u8 as f64,
            B::Ge => |x, y| (x >= y) as u8 as f64,
            B::Eq => |x, y| (x == y) as u8 as f64,
            B::Ne => |x, y| (x != y) as u8 as f64,
            _ => return false,
        };
        let single = ty == Scalar::F32;
        for l in lanes_of(mask) {
            let r = f(f64::from_bits(a[l]), f64::from_bits(b[l]));
            out[l] = if comparison {
                r as u64
            } else if single {
                (r as f32 as f64).to_bits()
            } else {
                r.to_bits()
            };
        }
        return true;
    }
    if !matches!(ty, Scalar::I32 | Scalar::U32 | Scalar::I64) {
        return false;
    }
    // Signed 64-bit arithmetic may overflow: the general path reports it.
    if ty == Scalar::I64 && matches!(op, B::Add | B::Sub | B::Mul) {
        return false;
    }
    let f: fn(i64, i64) -> i64 = match op {
        B::Add => i64::wrapping_add,
        B::Sub => i64::wrapping_sub,
        B::Mul => i64::wrapping_mul,
        B::BitAnd => |x, y| x & y,
        B::BitOr => |x, y| x | y,
        B::BitXor => |x, y| x ^ y,
        B::Lt => |x, y| (x < y) as i64,
        B::Gt => |x, y| (x > y) as i64,
        B::Le => |x, y| (x <= y) as i64,
        B::Ge => |x, y| (x >= y) as i64,
        B::Eq => |x, y| (x == y) as i64,
        B::Ne => |x, y| (x != y) as i64,
        _ => return false,
    };
    for l in lanes_of(mask) {
        let r = f(a[l] as i64, b[l] as i64);
        let v = wrap(r, ty);
        if !comparison && ty == Scalar::I32 && v != Value::I(r) {
            // A signed 32-bit overflow (exact in i64): the general path
            // reports it.
            return false;
        }
        out[l] = if comparison { r as u64 } else { v.to_bits() };
    }
    true
}

/// What a simulated arithmetic error is called.
fn arith_message(e: ArithError) -> String {
    match e {
        ArithError::DivByZero => "integer division by zero".into(),
        ArithError::SignedOverflow => {
            "signed integer overflow (undefined behaviour: copper's bounds assume it does not happen)"
                .into()
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
        span: Span::SYNTHETIC,
    }
}

impl Warp {
    /// Lanes of this warp that exist (the last warp of a block may be partial).
    pub fn valid_lanes(&self) -> u32 {
        self.valid
    }

    /// Instructions executed so far.
    pub fn steps(&self) -> u64 {
        self.steps
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

/// The value an atomic writes.
fn atomic_result(
    op: AtomicOp,
    cur: Value,
    v: Value,
    compare: Option<Value>,
    elem: Scalar,
) -> Value {
    let int = |x: i64| wrap(x, elem);
    if elem.is_float() {
        let r = match op {
            AtomicOp::Add => cur.as_f64() + v.as_f64(),
            AtomicOp::Sub => cur.as_f64() - v.as_f64(),
            _ => v.as_f64(),
        };
        return Value::F(r).convert(elem);
    }
    let (c, x) = (cur.as_i64(), v.as_i64());
    let unsigned = !elem.is_signed();
    let less = |a: i64, b: i64| {
        if unsigned && elem == Scalar::U64 {
            (a as u64) < (b as u64)
        } else {
            a < b
        }
    };
    match op {
        AtomicOp::Add => int(c.wrapping_add(x)),
        AtomicOp::Sub => int(c.wrapping_sub(x)),
        AtomicOp::Exch => v,
        AtomicOp::Min => {
            if less(x, c) {
                v
            } else {
                cur
            }
        }
        AtomicOp::Max => {
            if less(c, x) {
                v
            } else {
                cur
            }
        }
        AtomicOp::And => int(c & x),
        AtomicOp::Or => int(c | x),
        AtomicOp::Xor => int(c ^ x),
        AtomicOp::Inc => {
            if !less(c, x) {
                int(0)
            } else {
                int(c + 1)
            }
        }
        AtomicOp::Dec => {
            if c == 0 || less(x, c) {
                v
            } else {
                int(c - 1)
            }
        }
        AtomicOp::Cas => {
            if compare.is_some_and(|k| k.as_i64() == c) {
                v
            } else {
                cur
            }
        }
    }
}
