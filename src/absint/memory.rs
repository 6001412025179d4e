//! Bounds on `MemReads` and `Conflicts` for an access whose index has a
//! known thread dependence (RaCUDA Thm 4 and Thm 5, made exact where the
//! block shape is known).
//!
//! For an index `u + Σ c_d·threadIdx.d` with known coefficients and a known
//! block shape, the lanes of every warp are enumerated, and the worst case
//! over every alignment of the unknown uniform part `u` is taken: the bound
//! is the exact worst case of the cost model. Otherwise the bound is the
//! number of lanes (each in its own transaction or bank word), capped for
//! shared arrays by how many words of the array one bank can hold.

use super::deps::{Coef, Dep};
use crate::cost::{Footprint, Hardware};
use crate::launch::Dims;

/// The lanes of every warp of a block: `threadIdx` per lane.
pub fn warps_of(block: Dims, warp: u64) -> Vec<Vec<[i64; 3]>> {
    let threads = block.count();
    let [bx, by, _] = block.to_array();
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
fn max_lanes(block: Option<Dims>, warp: u64) -> u64 {
    block.map_or(warp, |b| b.count().min(warp))
}

/// Where a group of lanes may lie against the uniform part `u` of the
/// index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Placement {
    /// At `u`, where `u` obeys the index's congruence, or at `u` plus a
    /// multiple of `step` (a warp's first lane is `step·w` elements on).
    Congruent { step: i64 },
    /// Anywhere: an unknown coefficient or an unknown row length puts it
    /// there.
    Anywhere,
}

/// One group of lanes: their element offsets `Σ c_d·tid_d` over the known
/// coefficients, their lane numbers in the warp, and where the group may
/// lie.
type Group = (Vec<i64>, Vec<usize>, Placement);

/// The layouts the lanes of one warp can take, each split into groups that
/// agree on every thread-index component whose coefficient is unknown.
/// Unknown coefficients shift the groups against each other arbitrarily,
/// so a layout's worst case is the sum of its groups' worst cases.
///
/// With a known block, each warp's lanes are enumerated. Without one, only
/// an index along `threadIdx.x` alone is understood, and a warp holds 32
/// consecutive linear thread ids `x + blockDim.x·(y + blockDim.y·z)`:
/// either 32 consecutive `x` (when `blockDim.x` is a multiple of 32, or
/// the block is one row), or — a row of `blockDim.x` not a multiple of 32
/// wrapping into the next — the end of one row and the start of the next,
/// two runs of `k` and `32 − k` consecutive `x` (`k` = 1…31) placed
/// anywhere (rows narrower than a warp repeat `x` values, a subset of the
/// single run). `None` when the index has no affine shape, or the block is
/// unknown and the index depends on more than `threadIdx.x`.
fn layouts(coefs: [Coef; 3], block: Option<Dims>, warp: u64) -> Option<Vec<Vec<Group>>> {
    let placed = coefs.contains(&Coef::Unknown);
    let Some(block) = block else {
        if coefs[1] != Coef::Known(0) || coefs[2] != Coef::Known(0) {
            return None;
        }
        let Coef::Known(c) = coefs[0] else {
            // Every lane's element placed on its own.
            return Some(vec![(0..warp as usize)
                .map(|l| (vec![0], vec![l], Placement::Anywhere))
                .collect()]);
        };
        let run = |n: u64| (0..n as i64).map(|x| c * x).collect::<Vec<i64>>();
        let ids = |from: u64, to: u64| (from as usize..to as usize).collect::<Vec<usize>>();
        let mut out = vec![vec![(
            run(warp),
            ids(0, warp),
            Placement::Congruent {
                step: c.saturating_mul(warp as i64),
            },
        )]];
        out.extend((1..warp).map(|k| {
            vec![
                (run(k), ids(0, k), Placement::Anywhere),
                (run(warp - k), ids(k, warp), Placement::Anywhere),
            ]
        }));
        return Some(out);
    };
    Some(
        warps_of(block, warp)
            .into_iter()
            .map(|lanes| {
                let mut groups: Vec<(Vec<i64>, Vec<i64>, Vec<usize>)> = Vec::new();
                for (lane, t) in lanes.iter().enumerate() {
                    let mut key = Vec::new();
                    let mut offset = 0;
                    for d in 0..3 {
                        match coefs[d] {
                            Coef::Known(c) => offset += c * t[d],
                            Coef::Unknown => key.push(t[d]),
                        }
                    }
                    match groups.iter_mut().find(|(k, _, _)| *k == key) {
                        Some((_, offs, ids)) => {
                            offs.push(offset);
                            ids.push(lane);
                        }
                        None => groups.push((key, vec![offset], vec![lane])),
                    }
                }
                let placement = if placed {
                    Placement::Anywhere
                } else {
                    Placement::Congruent { step: 0 }
                };
                groups
                    .into_iter()
                    .map(|(_, offs, ids)| (offs, ids, placement))
                    .collect()
            })
            .collect(),
    )
}

