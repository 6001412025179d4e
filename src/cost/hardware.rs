//! The hardware model: warp size, global-memory transaction size and
//! shared-memory banks, and the `MemReads`/`Conflicts` functions of
//! RaCUDA §3 generalized to element sizes.

use serde::{Deserialize, Serialize};

/// Why a hardware model is unusable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HardwareError {
    /// A warp of 0 or more than 32 threads.
    #[error("warp_size must be 1..=32, got {0}")]
    WarpSize(u32),
    /// A size that must be a power of two and is not.
    #[error("{name} must be a positive power of two, got {value}")]
    NotPowerOfTwo {
        /// The parameter.
        name: &'static str,
        /// Its value.
        value: u32,
    },
}

error_message!(HardwareError);

/// Hardware parameters of the cost model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Hardware {
    /// Threads per warp.
    pub warp_size: u32,
    /// Bytes per global-memory transaction: 32 (sectors, what Nsight
    /// Compute counts) or 128 (cache lines).
    pub transaction_bytes: u32,
    /// Shared-memory banks.
    pub banks: u32,
    /// Bytes per bank word.
    pub bank_bytes: u32,
}

impl Default for Hardware {
    fn default() -> Hardware {
        Hardware {
            warp_size: crate::launch::WARP_SIZE as u32,
            transaction_bytes: 32,
            banks: 32,
            bank_bytes: 4,
        }
    }
}

impl Hardware {
    /// Checks the parameters are usable.
    pub fn validate(&self) -> Result<(), HardwareError> {
        if self.warp_size == 0 || self.warp_size > 32 {
            return Err(HardwareError::WarpSize(self.warp_size));
        }
        for (name, v) in [
            ("transaction_bytes", self.transaction_bytes),
            ("banks", self.banks),
            ("bank_bytes", self.bank_bytes),
        ] {
            if v == 0 || !v.is_power_of_two() {
                return Err(HardwareError::NotPowerOfTwo { name, value: v });
            }
        }
        Ok(())
    }

    /// `MemReads`: the number of distinct transaction-sized, aligned blocks
    /// touched by the lanes' accesses at element `indices`, each covering
    /// the bytes `fp` describes (arrays start aligned to a transaction). A
    /// 16-byte `float4` access is one access of 16 bytes per lane: 32 lanes
    /// reading consecutive `float4`s touch 512 bytes, 16 sectors.
    pub fn mem_reads(&self, indices: &[i64], fp: Footprint) -> u64 {
        let t = self.transaction_bytes as i64;
        let (s, o, w) = (fp.stride as i64, fp.offset as i64, fp.width as i64);
        if fp.within(self.transaction_bytes) && indices.len() <= 64 {
            // Every access lies in one block: no allocation on this hot path.
            let mut blocks = [0i64; 64];
            let blocks = &mut blocks[..indices.len()];
            if self.transaction_bytes.is_power_of_two() {
                // Floor division by a power of two is an arithmetic shift.
                let shift = self.transaction_bytes.trailing_zeros();
                for (b, &i) in blocks.iter_mut().zip(indices) {
                    *b = (i * s + o) >> shift;
                }
            } else {
                for (b, &i) in blocks.iter_mut().zip(indices) {
                    *b = (i * s + o).div_euclid(t);
                }
            }
            return count_distinct(blocks);
        }
        let mut blocks: Vec<i64> = Vec::with_capacity(indices.len() * 2);
        for &i in indices {
            let first = (i * s + o).div_euclid(t);
            let last = (i * s + o + w - 1).div_euclid(t);
            blocks.extend(first..=last);
        }
        count_distinct(&mut blocks)
    }

