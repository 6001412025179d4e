//! The hardware model: warp size, global-memory transaction size and
//! shared-memory banks, and the `MemReads`/`Conflicts` functions of
//! `000_…` §3 generalized to element sizes.

use serde::{Deserialize, Serialize};

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
            warp_size: 32,
            transaction_bytes: 32,
            banks: 32,
            bank_bytes: 4,
        }
    }
}

impl Hardware {
    /// Checks the parameters are usable.
    pub fn validate(&self) -> Result<(), String> {
        if self.warp_size == 0 || self.warp_size > 32 {
            return Err(format!("warp_size must be 1..=32, got {}", self.warp_size));
        }
        for (name, v) in [
            ("transaction_bytes", self.transaction_bytes),
            ("banks", self.banks),
            ("bank_bytes", self.bank_bytes),
        ] {
            if v == 0 || !v.is_power_of_two() {
                return Err(format!("{name} must be a positive power of two, got {v}"));
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

    /// `Conflicts`: the largest number of distinct bank words any one bank
    /// must serve for the lanes' accesses at element `indices`, each
    /// covering the bytes `fp` describes (arrays start at bank 0). At least
    /// 1 when any element is accessed.
    ///
    /// An access wider than a bank word counts every word it covers, over
    /// the whole warp: 32 lanes reading consecutive `float4`s cover 128
    /// words, 4 in each bank, so the degree is 4. The hardware serves such
    /// an access in phases (a quarter warp per phase for 16 bytes), which
    /// here take 4 wavefronts as well; copper does not model phases, so a
    /// pattern whose lanes collide within one phase but not across the
    /// warp can cost the hardware more than this degree.
    pub fn conflicts(&self, indices: &[i64], fp: Footprint) -> u64 {
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
}

/// The bytes one lane's access touches: `width` bytes from
/// `index·stride + offset` (an element of `stride` bytes, or one field of
/// it at `offset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// Bytes per array element.
    pub stride: u32,
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
            offset: 0,
            width: size,
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

    #[test]
    fn bank_conflicts() {
        let hw = Hardware::default();
        assert_eq!(hw.conflicts(&lanes(|t| t), Footprint::element(4)), 1);
        assert_eq!(hw.conflicts(&lanes(|t| 2 * t), Footprint::element(4)), 2);
        assert_eq!(hw.conflicts(&lanes(|t| 32 * t), Footprint::element(4)), 32);
        assert_eq!(hw.conflicts(&lanes(|t| 33 * t), Footprint::element(4)), 1);
        // same word: broadcast, no conflict.
        assert_eq!(hw.conflicts(&lanes(|_| 5), Footprint::element(4)), 1);
        // bytes: four lanes share a word.
        assert_eq!(hw.conflicts(&lanes(|t| t), Footprint::element(1)), 1);
        // doubles: two words per lane, 64 words over 32 banks.
        assert_eq!(hw.conflicts(&lanes(|t| t), Footprint::element(8)), 2);
        assert_eq!(hw.conflicts(&[], Footprint::element(4)), 0);
        // float4: 128 words over 32 banks, the 4 quarter-warp phases.
        assert_eq!(hw.conflicts(&lanes(|t| t), Footprint::element(16)), 4);
        // `.y` of consecutive float4s: words 1, 5, 9, …, 125 fall in 8
        // banks, 4 lanes each.
        let y = Footprint {
            stride: 16,
            offset: 4,
            width: 4,
        };
        assert_eq!(hw.conflicts(&lanes(|t| t), y), 4);
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
            offset: 0,
            width: 4,
        };
        assert_eq!(hw.mem_reads(&lanes(|t| t), x), 16);
        // The second int of a 12-byte struct at offset 4, lanes 0..31:
        // bytes 4..8, 16..20, …, 376..380: sectors 0..11, 12 in all.
        let f = Footprint {
            stride: 12,
            offset: 4,
            width: 4,
        };
        assert_eq!(hw.mem_reads(&lanes(|t| t), f), 12);
        // float3 read as one 12-byte range per lane (not a hardware
        // access, but the formula): 384 bytes, 12 sectors.
        assert_eq!(hw.mem_reads(&lanes(|t| t), Footprint::element(12)), 12);
    }
}
