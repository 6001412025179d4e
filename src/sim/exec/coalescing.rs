//! Whether a warp's global access was coalesced, for the per-site
//! statistics ([`crate::sim::SiteStats::uncoalesced`] and `scattered`)
//! that the lint's findings are measured against.

use super::consecutive::ideal_lanes;
use super::{lanes_of, Block, Warp};
use crate::cost::Footprint;

impl Block<'_> {
    /// Whether an access by the lanes of `mask` at elements `idx`, which
    /// took `n` transactions, took more than consecutive elements from
    /// the array's start would: the whole warp's lanes at consecutive
    /// elements, and each row of the block (same `threadIdx.y` and `.z`)
    /// at one consecutive element per distinct element it reads, so that
    /// two rows of 16 lanes reading the same 16 floats off a sector
    /// boundary (3 sectors where 2 would do) count, and two rows each
    /// reading one element (2 sectors, one per row) do not.
    pub(super) fn uncoalesced(
        &mut self,
        w: &Warp,
        idx: &[i64; 32],
        mask: u32,
        n: u64,
        fp: Footprint,
    ) -> bool {
        let hw = &self.ctx.hw;
        if n > self.consecutive.of(hw, mask, fp).at_start {
            return true;
        }
        // One row whose lanes read distinct elements in order: the warp's
        // yardstick was the row's.
        let first = lanes_of(mask).next().unwrap_or(0);
        let one_row = lanes_of(mask).all(|l| w.tid[l][1..] == w.tid[first][1..]);
        let mut previous = None;
        let increasing = lanes_of(mask).all(|l| {
            let up = previous.is_none_or(|p| idx[l] > p);
            previous = Some(idx[l]);
            up
        });
        if one_row && increasing {
            return false;
        }
        rows(w, idx, mask).any(|(same_row, elems, k)| {
            let elems = &elems[..k];
            let ideal = self.consecutive.of(hw, ideal_lanes(same_row, elems), fp);
            hw.mem_reads(elems, fp) > ideal.at_start
        })
    }

    /// Whether the active lanes of some row of the block (same
    /// `threadIdx.y` and `.z`) take more transactions than they would at
    /// consecutive elements from any start: more than misalignment
    /// explains.
    pub(super) fn scattered_row(
        &mut self,
        w: &Warp,
        idx: &[i64; 32],
        mask: u32,
        fp: Footprint,
    ) -> bool {
        let hw = &self.ctx.hw;
        rows(w, idx, mask).any(|(same_row, elems, k)| {
            hw.mem_reads(&elems[..k], fp) > self.consecutive.of(hw, same_row, fp).any_start
        })
    }
}

/// The rows of the block among the lanes of `mask` (lanes with the same
/// `threadIdx.y` and `.z`): each row's lanes, and the elements they access
/// (the first of the count given).
fn rows<'w>(
    w: &'w Warp,
    idx: &'w [i64; 32],
    mask: u32,
) -> impl Iterator<Item = (u32, [i64; 32], usize)> + 'w {
    let mut done = 0u32;
    lanes_of(mask).filter_map(move |l| {
        if done & (1 << l) != 0 {
            return None;
        }
        let row = &w.tid[l][1..];
        let mut elems = [0i64; 32];
        let (mut k, mut same_row) = (0, 0u32);
        for m in lanes_of(mask) {
            if &w.tid[m][1..] == row {
                same_row |= 1 << m;
                elems[k] = idx[m];
                k += 1;
            }
        }
        done |= same_row;
        Some((same_row, elems, k))
    })
}
