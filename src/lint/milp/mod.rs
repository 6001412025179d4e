//! The largest bank conflict of one shared access as a MILP (Horga et al. §4,
//! decided rather than searched): "lanes of one warp access the same bank
//! at different words", maximized over every input.
//!
//! The index is encoded once per lane of a warp, along the path from the
//! kernel's entry to the access: assignments before it are substituted,
//! variables a loop or branch on the way may change become free (with
//! their type's range), the conditions of the `if`s and loops that
//! enclose the access are guards of the lane being active, and every load
//! of an input array is a free integer in the array's value range (its
//! type, narrowed by the parameter file's `min`/`max` for a random fill).
//! Integer arithmetic is exact: `+ - *` by constants, shifts, masks, `/`
//! and `%` by constants (auxiliary integer quotients), narrowing
//! conversions and unsigned wrap-around, comparisons, `&&`/`||`/`!` and
//! `?:` (big-M indicators over the operands' ranges). What is not encoded
//! (a product of two unknowns, a math function, a float) becomes a free
//! value of its type. So every execution of the kernel is a solution: an
//! optimum below `d` proves that no input reaches degree `d`, whatever the
//! over-approximation lost.
//!
//! The collision: `K` slots with strictly increasing rows `ρ_k` and one
//! bank `B`; lane `l` may take slot `k` (binary `x_lk`) only when it is
//! active and its word is `banks·ρ_k + B`; the objective counts the slots
//! taken. `K` is the fewest of the lanes, the rows the index can reach,
//! and the analysis bound.

use std::collections::HashMap;
use std::time::Instant;

use crate::cost::Hardware;
use crate::ir::{ArrayId, Kernel, SiteId};
use crate::sim::params::LaunchSpec;
use good_lp::{Expression, ProblemVariables, Solution};

use encode::{Enc, Lane};
use path::walk;
use term::{div_floor, Term};

mod encode;
mod path;
mod solve;
mod term;

/// The largest degree, as far as the solver got.
#[derive(Clone, Debug, PartialEq)]
pub struct Maximum {
    /// The best degree found (a lane assignment reaching it).
    pub degree: u64,
    /// Whether the solver proved it optimal (no input does better).
    pub proved: bool,
    /// What stopped a solver before it proved its optimum (`None` when
    /// proved).
    pub stop: Option<Stop>,
    /// The values the solution gives each input array's first load, lane
    /// by lane (for the inputs to simulate).
    pub loads: Vec<(ArrayId, Vec<i64>)>,
}

/// What a MILP not solved by the wall-clock safety net says.
pub const WALL_CLOCK: &str = "the MILP stopped at the wall-clock limit (raise it with --budget); results may differ on a faster machine";

/// Branch-and-bound nodes one MILP (one warp's) may solve, the root
/// relaxation not counted: its deterministic work limit, the same on
/// every machine and under any load.
pub const NODES: u64 = 100_000;

/// What stopped a MILP before it proved its optimum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Its work limit of this many branch-and-bound nodes
    /// (deterministic).
    Nodes(u64),
    /// The wall-clock safety net (a faster machine may get further).
    WallClock,
}

impl Stop {
    /// The words for the output: "before its work limit of …" or "before
    /// the wall-clock limit …".
    pub fn describe(self) -> String {
        match self {
            Stop::Nodes(n) => format!("within its work limit of {n} branch-and-bound nodes per warp (the same on every machine; raise it with --max-witness-nodes)"),
            Stop::WallClock => "before the wall-clock limit (raise it with --budget); results may differ on a faster machine".to_string(),
        }
    }
}

/// Why no MILP was solved.
pub type Unsupported = String;

/// Most variables plus constraints of one MILP: the solver has no
/// deterministic limit of its own (only a time limit, kept as the
/// safety net), so larger problems are not tried, the same on every
/// machine.
pub const MAX_SIZE: usize = 20_000;