    /// The most distinct bank words any one bank must serve for the
    /// accesses at element `indices` taken together, each covering the
    /// bytes `fp` describes (arrays start at bank 0): 32 lanes reading
    /// consecutive `float4`s cover 128 words, 4 in each bank. At least 1
    /// when any element is accessed.
    pub fn bank_degree(&self, indices: &[i64], fp: Footprint) -> u64 {
        let b = self.bank_bytes as i64;
        let (s, o, w) = (fp.stride as i64, fp.offset as i64, fp.width as i64);
        let mut words: Vec<i64> = Vec::with_capacity(indices.len() * 2);
        for &i in indices {
            let first = (i * s + o).div_euclid(b);
            let last = (i * s + o + w - 1).div_euclid(b);
            words.extend(first..=last);
        }
        words.sort_unstable();
        words.dedup();
        let mut per_bank = vec![0u64; self.banks as usize];
        for word in words {
            per_bank[word.rem_euclid(self.banks as i64) as usize] += 1;
        }
        per_bank.into_iter().max().unwrap_or(0)
    }

    /// Lanes served together in one phase of a shared access of `width`
    /// bytes per lane: the whole warp for a bank word or less; for a wider
    /// access the lanes whose words fill the banks once (a half warp for 8
    /// bytes, a quarter warp for 16, with 32 banks of 4 bytes), as the
    /// hardware splits 64- and 128-bit accesses (Horga et al.).
    pub fn phase_lanes(&self, width: u32) -> usize {
        let warp = self.warp_size as usize;
        if width <= self.bank_bytes {
            warp
        } else {
            ((self.banks * self.bank_bytes / width) as usize).clamp(1, warp)
        }
    }

    /// Phases of a warp's shared access of `width` bytes per lane.
    pub fn phases(&self, width: u32) -> u64 {
        (self.warp_size as usize).div_ceil(self.phase_lanes(width)) as u64
    }

    /// `Conflicts`: the degree `n` of one shared-memory request by the
    /// active `lanes` (lane numbers, ascending) at element `indices` (one
    /// per lane), each covering the bytes `fp` describes. Each phase
    /// ([`Hardware::phase_lanes`]) with an active lane is served in as
    /// many wavefronts as its [`Hardware::bank_degree`]; `n` is one plus
    /// the wavefronts beyond one per phase (what Nsight counts as bank
    /// conflicts): 1 for a conflict-free request of any width (a warp of
    /// consecutive `float4`s), 0 without lanes. For a bank word or less
    /// (one phase) it is the bank degree.
    pub fn conflicts(&self, lanes: &[usize], indices: &[i64], fp: Footprint) -> u64 {
        let per = self.phase_lanes(fp.width);
        let mut extra = 0;
        let mut any = false;
        let mut start = 0;
        while start < lanes.len() {
            let phase = lanes[start] / per;
            let mut end = start;
            while end < lanes.len() && lanes[end] / per == phase {
                end += 1;
            }
            extra += self.bank_degree(&indices[start..end], fp) - 1;
            any = true;
            start = end;
        }
        if any {
            1 + extra
        } else {
            0
        }
    }

    /// An upper bound of [`Hardware::conflicts`] for a request whose lanes'
    /// phases are not known, from an upper bound `degree` of the
    /// [`Hardware::bank_degree`] of all its lanes together (each phase's is
    /// at most that).
    pub fn conflicts_of_degree(&self, degree: u64, width: u32) -> u64 {
        if degree == 0 {
            0
        } else {
            1 + self.phases(width) * (degree - 1)
        }
    }
}

/// The bytes one lane's access touches: `width` bytes from
/// `index·stride + offset` (an element of `stride` bytes, or one field of
/// it at `offset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// Bytes per unit of the index: the array element's size, or less for
    /// a run-time index into an array member (`ir::Member`), whose index
    /// counts smaller units.
    pub stride: u32,
    /// Bytes per array element (`stride` but for such an index).
    pub element: u32,
    /// Byte offset of the accessed part in its element.
    pub offset: u32,
    /// Bytes accessed (at least 1).
    pub width: u32,
}

