//! A deterministic work allowance several simulations share
//! ([`crate::sim::SimOptions::work`]): each launch is charged one unit
//! per array value it is given (building and comparing large arrays
//! costs as much as running over them), then for every block it runs one
//! unit per warp instruction and one per two lanes of each global or
//! shared access ([`crate::sim::exec::ACCESS_LANES_PER_UNIT`]: an access
//! costs the simulator per lane what an instruction costs per warp, so a
//! unit takes about the same time whatever the kernel does), a failing
//! block too, in launch order; a launch run once
//! the allowance is spent stops at once. What one
//! command does with a kernel (the lint's block fit, grown test launches,
//! lock-step check and race search; the rewrite checker's runs of the
//! original) is so bounded by one count, the same on every machine and
//! under any load, where a limit per launch multiplies with the launches.
//! It also records which checks it stopped, for the output to say so.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Work units (array values given, warp instructions and access lanes,
/// all warps together) several simulations may use in all, and what has been
/// charged so far.
#[derive(Debug)]
pub struct Work {
    limit: u64,
    used: AtomicU64,
    stopped: Mutex<Vec<String>>,
}

impl Work {
    /// An allowance of `limit` instructions, none used.
    pub fn new(limit: u64) -> Work {
        Work {
            limit,
            used: AtomicU64::new(0),
            stopped: Mutex::new(Vec::new()),
        }
    }

    /// The allowance.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Instructions charged so far.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// Instructions left (0 once spent).
    pub fn left(&self) -> u64 {
        self.limit.saturating_sub(self.used())
    }

    /// Whether nothing is left.
    pub fn spent(&self) -> bool {
        self.left() == 0
    }

    /// Charges `steps` instructions.
    pub fn charge(&self, steps: u64) {
        // Saturating: a sum past u64::MAX stays spent.
        let _ = self
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| {
                Some(u.saturating_add(steps))
            });
    }

    /// Records that `check` (for people: "the race search") stopped
    /// short because the allowance was spent; each check once, in the
    /// order they stopped.
    pub fn note_stop(&self, check: &str) {
        if let Ok(mut s) = self.stopped.lock() {
            if !s.iter().any(|c| c == check) {
                s.push(check.to_string());
            }
        }
    }

    /// The checks the allowance stopped, in order ([`Work::note_stop`]).
    pub fn stopped(&self) -> Vec<String> {
        self.stopped.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::Work;

    #[test]
    fn an_allowance_is_spent_once_charged_in_full() {
        let w = Work::new(10);
        w.charge(4);
        assert_eq!((w.used(), w.left(), w.spent()), (4, 6, false));
        w.charge(u64::MAX);
        assert_eq!((w.left(), w.spent()), (0, true));
        w.note_stop("the race search");
        w.note_stop("the race search");
        w.note_stop("the lock-step check");
        assert_eq!(w.stopped(), ["the race search", "the lock-step check"]);
    }
}