/// The worst case over warp layouts of the sum over groups of the worst
/// case over shifts `0..period` of `cost(offsets + shift)`: every shift for
/// a group placed anywhere, the shifts the congruence `cong` of the
/// uniform part allows (up to the group's step) otherwise.
fn worst(
    dep: Dep,
    block: Option<Dims>,
    warp: u64,
    period: i64,
    cost: impl Fn(&[i64], &[usize]) -> Vec<u64>,
    finish: impl Fn(&[u64]) -> u64,
) -> Option<u64> {
    let (coefs, cong) = dep.affine_parts()?;
    let layouts = layouts(coefs, block, warp)?;
    let allowed = |u: i64, placement: Placement| match placement {
        Placement::Anywhere => true,
        Placement::Congruent { step } if step % period == 0 => cong.admits_mod(u, period),
        Placement::Congruent { step } => {
            (0..period).any(|w| cong.admits_mod(u - step.wrapping_mul(w), period))
        }
    };
    let shifted = |offs: &[i64], u: i64| offs.iter().map(|o| o + u).collect::<Vec<i64>>();
    Some(
        layouts
            .iter()
            .map(|groups| match groups.as_slice() {
                // One group: the cost of each placement, exactly.
                [(offs, ids, placement)] => (0..period)
                    .filter(|&u| allowed(u, *placement))
                    .map(|u| finish(&cost(&shifted(offs, u), ids)))
                    .max()
                    .unwrap_or(0),
                // Groups shifted independently: per bucket, the sum of each
                // group's worst.
                _ => {
                    let mut total: Vec<u64> = Vec::new();
                    for (offs, ids, placement) in groups {
                        let mut most: Vec<u64> = Vec::new();
                        for u in (0..period).filter(|&u| allowed(u, *placement)) {
                            let c = cost(&shifted(offs, u), ids);
                            most.resize(most.len().max(c.len()), 0);
                            for (m, x) in most.iter_mut().zip(c) {
                                *m = (*m).max(x);
                            }
                        }
                        total.resize(total.len().max(most.len()), 0);
                        for (t, m) in total.iter_mut().zip(most) {
                            *t += m;
                        }
                    }
                    finish(&total)
                }
            })
            .max()
            .unwrap_or(0),
    )
}

/// Worst-case global-memory transactions of one access.
pub fn transactions(dep: Dep, fp: Footprint, hw: &Hardware, block: Option<Dims>) -> u64 {
    let t = hw.transaction_bytes as u64;
    let all = max_lanes(block, hw.warp_size as u64) * fp.max_blocks(hw.transaction_bytes);
    let warp = hw.warp_size as u64;
    worst(
        dep,
        block,
        warp,
        t as i64,
        |idx, _| vec![hw.mem_reads(idx, fp)],
        |v| v.iter().sum(),
    )
    .map_or(all, |w| w.min(all))
}

