//! A version's work as the ranking compares it: its bound per warp and
//! the warps it runs, as a multiple of the original's
//! ([`crate::rank::total`]).

use super::{Analyzed, KernelResult};
use crate::rank::total::{compare_work, Work};

impl Analyzed {
    /// Its bound of metric `m` (an index of the settings' metrics) per
    /// warp, and its warps.
    pub fn work(&self, m: usize) -> Work<'_> {
        Work::new(&self.bounds[m].work, self.lineage.reshape())
    }
}

impl KernelResult {
    /// The hazard the best version removes, when that is what it was
    /// chosen for: it repairs one ([`super::Lineage::repairs`]) and its bound of
    /// metric `m` is not lower than the original's (a repair is worth a
    /// constant per warp more), so it is no speed-up in the cost model.
    pub fn repaired(&self, m: usize) -> Option<&str> {
        let repairs = self.best.lineage.repairs.as_deref()?;
        let lower = compare_work(&self.ranker, self.best.work(m), self.original.work(m));
        (self.improved() && !lower.is_better()).then_some(repairs)
    }
}
