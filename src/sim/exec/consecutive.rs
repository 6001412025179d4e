//! What a coalesced access would take: the transactions of lanes reading
//! consecutive elements, the yardstick an access's real transactions are
//! compared with to call it uncoalesced. It depends only on which lanes
//! are active and on the access's footprint, not on the addresses, so a
//! block computes it once per pair and looks it up afterwards (a warp
//! access otherwise pays for up to ten transaction counts to learn one
//! number).

use crate::cost::{Footprint, Hardware};

/// Transactions of consecutive elements by the lanes of a mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Consecutive {
    /// Lanes `l` at element `l · lane_step` (from the array's start).
    pub at_start: u64,
    /// The most over the starts a transaction holds: lanes `l` at
    /// `(l + s) · lane_step` for every shift `s` up to a transaction's
    /// elements (a misaligned run of consecutive elements).
    pub any_start: u64,
}

/// Most pairs remembered; a kernel has few footprints and masks, and past
/// this many the memo starts again.
const REMEMBERED: usize = 32;

/// [`Consecutive`] by (lanes, footprint), computed on first use.
#[derive(Debug, Default)]
pub(super) struct ConsecutiveMemo {
    known: Vec<(u32, Footprint, Consecutive)>,
}

impl ConsecutiveMemo {
    /// The transactions the lanes of `mask` take at consecutive elements
    /// of footprint `fp`.
    pub fn of(&mut self, hw: &Hardware, mask: u32, fp: Footprint) -> Consecutive {
        if let Some(&(_, _, c)) = self.known.iter().find(|(m, f, _)| *m == mask && *f == fp) {
            return c;
        }
        let c = consecutive(hw, mask, fp);
        if self.known.len() == REMEMBERED {
            self.known.clear();
        }
        self.known.push((mask, fp, c));
        c
    }
}

/// The lanes whose consecutive elements an access by the lanes of `mask`
/// at `indices` (one per active lane, in lane order) is measured
/// against: those lanes themselves, or, when some read the same element,
/// the first lanes of the warp, one per distinct element. Sixteen lanes
/// of each of two block rows reading the same 16 floats need 2 sectors,
/// not the 4 of 32 distinct ones: 3 is a misaligned row.
pub(super) fn ideal_lanes(mask: u32, indices: &[i64]) -> u32 {
    let mut sorted = [0i64; 32];
    let sorted = &mut sorted[..indices.len()];
    sorted.copy_from_slice(indices);
    if !sorted.windows(2).all(|w| w[0] < w[1]) {
        sorted.sort_unstable();
    }
    let distinct = 1 + sorted.windows(2).filter(|w| w[0] != w[1]).count();
    if indices.is_empty() || distinct == indices.len() {
        mask
    } else {
        u32::MAX >> (32 - distinct)
    }
}

fn consecutive(hw: &Hardware, mask: u32, fp: Footprint) -> Consecutive {
    let step = fp.lane_step();
    let mut lanes = [0i64; 32];
    let mut k = 0;
    for l in (0..32).filter(|l| mask & (1 << l) != 0) {
        lanes[k] = l as i64 * step;
        k += 1;
    }
    let run = &mut lanes[..k];
    let at_start = hw.mem_reads(run, fp);
    let shifts = (hw.transaction_bytes / fp.stride.max(1)).max(1);
    let mut any_start = at_start;
    for _ in 1..shifts {
        run.iter_mut().for_each(|l| *l += step);
        any_start = any_start.max(hw.mem_reads(run, fp));
    }
    Consecutive {
        at_start,
        any_start,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_warp_of_floats_takes_four_sectors_aligned_and_five_misaligned() {
        let hw = Hardware::default();
        let mut memo = ConsecutiveMemo::default();
        let c = memo.of(&hw, u32::MAX, Footprint::element(4));
        assert_eq!(c.at_start, 4);
        assert_eq!(c.any_start, 5);
        // Looked up, not recomputed: the same answer.
        assert_eq!(memo.of(&hw, u32::MAX, Footprint::element(4)), c);
        // Lanes count by their positions in the warp: lanes 0 and 31 are
        // 124 bytes apart, in two sectors.
        let ends = memo.of(&hw, 1 | 1 << 31, Footprint::element(4));
        assert_eq!(ends.at_start, 2);
    }

    #[test]
    fn lanes_reading_one_element_are_measured_as_one_lane_each_element() {
        let hw = Hardware::default();
        let mut memo = ConsecutiveMemo::default();
        // Distinct elements: the lanes themselves, holes included.
        let idx: Vec<i64> = (0..32).collect();
        assert_eq!(ideal_lanes(u32::MAX, &idx), u32::MAX);
        assert_eq!(ideal_lanes(0b1011, &[5, 6, 9]), 0b1011);
        // Two rows of 16 lanes reading the same 16 floats: 16 lanes, 2
        // sectors, so 3 (a row starting off a sector) is more than ideal.
        let rows: Vec<i64> = (0..32).map(|l| 3 + l % 16).collect();
        let lanes = ideal_lanes(u32::MAX, &rows);
        assert_eq!(lanes, 0xffff);
        assert_eq!(memo.of(&hw, lanes, Footprint::element(4)).at_start, 2);
        assert_eq!(hw.mem_reads(&rows, Footprint::element(4)), 3);
        // A broadcast is one lane.
        assert_eq!(ideal_lanes(u32::MAX, &[7; 32]), 1);
    }

    #[test]
    fn the_memo_starts_again_when_full_and_stays_right() {
        let hw = Hardware::default();
        let mut memo = ConsecutiveMemo::default();
        for m in 1..=(REMEMBERED as u32 + 5) {
            let c = memo.of(&hw, m, Footprint::element(8));
            assert_eq!(c, consecutive(&hw, m, Footprint::element(8)));
        }
        assert!(memo.known.len() <= REMEMBERED);
    }
}
