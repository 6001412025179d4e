//! The order in which a launch runs its blocks, so that the same inputs
//! always give the same results.
//!
//! Blocks run in parallel where they cannot see each other's work. Where
//! they can, the results are those of running them one after another in
//! launch order (`blockIdx.x` fastest), whatever the machine's load:
//! - a kernel with global atomics, or a run that detects races (the
//!   checks), runs its blocks in launch order;
//! - any other kernel runs its blocks in parallel while recording, for
//!   each element of the global arrays it writes, which blocks touched
//!   it. If one block reads or writes an element that another block wrote
//!   (or writes one another block read), the arrays are put back as they
//!   were and the launch runs again in launch order.
//!
//! Why the parallel run gives the launch-order results when no such
//! meeting is recorded: then no block read anything another block wrote,
//! so each block read only values from before the launch or its own, as
//! it would in launch order, and blocks writing distinct elements leave
//! the same arrays in any order. Whether a meeting is recorded does not
//! depend on the order either: until the first meeting, every block does
//! what it does in launch order, so the same pairs of accesses meet.
//! Two blocks writing one element meet too, even when nothing reads it:
//! the value left is then the last block's in launch order, as the
//! arrays a simulation returns must be the same on every run.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use rayon::prelude::*;

use super::blocks::{run_block, BlockFail, BlockOutcome};
use super::exec::{GlobalArray, LaunchCtx};
use super::{over_limit, SimOptions, LIMIT_CHUNK};
use crate::ir::{Kernel, Stmt};

/// How a launch runs its blocks.
pub(super) enum Order {
    /// One after another, in launch order.
    Sequential,
    /// In parallel; `tracked[a]` says whether the accesses of array `a`
    /// are recorded, to find blocks that meet at an element (see the
    /// module doc). With no array tracked, no block can see another's work.
    Parallel { tracked: Vec<bool> },
}

impl Order {
    /// The order for `kernel`, in a run detecting races (`detect_races`)
    /// or not.
    pub(super) fn of(kernel: &Kernel, detect_races: bool) -> Order {
        if detect_races || has_global_atomics(kernel) {
            return Order::Sequential;
        }
        let mut written = vec![false; kernel.arrays.len()];
        for site in kernel.sites.iter().filter(|s| s.is_write) {
            written[site.array] = true;
        }
        let tracked = (0..kernel.arrays.len())
            .map(|a| written[a] && kernel.arrays[a].is_global())
            .collect();
        Order::Parallel { tracked }
    }

    /// Whether the accesses of array `a` are recorded in this order (a
    /// sequential run records none of them, unless it detects races).
    pub(super) fn tracks(&self, a: usize) -> bool {
        matches!(self, Order::Parallel { tracked } if tracked[a])
    }
}

fn has_global_atomics(k: &Kernel) -> bool {
    fn any(k: &Kernel, s: &[Stmt]) -> bool {
        s.iter().any(|s| match s {
            Stmt::Atomic { access, .. } => k.arrays[access.array].is_global(),
            Stmt::If { then, els, .. } => any(k, then) || any(k, els),
            Stmt::Loop { body, step, .. } => any(k, body) || any(k, step),
            Stmt::Scope { body, .. } => any(k, body),
            _ => false,
        })
    }
    any(k, &k.body)
}

/// The global arrays' contents before a launch that records meetings of
/// blocks, to put back if one is found.
pub(super) struct Snapshot(Vec<(usize, Vec<u64>)>);

impl Snapshot {
    /// The contents of the tracked arrays among `globals` (those whose
    /// `touched` record is kept).
    pub(super) fn of(globals: &[GlobalArray]) -> Snapshot {
        Snapshot(
            globals
                .iter()
                .enumerate()
                .filter(|(_, g)| !g.touched.is_empty())
                .map(|(i, g)| {
                    (
                        i,
                        g.data.iter().map(|v| v.load(Ordering::Relaxed)).collect(),
                    )
                })
                .collect(),
        )
    }

    /// Puts the arrays back as they were.
    pub(super) fn restore(self, globals: &[GlobalArray]) {
        for (i, bits) in self.0 {
            for (cell, b) in globals[i].data.iter().zip(bits) {
                cell.store(b, Ordering::Relaxed);
            }
        }
    }
}

/// Blocks of a launch run: each block's outcome in launch order (`None`
/// where a block was not run, after one that failed), the work units
/// charged, and the launch's error, if any.
pub(super) struct Ran {
    pub(super) outcomes: Vec<Option<Result<BlockOutcome, BlockFail>>>,
    pub(super) charged: u64,
    pub(super) error: Option<super::SimError>,
}

/// Runs the blocks `block_ids` of a launch, in launch order when
/// `sequential`, else in parallel, stopping at the launch's work limit
/// `limit` (checked in launch order after each chunk of blocks).
pub(super) fn run_blocks(
    ctx: &LaunchCtx,
    block_ids: &[[u64; 3]],
    opts: &SimOptions,
    limit: Option<u64>,
    sequential: bool,
) -> Ran {
    // Once a block fails, the blocks after it are not run (their results
    // are not used): the launch's error is the first failing block's,
    // whichever order parallel blocks finish in.
    let first_failed = AtomicUsize::new(usize::MAX);
    let chunk = match (limit, sequential) {
        (Some(_), true) => 1,
        (Some(_), false) => LIMIT_CHUNK,
        (None, _) => block_ids.len().max(1),
    };
    // What each block of the chunk running may run before it is stopped:
    // its share of what the chunks before left of the limit, so that a
    // chunk of parallel blocks never runs much past it.
    let cap = AtomicU64::new(u64::MAX);
    let run = |(i, b): (usize, &[u64; 3])| {
        if i > first_failed.load(Ordering::Relaxed) {
            return None;
        }
        let outcome = run_block(ctx, *b, &opts.metrics, cap.load(Ordering::Relaxed));
        if outcome.is_err() {
            first_failed.fetch_min(i, Ordering::Relaxed);
        }
        Some(outcome)
    };
    let mut ran = Ran {
        outcomes: Vec::new(),
        charged: 0,
        error: None,
    };
    for (c, ids) in block_ids.chunks(chunk).enumerate() {
        if let Some(l) = limit {
            let share = l.saturating_sub(ran.charged).div_ceil(ids.len() as u64);
            cap.store(share, Ordering::Relaxed);
        }
        let numbered = ids.iter().enumerate().map(|(i, b)| (c * chunk + i, b));
        let outcomes: Vec<_> = if sequential {
            numbered.map(run).collect()
        } else {
            numbered
                .collect::<Vec<_>>()
                .into_par_iter()
                .map(run)
                .collect()
        };
        // Blocks are charged in launch order up to the first that fails,
        // the same blocks whichever order parallel ones finish in.
        for (i, o) in outcomes.iter().enumerate() {
            ran.charged = ran.charged.saturating_add(match o {
                Some(Ok(o)) => o.work,
                Some(Err(f)) => f.steps,
                None => 0,
            });
            match o {
                Some(Err(f)) => ran.error = Some(f.error.clone()),
                Some(Ok(_)) => {
                    if let Some(limit) = limit.filter(|&l| ran.charged > l) {
                        ran.error = Some(over_limit(ctx.kernel, limit, ids[i]));
                    }
                }
                None => {}
            }
            if ran.error.is_some() {
                return ran;
            }
        }
        ran.outcomes.extend(outcomes);
    }
    ran
}
