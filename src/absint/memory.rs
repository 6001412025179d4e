//! Bounds on `MemReads` and `Conflicts` for an access whose index has a
//! known thread dependence (`000_…` Thm 4 and Thm 5, made exact where the
//! block shape is known).
//!
//! For an index `u + Σ c_d·threadIdx.d` with known coefficients and a known
//! block shape, the lanes of every warp are enumerated, and the worst case
//! over every alignment of the unknown uniform part `u` is taken: the bound
//! is the exact worst case of the cost model. Otherwise the bound is the
//! number of lanes (each in its own transaction or bank word), capped for
//! shared arrays by how many words of the array one bank can hold.

use super::deps::{Coef, Dep};
use crate::cost::Hardware;

/// The lanes of every warp of a block: `threadIdx` per lane.
pub fn warps_of(block: [u64; 3], warp: u64) -> Vec<Vec<[i64; 3]>> {
    let threads = block.iter().product::<u64>();
    let [bx, by, _] = block;
    (0..threads.div_ceil(warp))
        .map(|w| {
            (w * warp..((w + 1) * warp).min(threads))
                .map(|t| {
                    [
                        (t % bx) as i64,
                        ((t / bx) % by) as i64,
                        (t / (bx * by)) as i64,
                    ]
                })
                .collect()
        })
        .collect()
}

/// Most lanes of one warp.
fn max_lanes(block: Option<[u64; 3]>, warp: u64) -> u64 {
    block.map_or(warp, |b| b.iter().product::<u64>().min(warp))
}

/// The lanes of each warp of a block, split into groups that agree on
/// every thread-index component whose coefficient is unknown, each group
/// given by its lanes' element offsets `Σ c_d·tid_d` over the known
/// coefficients. Unknown coefficients shift the groups against each other
/// arbitrarily, so a worst case is the sum of the groups' worst cases.
/// `None` when the index has no affine shape, or the block shape is unknown
/// and the index depends on more than `threadIdx.x`.
fn lane_groups(coefs: [Coef; 3], block: Option<[u64; 3]>, warp: u64) -> Option<Vec<Vec<Vec<i64>>>> {
    let block = match block {
        Some(b) => b,
        // Without a block shape only a 1-D index along x is understood:
        // 32 consecutive values of threadIdx.x.
        None if coefs[1] == Coef::Known(0) && coefs[2] == Coef::Known(0) => [warp, 1, 1],
        None => return None,
    };
    Some(
        warps_of(block, warp)
            .into_iter()
            .map(|lanes| {
                let mut groups: Vec<(Vec<i64>, Vec<i64>)> = Vec::new();
                for t in &lanes {
                    let mut key = Vec::new();
                    let mut offset = 0;
                    for d in 0..3 {
                        match coefs[d] {
                            Coef::Known(c) => offset += c * t[d],
                            Coef::Unknown => key.push(t[d]),
                        }
                    }
                    match groups.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, offs)) => offs.push(offset),
                        None => groups.push((key, vec![offset])),
                    }
                }
                groups.into_iter().map(|(_, offs)| offs).collect()
            })
            .collect(),
    )
}

/// The worst case over warps of the sum over groups of the worst case over
/// shifts `0..period` of `cost(offsets + shift)`: every shift for a group
/// placed by an unknown coefficient, the shifts the congruence `cong` of
/// the uniform part allows when there is one group.
fn worst(
    dep: Dep,
    block: Option<[u64; 3]>,
    warp: u64,
    period: i64,
    cost: impl Fn(&[i64]) -> u64,
) -> Option<u64> {
    let (coefs, cong) = dep.affine_parts()?;
    let groups = lane_groups(coefs, block, warp)?;
    let placed = coefs.contains(&Coef::Unknown);
    Some(
        groups
            .iter()
            .map(|warp| {
                warp.iter()
                    .map(|offs| {
                        (0..period)
                            .filter(|&u| placed || cong.admits_mod(u, period))
                            .map(|u| {
                                let idx: Vec<i64> = offs.iter().map(|o| o + u).collect();
                                cost(&idx)
                            })
                            .max()
                            .unwrap_or(0)
                    })
                    .sum::<u64>()
            })
            .max()
            .unwrap_or(0),
    )
}

/// Worst-case global-memory transactions of one access.
pub fn transactions(dep: Dep, elem: u32, hw: &Hardware, block: Option<[u64; 3]>) -> u64 {
    let t = hw.transaction_bytes as u64;
    let per_element = if t.is_multiple_of(elem as u64) {
        1
    } else {
        (elem as u64).div_ceil(t) + 1
    };
    let all = max_lanes(block, hw.warp_size as u64) * per_element;
    let warp = hw.warp_size as u64;
    worst(dep, block, warp, t as i64, |idx| hw.mem_reads(idx, elem)).map_or(all, |w| w.min(all))
}

