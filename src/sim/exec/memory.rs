//! Array accesses of a warp: bounds checks, reads and writes in global,
//! shared or local storage, their cost and per-site statistics
//! (coalescing, bank conflicts), data-race detection within a step and
//! between blocks, and atomics.

use crate::launch::Dims;
use std::sync::atomic::Ordering;

use super::{
    lanes_of, Block, Lanes, Races, SimError, Storage, Warp, ACCESS_LANES_PER_UNIT, ZERO_LANES,
};
use crate::cost::Counter;
use crate::ir::value::wrap;
use crate::ir::{Access, ArrayId, AtomicOp, Expr, ExprKind, Scalar, Value};

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

impl Block<'_> {
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

    /// Where lane `lane`'s component of `a` is stored, its index being `i`.
    pub(super) fn flat(&self, w: &Warp, a: &Access, i: i64, lane: usize) -> i64 {
        let (elem, slot) = self.element_of(w, a, i, lane);
        elem * self.ctx.kernel.arrays[a.array].layout.slots() as i64 + slot
    }

    /// The element and component lane `lane` reaches through `a` at index
    /// `i`: for a run-time index into an array member, `i` is the address
    /// in the site's units, less each member index times its units, over
    /// the element's units (`Access::member`).
    fn element_of(&self, w: &Warp, a: &Access, i: i64, lane: usize) -> (i64, i64) {
        let Some(m) = &a.member else {
            return (i, a.slot as i64);
        };
        let (mut rest, mut slot) = (i, a.slot as i64);
        for d in &m.dims {
            let k = self.member_index(w, d.var, lane);
            rest -= k * d.units as i64;
            slot += k * d.slots as i64;
        }
        let unit = self.ctx.kernel.sites[a.site].unit.unwrap_or(1).max(1);
        let per = i64::from(self.ctx.kernel.arrays[a.array].layout.size / unit).max(1);
        (rest.div_euclid(per), slot)
    }

    /// The value of a member index variable in a lane.
    fn member_index(&self, w: &Warp, var: usize, lane: usize) -> i64 {
        Value::from_bits(w.vars[var][lane], self.ctx.kernel.vars[var].ty).as_i64()
    }

    /// Evaluates an access's index and checks bounds (of the element, and
    /// of each run-time index into an array member): the lanes' indices as
    /// the cost sees them.
    pub(super) fn indices(
        &mut self,
        w: &mut Warp,
        a: &Access,
        mask: u32,
    ) -> Result<[i64; 32], SimError> {
        let idx = self.eval(w, &a.index, mask)?;
        let len = self.array_len(a.array);
        let mut out = [0i64; 32];
        let mut extent = self.extents[a.array];
        let span = self.ctx.kernel.sites[a.site].span;
        for l in lanes_of(mask) {
            let i = idx[l] as i64;
            for d in a.member.iter().flat_map(|m| &m.dims) {
                let k = self.member_index(w, d.var, l);
                if k < 0 || k as u64 >= d.len {
                    let message = format!(
                        "out-of-bounds access `{}[{k}]` (the array member has {} elements)",
                        d.name, d.len
                    );
                    return Err(self.error(w, l, span, message));
                }
            }
            let (e, _) = self.element_of(w, a, i, l);
            if e < 0 || e as u64 >= len {
                let name = &self.ctx.kernel.arrays[a.array].name;
                return Err(self.error(
                    w,
                    l,
                    span,
                    format!("out-of-bounds access `{name}[{e}]` (the array has {len} elements)"),
                ));
            }
            out[l] = i;
            extent = extent.max(e as u64 + 1);
        }
        self.extents[a.array] = extent;
        Ok(out)
    }

    /// Charges the memory cost of an access and records site statistics
    /// (nothing for the components of a vector access after the first).
    pub(super) fn charge_access(
        &mut self,
        w: &mut Warp,
        a: &Access,
        idx: &[i64; 32],
        mask: u32,
        write: bool,
    ) {
        if !matches!(self.ctx.storage[a.array], Storage::Local(_)) {
            w.work += u64::from(mask.count_ones()).div_ceil(ACCESS_LANES_PER_UNIT);
        }
        if !a.charged {
            return;
        }
        let mut buf = [0i64; 32];
        let mut ids = [0usize; 32];
        let mut k = 0;
        for l in lanes_of(mask) {
            buf[k] = idx[l];
            ids[k] = l;
            k += 1;
        }
        let active = &buf[..k];
        let fp = self.ctx.kernel.arrays[a.array].footprint(&self.ctx.kernel.sites[a.site]);
        let mut uncoalesced = false;
        let (n, c_req, c_n) = match self.ctx.storage[a.array] {
            Storage::Global(_) => {
                let n = self.ctx.hw.mem_reads(active, fp);
                // With a lane active the ideal is at least 1: only more
                // than one transaction can exceed it.
                if n > 1 {
                    uncoalesced = self.uncoalesced(w, idx, mask, n, fp);
                }
                if write {
                    (n, Counter::GWrite, Counter::GWriteN)
                } else {
                    (n, Counter::GRead, Counter::GReadN)
                }
            }
            Storage::Shared(_) => {
                let n = self.ctx.hw.conflicts(&ids[..k], active, fp);
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
        Self::charge_n(w, c_req, 1);
        Self::charge_n(w, c_n, n);
        let s = &mut self.sites[a.site];
        s.requests += 1;
        s.lanes += active.len() as u64;
        s.transactions += n;
        s.max_transactions = s.max_transactions.max(n);
        s.uncoalesced += uncoalesced as u64;
        if uncoalesced && self.scattered_row(w, idx, mask, fp) {
            self.sites[a.site].scattered += 1;
        }
    }

    /// Records a plain (not atomic) access of a global element, when
    /// blocks meeting at elements are detected or recorded ([`Races`];
    /// `written`: the bits a write stores); an error when another block
    /// wrote it, or it writes what another block accessed. In a race's
    /// report, a write that leaves the element as it is changes nothing
    /// whatever the order of blocks (every writer writing the same value),
    /// so it is not recorded; blocks run one after another when races are
    /// detected, so that this is deterministic.
    pub(super) fn track(
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
        let at = self.flat(w, a, i, lane) as usize;
        let Some(cell) = self.ctx.globals[g].touched.get(at) else {
            return Ok(());
        };
        let write = written.is_some();
        let recording = match self.ctx.races {
            Races::Off => return Ok(()),
            Races::Detect => None,
            Races::Record(flag) => Some(flag),
        };
        // Only a race's report may pass over a write that changes
        // nothing: whether it does depends on the order blocks ran in.
        if recording.is_none()
            && written
                .is_some_and(|bits| self.ctx.globals[g].data[at].load(Ordering::Relaxed) == bits)
        {
            return Ok(());
        }
        let [gx, gy, _] = self.ctx.shape.grid().to_array();
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
                    if let Some(flag) = recording {
                        flag.store(true, Ordering::Relaxed);
                    }
                    let name = &self.ctx.kernel.arrays[a.array].name;
                    let other = match other {
                        Some(b) => format!("block {}", unflatten(b, self.ctx.shape.grid())),
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

    pub(super) fn read(&self, w: &Warp, a: ArrayId, i: i64, lane: usize) -> u64 {
        match self.ctx.storage[a] {
            Storage::Global(g) => self.ctx.globals[g].data[i as usize].load(Ordering::Relaxed),
            Storage::Shared(s) => self.shared[s][i as usize],
            Storage::Local(l) => w.locals[l][i as usize * 32 + lane],
        }
    }

    /// Whether the shared element stored at `at` of `a`'s array was
    /// written in this block (any other element counts as written).
    pub(super) fn is_written(&self, a: &Access, at: i64) -> bool {
        match self.ctx.storage[a.array] {
            Storage::Shared(s) => self.shared_written[s].get(at as usize) != Some(&false),
            _ => true,
        }
    }

    /// An error when lane `lane` reads (through `a`, at element index
    /// `i`, stored at `at`) a shared value no thread of the block wrote,
    /// when such reads are detected.
    pub(super) fn check_initialized(
        &self,
        w: &Warp,
        a: &Access,
        i: i64,
        at: i64,
        lane: usize,
    ) -> Result<(), SimError> {
        let Storage::Shared(s) = self.ctx.storage[a.array] else {
            return Ok(());
        };
        match self.shared_written[s].get(at as usize) {
            Some(false) => {
                let name = &self.ctx.kernel.arrays[a.array].name;
                Err(self.error(
                    w,
                    lane,
                    self.ctx.kernel.sites[a.site].span,
                    format!(
                        "thread {} of block {} reads `{name}[{i}]`, which no thread of the block wrote before (shared memory starts undefined)",
                        triple(self.thread_of(w, lane)),
                        triple(self.block)
                    ),
                ))
            }
            _ => Ok(()),
        }
    }

    fn write(&mut self, w: &mut Warp, a: ArrayId, i: i64, lane: usize, bits: u64) {
        match self.ctx.storage[a] {
            Storage::Global(g) => {
                self.ctx.globals[g].data[i as usize].store(bits, Ordering::Relaxed)
            }
            Storage::Shared(s) => {
                self.shared[s][i as usize] = bits;
                if let Some(done) = self.shared_written[s].get_mut(i as usize) {
                    *done = true;
                }
            }
            Storage::Local(l) => w.locals[l][i as usize * 32 + lane] = bits,
        }
    }

    pub(super) fn store(&mut self, w: &mut Warp, a: &Access, value: &Expr) -> Result<(), SimError> {
        let mask = w.mask;
        let idx = self.indices(w, a, mask)?;
        // A value combined by arithmetic from shared elements may read
        // undefined ones when it is stored to shared memory: its element
        // is undefined in turn (the warp-synchronous tail of a block of 32
        // reads past the block's elements in lanes whose sums nothing
        // uses). Any other use of an undefined element is an error.
        let copies = matches!(self.ctx.storage[a.array], Storage::Shared(_))
            && self.ctx.detect_uninitialized
            && copies_values(value);
        self.undefined_lanes = copies.then_some(0);
        let v = self.eval(w, value, mask);
        let undefined = self.undefined_lanes.take().unwrap_or(0);
        let v = v?;
        self.charge_access(w, a, &idx, mask, true);
        if !matches!(self.ctx.storage[a.array], Storage::Local(_)) {
            self.check_same_step_writes(w, a, &idx, &v, mask)?;
        }
        for l in lanes_of(mask) {
            self.track(w, a, idx[l], l, Some(v[l]))?;
            let at = self.flat(w, a, idx[l], l);
            self.write(w, a.array, at, l, v[l]);
            if undefined & 1 << l != 0 {
                self.forget(a, at);
            }
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

    /// Marks the shared element stored at `at` of `a`'s array as holding
    /// no value any thread wrote.
    fn forget(&mut self, a: &Access, at: i64) {
        if let Storage::Shared(s) = self.ctx.storage[a.array] {
            if let Some(done) = self.shared_written[s].get_mut(at as usize) {
                *done = false;
            }
        }
    }

    pub(super) fn atomic(
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
        let elem = self.ctx.kernel.arrays[a.array].slot_type(a.slot);
        let mut old = ZERO_LANES;
        for l in lanes_of(mask) {
            let at = self.flat(w, a, idx[l], l);
            self.check_initialized(w, a, idx[l], at, l)?;
            let cur = self.read(w, a.array, at, l);
            let val = |b: u64| Value::from_bits(b, elem);
            let new = atomic_result(op, val(cur), val(v[l]), c.map(|c| val(c[l])), elem);
            old[l] = cur;
            self.write(w, a.array, at, l, new.to_bits());
        }
        if let Some(r) = result {
            Self::charge(w, Counter::VWrite);
            for l in lanes_of(mask) {
                w.vars[r][l] = old[l];
            }
        }
        Ok(())
    }
}

/// `(x, y, z)`
fn triple(d: [u64; 3]) -> String {
    format!("({}, {}, {})", d[0], d[1], d[2])
}

/// The block index of a flattened block number.
fn unflatten(b: u64, grid: Dims) -> String {
    let [gx, gy, _] = grid.to_array();
    format!("({}, {}, {})", b % gx, (b / gx) % gy, b / (gx * gy))
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

/// Whether `e` combines its operands by arithmetic only (no branch, no
/// division or shift that an undefined operand could make fail, no value
/// of another lane), so an undefined operand makes only its own lane's
/// result undefined.
fn copies_values(e: &Expr) -> bool {
    use crate::cuda::ast::BinOp as B;
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Var(_) | ExprKind::Builtin(_) | ExprKind::Load(_) => true,
        ExprKind::Unary(_, x) => copies_values(x),
        ExprKind::Convert { value, .. } => copies_values(value),
        ExprKind::Binary(B::Add | B::Sub | B::Mul, l, r) => copies_values(l) && copies_values(r),
        ExprKind::Call(f, args) => !f.is_warp() && args.iter().all(copies_values),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