/// Worst-case bank-conflict degree ([`Hardware::conflicts`]) of one
/// shared-memory access to an array of `len` elements (when fixed): each
/// phase's bank degree over the lanes of the phase (for groups of lanes
/// shifted against each other, the sum of their worst degrees in the
/// phase); without an affine index, every phase at the most words one
/// bank can hold ([`Hardware::conflicts_of_degree`]).
pub fn conflicts(
    dep: Dep,
    fp: Footprint,
    len: Option<u64>,
    hw: &Hardware,
    block: Option<Dims>,
) -> u64 {
    // `len` counts elements, of `fp.element` bytes each.
    let lanes = max_lanes(block, hw.warp_size as u64);
    let words_per_element = fp.max_blocks(hw.bank_bytes);
    // Each lane puts at most this many words in one bank.
    let all = lanes * words_per_element.div_ceil(hw.banks as u64).max(1);
    // One bank holds at most this many distinct words of the array.
    let cap = len.map(|l| {
        (l * fp.element as u64)
            .div_ceil(hw.bank_bytes as u64)
            .div_ceil(hw.banks as u64)
            .max(1)
    });
    let degree_cap = cap.map_or(all, |c| c.min(all));
    // Without more: every phase at the cap, and never more than `all`
    // (each phase's lanes put at most their words in one bank).
    let most = hw.conflicts_of_degree(degree_cap, fp.width).min(all);
    let period = (hw.banks * hw.bank_bytes) as i64;
    let per = hw.phase_lanes(fp.width);
    worst(
        dep,
        block,
        hw.warp_size as u64,
        period,
        // The bank degree of the lanes of each phase.
        |idx, ids| {
            let mut phases = vec![0; hw.phases(fp.width) as usize];
            for (p, degree) in phases.iter_mut().enumerate() {
                let mine: Vec<i64> = ids
                    .iter()
                    .zip(idx)
                    .filter(|(l, _)| **l / per == p)
                    .map(|(_, i)| *i)
                    .collect();
                *degree = hw.bank_degree(&mine, fp);
            }
            phases
        },
        // One plus the wavefronts beyond one per phase with lanes.
        |phases| {
            let extra: u64 = phases
                .iter()
                .filter(|&&d| d > 0)
                .map(|&d| d.min(degree_cap) - 1)
                .sum();
            if phases.iter().any(|&d| d > 0) {
                1 + extra
            } else {
                0
            }
        },
    )
    .map_or(most, |w| w.min(most))
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
        let b = crate::launch::block([256, 1, 1]).ok();
        // Coalesced 4-byte: 4 sectors aligned, 5 misaligned: worst 5.
        assert_eq!(transactions(aff(1, 0), Footprint::element(4), &hw, b), 5);
        assert_eq!(transactions(Dep::UNIFORM, Footprint::element(4), &hw, b), 1);
        assert_eq!(transactions(aff(8, 0), Footprint::element(4), &hw, b), 32);
        assert_eq!(
            transactions(Dep::Varying, Footprint::element(4), &hw, b),
            32
        );
        // 16×16 block: a warp covers 2 rows of 16.
        assert_eq!(
            transactions(
                aff(1, 1024),
                Footprint::element(4),
                &hw,
                crate::launch::block([16, 16, 1]).ok()
            ),
            6
        );
        assert_eq!(
            transactions(
                aff(1, 0),
                Footprint::element(4),
                &hw,
                crate::launch::block([8, 1, 1]).ok()
            ),
            2
        );
        // row·n + x with an unknown row length n in a 16×16 block: two rows
        // of 16 consecutive floats per warp, each 64 bytes over at most 3
        // sectors, placed anywhere.
        let rows = Dep::Affine([Coef::Known(1), Coef::Unknown, Coef::Known(0)], Cong::ANY);
        assert_eq!(
            transactions(
                rows,
                Footprint::element(4),
                &hw,
                crate::launch::block([16, 16, 1]).ok()
            ),
            6
        );
        // x·n + y (a transpose's write): 16 columns of 2 elements.
        let cols = Dep::Affine([Coef::Unknown, Coef::Known(1), Coef::Known(0)], Cong::ANY);
        assert_eq!(
            transactions(
                cols,
                Footprint::element(4),
                &hw,
                crate::launch::block([16, 16, 1]).ok()
            ),
            32
        );
        assert_eq!(
            transactions(
                cols,
                Footprint::element(4),
                &hw,
                crate::launch::block([16, 2, 1]).ok()
            ),
            32
        );
        // 4 columns of 8 doubles (64 bytes, up to 3 sectors each).
        assert_eq!(
            transactions(
                cols,
                Footprint::element(8),
                &hw,
                crate::launch::block([4, 8, 1]).ok()
            ),
            12
        );
    }

    #[test]
    fn provable_alignment() {
        let hw = Hardware::default();
        let b = crate::launch::block([256, 1, 1]).ok();
        let at = |m, r| {
            Dep::Affine(
                [Coef::Known(1), Coef::Known(0), Coef::Known(0)],
                Cong::new(m, r),
            )
        };
        // blockIdx.x·256 + threadIdx.x: every warp starts a sector.
        assert_eq!(transactions(at(256, 0), Footprint::element(4), &hw, b), 4);
        // … + 1: one element late, one sector more.
        assert_eq!(transactions(at(256, 1), Footprint::element(4), &hw, b), 5);
        // A multiple of 8 floats is 32 bytes: aligned.
        assert_eq!(transactions(at(8, 0), Footprint::element(4), &hw, b), 4);
        assert_eq!(transactions(at(4, 0), Footprint::element(4), &hw, b), 5);
        // Bytes: a multiple of 32 is aligned.
        assert_eq!(transactions(at(32, 0), Footprint::element(1), &hw, b), 1);
        // Consecutive float4s: 512 bytes, 16 sectors from an even element,
        // 17 from an odd one (half a sector in).
        assert_eq!(transactions(at(2, 0), Footprint::element(16), &hw, b), 16);
        assert_eq!(transactions(aff(1, 0), Footprint::element(16), &hw, b), 17);
        assert_eq!(transactions(at(16, 0), Footprint::element(1), &hw, b), 2);
        // An exact uniform index: one element.
        assert_eq!(
            transactions(Dep::constant_value(7), Footprint::element(8), &hw, b),
            1
        );
        // Shared: a known start does not change a stride's conflicts.
        assert_eq!(
            conflicts(at(0, 0), Footprint::element(4), Some(256), &hw, b),
            1
        );
    }

    #[test]
    fn any_block_warps_may_wrap_across_rows() {
        let hw = Hardware::default();
        // out[threadIdx.x] in a 33×2 block: warp 1 is x = 32 and x = 0…30,
        // 5 sectors although the start is aligned.
        let x = Dep::Affine(
            [Coef::Known(1), Coef::Known(0), Coef::Known(0)],
            Cong::new(0, 0),
        );
        assert_eq!(
            transactions(
                x,
                Footprint::element(4),
                &hw,
                crate::launch::block([33, 2, 1]).ok()
            ),
            5
        );
        assert!(transactions(x, Footprint::element(4), &hw, None) >= 5);
        // s[threadIdx.x]: x = 32 and x = 0 share bank 0.
        assert_eq!(
            conflicts(
                x,
                Footprint::element(4),
                Some(64),
                &hw,
                crate::launch::block([33, 2, 1]).ok()
            ),
            2
        );
        assert!(conflicts(x, Footprint::element(4), Some(64), &hw, None) >= 2);
        // A 1-D block of any size is still conflict free and a run of 32.
        assert_eq!(
            conflicts(
                x,
                Footprint::element(4),
                Some(64),
                &hw,
                crate::launch::block([40, 1, 1]).ok()
            ),
            1
        );
    }

    #[test]
    fn shared_bounds() {
        let hw = Hardware::default();
        let b = crate::launch::block([256, 1, 1]).ok();
        assert_eq!(
            conflicts(aff(1, 0), Footprint::element(4), Some(256), &hw, b),
            1
        );
        assert_eq!(
            conflicts(aff(2, 0), Footprint::element(4), Some(512), &hw, b),
            2
        );
        assert_eq!(
            conflicts(aff(32, 0), Footprint::element(4), Some(32 * 256), &hw, b),
            32
        );
        assert_eq!(
            conflicts(aff(33, 0), Footprint::element(4), Some(33 * 256), &hw, b),
            1
        );
        // Data-dependent index into 256 ints: at most 8 words per bank.
        assert_eq!(
            conflicts(Dep::Varying, Footprint::element(4), Some(256), &hw, b),
            8
        );
        assert_eq!(
            conflicts(Dep::Varying, Footprint::element(4), None, &hw, b),
            32
        );
        // tile[ty][tx] with a 32×33 tile read column-wise: conflict free.
        assert_eq!(
            conflicts(
                aff(33, 1),
                Footprint::element(4),
                Some(32 * 33),
                &hw,
                crate::launch::block([32, 8, 1]).ok()
            ),
            1
        );
    }

    #[test]
    fn wide_shared_accesses_are_served_in_phases() {
        let hw = Hardware::default();
        let b = crate::launch::block([256, 1, 1]).ok();
        // Consecutive float4s: four quarter-warp phases, each conflict free.
        let f4 = Footprint::element(16);
        assert_eq!(conflicts(aff(1, 0), f4, Some(256), &hw, b), 1);
        // For any block, a warp may hold the end of one row and the start
        // of the next, placed anywhere: two 16-word runs in one phase can
        // share banks.
        assert_eq!(conflicts(aff(1, 0), f4, None, &hw, None), 2);
        // Consecutive doubles: two half-warp phases.
        assert_eq!(
            conflicts(aff(1, 0), Footprint::element(8), Some(256), &hw, b),
            1
        );
        // float4s at stride 2: 2 wavefronts in each of 4 phases.
        assert_eq!(conflicts(aff(2, 0), f4, Some(512), &hw, b), 5);
        // A data-dependent float4 index: every phase may be as bad as a
        // bank can be (8 lanes of 4 words: 8 words in one bank), within
        // the lanes' own bound.
        let any = conflicts(Dep::Varying, f4, None, &hw, b);
        assert!(any >= hw.conflicts(&(0..32).collect::<Vec<_>>(), &[0; 32], f4));
        assert!(any <= 32);
    }
}