/// Worst-case bank-conflict degree of one shared-memory access to an array
/// of `len` elements (when fixed).
pub fn conflicts(
    dep: Dep,
    elem: u32,
    len: Option<u64>,
    hw: &Hardware,
    block: Option<[u64; 3]>,
) -> u64 {
    let words_per_element = (elem as u64).div_ceil(hw.bank_bytes as u64).max(1);
    let all =
        max_lanes(block, hw.warp_size as u64) * words_per_element.div_ceil(hw.banks as u64).max(1);
    let period = (hw.banks * hw.bank_bytes) as i64;
    let bound = worst(dep, block, hw.warp_size as u64, period, |idx| {
        hw.conflicts(idx, elem)
    })
    .map_or(all, |w| w.min(all));
    // One bank holds at most this many distinct words of the array.
    let cap = len.map(|l| {
        (l * elem as u64)
            .div_ceil(hw.bank_bytes as u64)
            .div_ceil(hw.banks as u64)
            .max(1)
    });
    match cap {
        Some(c) => bound.min(c),
        None => bound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absint::congruence::Cong;

    fn aff(x: i64, y: i64) -> Dep {
        Dep::Affine([Coef::Known(x), Coef::Known(y), Coef::Known(0)], Cong::ANY)
    }

    #[test]
    fn global_bounds_are_exact_worst_cases() {
        let hw = Hardware::default();
        let b = Some([256, 1, 1]);
        // Coalesced 4-byte: 4 sectors aligned, 5 misaligned: worst 5.
        assert_eq!(transactions(aff(1, 0), 4, &hw, b), 5);
        assert_eq!(transactions(Dep::UNIFORM, 4, &hw, b), 1);
        assert_eq!(transactions(aff(8, 0), 4, &hw, b), 32);
        assert_eq!(transactions(Dep::Varying, 4, &hw, b), 32);
        // 16×16 block: a warp covers 2 rows of 16.
        assert_eq!(transactions(aff(1, 1024), 4, &hw, Some([16, 16, 1])), 6);
        assert_eq!(transactions(aff(1, 0), 4, &hw, Some([8, 1, 1])), 2);
        // row·n + x with an unknown row length n in a 16×16 block: two rows
        // of 16 consecutive floats per warp, each 64 bytes over at most 3
        // sectors, placed anywhere.
        let rows = Dep::Affine([Coef::Known(1), Coef::Unknown, Coef::Known(0)], Cong::ANY);
        assert_eq!(transactions(rows, 4, &hw, Some([16, 16, 1])), 6);
        // x·n + y (a transpose's write): 16 columns of 2 elements.
        let cols = Dep::Affine([Coef::Unknown, Coef::Known(1), Coef::Known(0)], Cong::ANY);
        assert_eq!(transactions(cols, 4, &hw, Some([16, 16, 1])), 32);
        assert_eq!(transactions(cols, 4, &hw, Some([16, 2, 1])), 32);
        // 4 columns of 8 doubles (64 bytes, up to 3 sectors each).
        assert_eq!(transactions(cols, 8, &hw, Some([4, 8, 1])), 12);
    }

    #[test]
    fn provable_alignment() {
        let hw = Hardware::default();
        let b = Some([256, 1, 1]);
        let at = |m, r| {
            Dep::Affine(
                [Coef::Known(1), Coef::Known(0), Coef::Known(0)],
                Cong::new(m, r),
            )
        };
        // blockIdx.x·256 + threadIdx.x: every warp starts a sector.
        assert_eq!(transactions(at(256, 0), 4, &hw, b), 4);
        // … + 1: one element late, one sector more.
        assert_eq!(transactions(at(256, 1), 4, &hw, b), 5);
        // A multiple of 8 floats is 32 bytes: aligned.
        assert_eq!(transactions(at(8, 0), 4, &hw, b), 4);
        assert_eq!(transactions(at(4, 0), 4, &hw, b), 5);
        // Bytes: a multiple of 32 is aligned.
        assert_eq!(transactions(at(32, 0), 1, &hw, b), 1);
        assert_eq!(transactions(at(16, 0), 1, &hw, b), 2);
        // An exact uniform index: one element.
        assert_eq!(transactions(Dep::constant_value(7), 8, &hw, b), 1);
        // Shared: a known start does not change a stride's conflicts.
        assert_eq!(conflicts(at(0, 0), 4, Some(256), &hw, b), 1);
    }

    #[test]
    fn shared_bounds() {
        let hw = Hardware::default();
        let b = Some([256, 1, 1]);
        assert_eq!(conflicts(aff(1, 0), 4, Some(256), &hw, b), 1);
        assert_eq!(conflicts(aff(2, 0), 4, Some(512), &hw, b), 2);
        assert_eq!(conflicts(aff(32, 0), 4, Some(32 * 256), &hw, b), 32);
        assert_eq!(conflicts(aff(33, 0), 4, Some(33 * 256), &hw, b), 1);
        // Data-dependent index into 256 ints: at most 8 words per bank.
        assert_eq!(conflicts(Dep::Varying, 4, Some(256), &hw, b), 8);
        assert_eq!(conflicts(Dep::Varying, 4, None, &hw, b), 32);
        // tile[ty][tx] with a 32×33 tile read column-wise: conflict free.
        assert_eq!(
            conflicts(aff(33, 1), 4, Some(32 * 33), &hw, Some([32, 8, 1])),
            1
        );
    }
}
