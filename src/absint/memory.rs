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

/// Element offsets `Σ c_d·tid_d` of each warp's lanes, if the coefficients
/// are known and the block shape is fixed.
fn lane_offsets(dep: Dep, block: Option<[u64; 3]>, warp: u64) -> Option<Vec<Vec<i64>>> {
    let c = match dep {
        Dep::Uniform(_) => [0i64; 3],
        Dep::Affine(c) => {
            let mut k = [0i64; 3];
            for (d, x) in c.iter().enumerate() {
                match x {
                    Coef::Known(v) => k[d] = *v,
                    Coef::Unknown => return None,
                }
            }
            k
        }
        Dep::Varying => return None,
    };
    let block = match block {
        Some(b) => b,
        // Without a block shape only a 1-D index along x is understood:
        // 32 consecutive values of threadIdx.x.
        None if c[1] == 0 && c[2] == 0 => [warp, 1, 1],
        None => return None,
    };
    Some(
        warps_of(block, warp)
            .into_iter()
            .map(|lanes| {
                lanes
                    .iter()
                    .map(|t| c[0] * t[0] + c[1] * t[1] + c[2] * t[2])
                    .collect()
            })
            .collect(),
    )
}

/// Worst-case global-memory transactions of one access.
pub fn transactions(dep: Dep, elem: u32, hw: &Hardware, block: Option<[u64; 3]>) -> u64 {
    let t = hw.transaction_bytes as i64;
    let per_element = if t % elem as i64 == 0 {
        1
    } else {
        (elem as u64).div_ceil(hw.transaction_bytes as u64) + 1
    };
    match lane_offsets(dep, block, hw.warp_size as u64) {
        Some(warps) => {
            let mut worst = 0;
            for offsets in &warps {
                for u in 0..t {
                    let idx: Vec<i64> = offsets.iter().map(|o| o + u).collect();
                    worst = worst.max(hw.mem_reads(&idx, elem));
                }
            }
            worst
        }
        None => max_lanes(block, hw.warp_size as u64) * per_element,
    }
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
    let cap = len.map(|l| {
        (l * elem as u64)
            .div_ceil(hw.bank_bytes as u64)
            .div_ceil(hw.banks as u64)
            .max(1)
    });
    let bound = match lane_offsets(dep, block, hw.warp_size as u64) {
        Some(warps) => {
            let period = (hw.banks * hw.bank_bytes) as i64;
            let mut worst = 0;
            for offsets in &warps {
                for u in 0..period {
                    let idx: Vec<i64> = offsets.iter().map(|o| o + u).collect();
                    worst = worst.max(hw.conflicts(&idx, elem));
                }
            }
            worst
        }
        None => {
            max_lanes(block, hw.warp_size as u64)
                * words_per_element.div_ceil(hw.banks as u64).max(1)
        }
    };
    match cap {
        Some(c) => bound.min(c),
        None => bound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aff(x: i64, y: i64) -> Dep {
        Dep::Affine([Coef::Known(x), Coef::Known(y), Coef::Known(0)])
    }

    #[test]
    fn global_bounds_are_exact_worst_cases() {
        let hw = Hardware::default();
        let b = Some([256, 1, 1]);
        // Coalesced 4-byte: 4 sectors aligned, 5 misaligned: worst 5.
        assert_eq!(transactions(aff(1, 0), 4, &hw, b), 5);
        assert_eq!(transactions(Dep::Uniform(None), 4, &hw, b), 1);
        assert_eq!(transactions(aff(8, 0), 4, &hw, b), 32);
        assert_eq!(transactions(Dep::Varying, 4, &hw, b), 32);
        // 16×16 block: a warp covers 2 rows of 16.
        assert_eq!(transactions(aff(1, 1024), 4, &hw, Some([16, 16, 1])), 6);
        assert_eq!(transactions(aff(1, 0), 4, &hw, Some([8, 1, 1])), 2);
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