/// The largest bank-conflict degree one warp can reach at shared site
/// `site` under the launch `spec`, at most `cap`, solved before
/// `deadline`: one MILP per warp of the block (the thread indices
/// constant, so the index's range is tight), or one for all when the
/// index does not depend on them; each solves at most `nodes`
/// branch-and-bound nodes ([`NODES`] by default).
pub fn maximum(
    kernel: &Kernel,
    site: SiteId,
    cap: u64,
    spec: &LaunchSpec,
    hw: &Hardware,
    nodes: u64,
    deadline: Instant,
) -> Result<Maximum, Unsupported> {
    let threads: u64 = (0..3)
        .map(|d| spec.block.get(d).copied().unwrap_or(1))
        .product();
    let warps = threads.div_ceil(hw.warp_size as u64).max(1);
    // No warp does better than every lane in one bank.
    let most = cap.min(threads.min(hw.warp_size as u64));
    let (first, per_warp) = warp_maximum(kernel, site, cap, spec, hw, (nodes, deadline), 0)?;
    if !per_warp || first.degree >= most {
        return Ok(first);
    }
    let mut best = first;
    for w in 1..warps {
        if best.degree >= most {
            break;
        }
        let (m, _) = warp_maximum(kernel, site, cap, spec, hw, (nodes, deadline), w)?;
        let proved = best.proved && m.proved;
        let stop = best.stop.or(m.stop);
        if m.degree > best.degree {
            best = m;
        }
        best.proved = proved;
        best.stop = stop;
    }
    Ok(best)
}