impl Footprint {
    /// A whole element of `size` bytes.
    pub fn element(size: u32) -> Footprint {
        Footprint {
            stride: size,
            element: size,
            offset: 0,
            width: size,
        }
    }

    /// The index step between consecutive lanes of a coalesced access: 1,
    /// or for a vector view wider than the element (a `float4` view of a
    /// `float` array) the elements one access covers.
    pub fn lane_step(&self) -> i64 {
        if self.width > self.stride && self.stride > 0 && self.width.is_multiple_of(self.stride) {
            i64::from(self.width / self.stride)
        } else {
            1
        }
    }

    /// Whether no access crosses a boundary of `unit` bytes (arrays start
    /// aligned to `unit`).
    pub fn within(&self, unit: u32) -> bool {
        let w = self.width;
        unit.is_multiple_of(w) && self.offset.is_multiple_of(w) && self.stride.is_multiple_of(w)
    }

    /// The most `unit`-byte aligned blocks one access can touch.
    pub fn max_blocks(&self, unit: u32) -> u64 {
        let n = self.width.div_ceil(unit) as u64;
        let aligned = self.offset.is_multiple_of(unit) && self.stride.is_multiple_of(unit);
        if self.within(unit) {
            1
        } else if aligned {
            n
        } else {
            n + 1
        }
    }
}

