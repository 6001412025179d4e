//! A version's work as the ranking compares it: its bound per warp and
//! the warps it runs, as a multiple of the original's
//! ([`crate::rank::total`]).

use super::Analyzed;
use crate::rank::total::Work;

impl Analyzed {
    /// Its bound of metric `m` (an index of the settings' metrics) per
    /// warp, and its warps.
    pub fn work(&self, m: usize) -> Work<'_> {
        Work::new(&self.bounds[m].work, self.lineage.reshape())
    }
}