/// [`maximum`] for warp `w` of the block, and whether the index read the
/// thread index (so that other warps may differ).
fn warp_maximum(
    kernel: &Kernel,
    site: SiteId,
    cap: u64,
    spec: &LaunchSpec,
    hw: &Hardware,
    (nodes, deadline): (u64, Instant),
    w: u64,
) -> Result<(Maximum, bool), Unsupported> {
    let array = &kernel.arrays[kernel.sites[site].array];
    let fp = array.footprint(&kernel.sites[site]);
    if !fp.within(hw.bank_bytes) {
        return Err("the access is wider than a bank word".into());
    }
    let len = match array.index_len(&kernel.sites[site]) {
        Some(n) => n,
        None => spec.shared_bytes / fp.stride.max(1) as u64,
    } as i128;
    if len == 0 {
        return Err("the shared array's length is unknown".into());
    }
    let block: Vec<i128> = (0..3)
        .map(|d| spec.block.get(d).copied().unwrap_or(1) as i128)
        .collect();
    let threads = block.iter().product::<i128>();
    let warp = hw.warp_size as i128;
    let lanes = threads.min(warp) as usize;
    let mut enc = Enc {
        kernel,
        spec,
        pv: ProblemVariables::new(),
        cons: Vec::new(),
        uniform: HashMap::new(),
        loads: Vec::new(),
        warp,
        read_tid: false,
    };
    // Each lane's thread index.
    let w = Term::constant(w as i128);
    let mut tids = Vec::new();
    let mut lane_state = vec![Lane::default(); lanes];
    for (l, lane) in lane_state.iter_mut().enumerate() {
        let linear = w.scale(warp).add(&Term::constant(l as i128), 1);
        let (rest, x) = enc.floor_div(&linear, block[0]);
        let (z, y) = enc.floor_div(&rest, block[1]);
        if threads % warp != 0 {
            let exists = enc.negative(&linear.add(&Term::constant(threads), -1));
            lane.guards.push(exists);
        }
        tids.push([x, y, z]);
    }
    let index = walk(&mut enc, &kernel.body, site, &mut lane_state, &tids)
        .ok_or("the access was not found on a path from the kernel's entry")?;
    let b = hw.bank_bytes as i128;
    let banks = hw.banks as i128;
    let mut words = Vec::new();
    let mut active = Vec::new();
    for (l, lane) in lane_state.iter().enumerate() {
        let i = enc.expr(index, lane, l, &tids[l]);
        // An active lane's index is in bounds (the simulator stops
        // otherwise): `inside` is the index when the lane is active.
        let on = enc.binary();
        for g in &lane.guards {
            enc.push((on.e.clone() - g.e.clone()).leq(0.0));
        }
        let (lo, hi) = (i.lo.max(0), i.hi.min(len - 1));
        if lo > hi {
            // Always out of bounds: the lane never gets here.
            enc.push(on.e.clone().leq(0.0));
        }
        let (_, inside) = enc.fresh(lo.min(hi), hi);
        let span = (i.hi.max(len) - i.lo.min(0)) as f64;
        let d = i.add(&inside, -1);
        enc.push((d.e.clone() + on.e.clone() * span).leq(span));
        enc.push((d.e.clone() - on.e.clone() * span).geq(-span));
        let byte = inside
            .scale(fp.stride as i128)
            .add(&Term::constant(fp.offset as i128), 1);
        let (word, _) = enc.floor_div(&byte, b);
        words.push(word);
        active.push(on);
    }
    let (wlo, whi) = words.iter().fold((i128::MAX, i128::MIN), |(a, z), w| {
        (a.min(w.lo), z.max(w.hi))
    });
    if wlo > whi {
        return Err("no lane reaches the access".into());
    }
    let (rlo, rhi) = (div_floor(wlo, banks), div_floor(whi, banks));
    let k = (cap as i128).min(lanes as i128).min(rhi - rlo + 1).max(1) as usize;
    // Each lane's row and bank; the bank all counted lanes share, one-hot
    // when some lane's bank can only be among a few (a tight cut: such a
    // lane counts only when one of them is chosen).
    let narrow = words
        .iter()
        .any(|w| div_floor(w.lo, banks) == div_floor(w.hi, banks) && w.hi - w.lo + 1 < banks);
    let pick: Vec<Term> = if narrow {
        (0..banks).map(|_| enc.binary()).collect()
    } else {
        Vec::new()
    };
    let bank = if narrow {
        let all = pick
            .iter()
            .fold(Expression::from(0.0), |acc, y| acc + y.e.clone());
        enc.push(all.eq(1.0));
        let sum = pick
            .iter()
            .enumerate()
            .fold(Term::constant(0), |acc, (b, y)| {
                acc.add(&y.scale(b as i128), 1)
            });
        Term {
            lo: 0,
            hi: banks - 1,
            ..sum
        }
    } else {
        enc.fresh(0, banks - 1).1
    };
    let rows: Vec<Term> = (0..k)
        .map(|_| enc.fresh(rlo - k as i128, rhi + k as i128).1)
        .collect();
    for pair in rows.windows(2) {
        enc.push((pair[1].e.clone() - pair[0].e.clone()).geq(1.0));
    }
    let mut objective = Expression::from(0.0);
    let mut takes: Vec<Vec<Term>> = vec![Vec::new(); k];
    for (l, word) in words.iter().enumerate() {
        let (row_l, bank_l) = if narrow {
            enc.floor_div(word, banks)
        } else {
            (word.clone(), Term::constant(0))
        };
        let mut one = Expression::from(0.0);
        for (slot, row) in rows.iter().enumerate() {
            let x = enc.binary();
            // x = 1 → the lane's row is the slot's and its bank the one
            // (split when the banks are narrow, else as one word).
            let apart = if narrow {
                vec![row_l.add(row, -1), bank_l.add(&bank, -1)]
            } else {
                vec![word.add(&row.scale(banks), -1).add(&bank, -1)]
            };
            for d in apart {
                let m = (d.hi.abs().max(d.lo.abs())) as f64;
                enc.push((d.e.clone() + x.e.clone() * m).leq(m));
                enc.push((d.e.clone() - x.e.clone() * m).geq(-m));
            }
            one += x.e.clone();
            takes[slot].push(x);
        }
        if narrow && bank_l.hi - bank_l.lo + 1 < banks {
            let can = (bank_l.lo..=bank_l.hi).fold(Expression::from(0.0), |acc, b| {
                acc + pick[b as usize].e.clone()
            });
            enc.push((one.clone() - can).leq(0.0));
        }
        enc.push((one - active[l].e.clone()).leq(0.0));
    }
    for xs in takes {
        let (_, used) = enc.fresh(0, 1);
        let sum = xs
            .iter()
            .fold(Expression::from(0.0), |acc, x| acc + x.e.clone());
        enc.push((used.e.clone() - sum).leq(0.0));
        objective += used.e;
    }
    let size = enc.pv.len() + enc.cons.len();
    if size > MAX_SIZE {
        return Err(format!(
            "the MILP would have {size} variables and constraints, over its limit of {MAX_SIZE}"
        ));
    }
    if Instant::now() >= deadline {
        return Err(WALL_CLOCK.into());
    }
    let Enc {
        pv,
        cons,
        loads,
        read_tid,
        ..
    } = enc;
    let solved = solve::maximize(pv, objective.clone(), cons, nodes, deadline)?;
    let Some(values) = solved.values else {
        // Cut before any incumbent: no degree shown, none proved.
        return Ok((
            Maximum {
                degree: 0,
                proved: false,
                stop: solved.stop,
                loads: Vec::new(),
            },
            read_tid,
        ));
    };
    let degree = values.eval(&objective).round().max(0.0) as u64;
    let mut per_array: Vec<(ArrayId, Vec<i64>)> = Vec::new();
    for (a, l, v) in loads {
        let value = values.value(v).round() as i64;
        match per_array.iter_mut().find(|x| x.0 == a) {
            Some((_, vals)) => {
                if vals.len() <= l {
                    vals.resize(l + 1, value);
                }
                vals[l] = value;
            }
            None => {
                let mut vals = vec![value; l + 1];
                vals[l] = value;
                per_array.push((a, vals));
            }
        }
    }
    Ok((
        Maximum {
            degree,
            proved: solved.stop.is_none(),
            stop: solved.stop,
            loads: per_array,
        },
        read_tid,
    ))
}