/// Number of distinct values (sorts `v` unless it is already sorted).
fn count_distinct(v: &mut [i64]) -> u64 {
    if v.is_empty() {
        return 0;
    }
    if !v.windows(2).all(|w| w[0] <= w[1]) {
        v.sort_unstable();
    }
    1 + v.windows(2).filter(|w| w[0] != w[1]).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes(f: impl Fn(i64) -> i64) -> Vec<i64> {
        (0..32).map(f).collect()
    }

    #[test]
    fn transactions_follow_element_size_and_stride() {
        let hw = Hardware::default();
        // 4-byte elements: coalesced = 128 bytes = 4 sectors.
        assert_eq!(hw.mem_reads(&lanes(|t| t), Footprint::element(4)), 4);
        // misaligned by one element: 5 sectors.
        assert_eq!(hw.mem_reads(&lanes(|t| t + 1), Footprint::element(4)), 5);
        // stride 2: 256 bytes touched, 8 sectors.
        assert_eq!(hw.mem_reads(&lanes(|t| 2 * t), Footprint::element(4)), 8);
        // stride 8 (32 bytes): one sector per lane.
        assert_eq!(hw.mem_reads(&lanes(|t| 8 * t), Footprint::element(4)), 32);
        // 1-byte elements: 32 bytes = 1 sector; 8-byte: 256 bytes = 8.
        assert_eq!(hw.mem_reads(&lanes(|t| t), Footprint::element(1)), 1);
        assert_eq!(hw.mem_reads(&lanes(|t| t), Footprint::element(8)), 8);
        // all lanes on one element: 1.
        assert_eq!(hw.mem_reads(&lanes(|_| 7), Footprint::element(4)), 1);
        let lines = Hardware {
            transaction_bytes: 128,
            ..hw
        };
        assert_eq!(lines.mem_reads(&lanes(|t| t), Footprint::element(4)), 1);
        assert_eq!(lines.mem_reads(&lanes(|t| t + 1), Footprint::element(4)), 2);
        assert_eq!(hw.mem_reads(&[], Footprint::element(4)), 0);
    }

    fn all_lanes() -> Vec<usize> {
        (0..32).collect()
    }

    #[test]
    fn bank_conflicts() {
        let hw = Hardware::default();
        let c = |idx: &[i64], fp| hw.conflicts(&all_lanes(), idx, fp);
        assert_eq!(c(&lanes(|t| t), Footprint::element(4)), 1);
        assert_eq!(c(&lanes(|t| 2 * t), Footprint::element(4)), 2);
        assert_eq!(c(&lanes(|t| 32 * t), Footprint::element(4)), 32);
        assert_eq!(c(&lanes(|t| 33 * t), Footprint::element(4)), 1);
        // same word: broadcast, no conflict.
        assert_eq!(c(&lanes(|_| 5), Footprint::element(4)), 1);
        // bytes: four lanes share a word.
        assert_eq!(c(&lanes(|t| t), Footprint::element(1)), 1);
        assert_eq!(hw.conflicts(&[], &[], Footprint::element(4)), 0);
        // doubles: two half-warp phases of 32 words each, conflict free
        // (64 words over the warp, 2 per bank).
        assert_eq!(c(&lanes(|t| t), Footprint::element(8)), 1);
        assert_eq!(hw.bank_degree(&lanes(|t| t), Footprint::element(8)), 2);
        // float4: four quarter-warp phases of 32 words: conflict free.
        assert_eq!(c(&lanes(|t| t), Footprint::element(16)), 1);
        assert_eq!(hw.bank_degree(&lanes(|t| t), Footprint::element(16)), 4);
        // float4 at stride 2 (every other element): each phase's 8 lanes
        // cover 64 words, 2 per bank: 2 wavefronts per phase, 4 more
        // than the ideal 4.
        assert_eq!(c(&lanes(|t| 2 * t), Footprint::element(16)), 5);
        // Every phase reading the same two float4s of one bank pair (lanes
        // t and t + 2 of a phase at elements 0 and 8): each phase 2-way,
        // although the warp as a whole touches only 8 words of 4 banks,
        // 2 per bank.
        let same = lanes(|t| if t % 2 == 0 { 0 } else { 8 });
        assert_eq!(hw.bank_degree(&same, Footprint::element(16)), 2);
        assert_eq!(c(&same, Footprint::element(16)), 5);
        assert!(hw.conflicts_of_degree(2, 16) >= 5);
        // Inactive lanes: only lanes 0 and 8 (two phases), both conflict
        // free.
        assert_eq!(hw.conflicts(&[0, 8], &[0, 1], Footprint::element(16)), 1);
        // `.y` of consecutive float4s: a 4-byte access, one phase; words
        // 1, 5, 9, …, 125 fall in 8 banks, 4 lanes each.
        let y = Footprint {
            stride: 16,
            element: 16,
            offset: 4,
            width: 4,
        };
        assert_eq!(c(&lanes(|t| t), y), 4);
        assert_eq!(hw.phases(4), 1);
        assert_eq!((hw.phases(8), hw.phases(16)), (2, 4));
    }

    #[test]
    fn vector_and_field_accesses() {
        let hw = Hardware::default();
        // 32 lanes reading consecutive float4s: 512 bytes = 16 sectors.
        assert_eq!(hw.mem_reads(&lanes(|t| t), Footprint::element(16)), 16);
        // float2: 256 bytes = 8 sectors.
        assert_eq!(hw.mem_reads(&lanes(|t| t), Footprint::element(8)), 8);
        // `.x` alone of consecutive float4s: 4 bytes every 16: still 16
        // sectors (2 lanes per sector).
        let x = Footprint {
            stride: 16,
            element: 16,
            offset: 0,
            width: 4,
        };
        assert_eq!(hw.mem_reads(&lanes(|t| t), x), 16);
        // The second int of a 12-byte struct at offset 4, lanes 0..31:
        // bytes 4..8, 16..20, …, 376..380: sectors 0..11, 12 in all.
        let f = Footprint {
            stride: 12,
            element: 12,
            offset: 4,
            width: 4,
        };
        assert_eq!(hw.mem_reads(&lanes(|t| t), f), 12);
        // float3 read as one 12-byte range per lane (not a hardware
        // access, but the formula): 384 bytes, 12 sectors.
        assert_eq!(hw.mem_reads(&lanes(|t| t), Footprint::element(12)), 12);
    }
}
