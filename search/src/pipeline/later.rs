//! A rewrite the ranking left out only because the sizes it compared at
//! are small: its bound grows more slowly than the original's, and is
//! lower from some larger sizes on. The report names it and those sizes,
//! so that a student whose file gives no sizes (or test-sized ones) knows
//! what `--at` would take.

use std::collections::BTreeMap;

use super::{KernelResult, Verdict};
use crate::rank::sized::wins_from;

/// A candidate that would win at larger sizes.
#[derive(Clone, Debug, PartialEq)]
pub struct Later {
    /// Its transform.
    pub transform: &'static str,
    /// The sizes from which its bound is lower (the ranking's sizes
    /// scaled up together).
    pub from: BTreeMap<String, f64>,
}

impl KernelResult {
    /// For a kernel left unchanged: the first candidate, in the search's
    /// order, whose bound for metric `m` grows more slowly than the
    /// original's but was not better at the sizes ranked at, with the
    /// sizes from which it wins ([`wins_from`]). `None` for an improved
    /// kernel, a ranking by degree and coefficients alone, or when no
    /// candidate would win within 2²⁰ times the sizes.
    pub fn wins_later(&self, m: usize) -> Option<Later> {
        if self.improved() {
            return None;
        }
        self.steps
            .iter()
            .flat_map(|s| s.considered.iter().map(move |c| (s.transform, c)))
            .filter(|(_, c)| matches!(c.verdict, Verdict::NotBetter(_)))
            .find_map(|(transform, c)| {
                let a = c.analyzed.as_ref()?;
                let (new, old) = (a.work(m), self.original.work(m));
                let from = wins_from(&self.ranker, &*new.per_warp_of(&old)?, old.per_warp)?;
                Some(Later { transform, from })
            })
    }
}
