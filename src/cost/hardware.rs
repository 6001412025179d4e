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
    /// touched by elements `indices` of `elem_size` bytes (arrays start
    /// aligned to a transaction).
    pub fn mem_reads(&self, indices: &[i64], elem_size: u32) -> u64 {
        let t = self.transaction_bytes as i64;
        let e = elem_size as i64;
        if t % e == 0 && indices.len() <= 64 {
            // Every element lies in one block: no allocation on this hot path.
            let mut blocks = [0i64; 64];
            for (b, &i) in blocks.iter_mut().zip(indices) {
                *b = (i * e).div_euclid(t);
            }
            return count_distinct(&mut blocks[..indices.len()]);
        }
        let mut blocks: Vec<i64> = Vec::with_capacity(indices.len() * 2);
        for &i in indices {
            let first = (i * e).div_euclid(t);
            let last = (i * e + e - 1).div_euclid(t);
            blocks.extend(first..=last);
        }
        count_distinct(&mut blocks)
    }

    /// `Conflicts`: the largest number of distinct bank words any one bank
    /// must serve for elements `indices` of `elem_size` bytes (arrays start
    /// at bank 0). At least 1 when any element is accessed.
    pub fn conflicts(&self, indices: &[i64], elem_size: u32) -> u64 {
        let w = self.bank_bytes as i64;
        let e = elem_size as i64;
        let mut words: Vec<i64> = Vec::with_capacity(indices.len() * 2);
        for &i in indices {
            let first = (i * e).div_euclid(w);
            let last = (i * e + e - 1).div_euclid(w);
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
        assert_eq!(hw.mem_reads(&lanes(|t| t), 4), 4);
        // misaligned by one element: 5 sectors.
        assert_eq!(hw.mem_reads(&lanes(|t| t + 1), 4), 5);
        // stride 2: 256 bytes touched, 8 sectors.
        assert_eq!(hw.mem_reads(&lanes(|t| 2 * t), 4), 8);
        // stride 8 (32 bytes): one sector per lane.
        assert_eq!(hw.mem_reads(&lanes(|t| 8 * t), 4), 32);
        // 1-byte elements: 32 bytes = 1 sector; 8-byte: 256 bytes = 8.
        assert_eq!(hw.mem_reads(&lanes(|t| t), 1), 1);
        assert_eq!(hw.mem_reads(&lanes(|t| t), 8), 8);
        // all lanes on one element: 1.
        assert_eq!(hw.mem_reads(&lanes(|_| 7), 4), 1);
        let lines = Hardware {
            transaction_bytes: 128,
            ..hw
        };
        assert_eq!(lines.mem_reads(&lanes(|t| t), 4), 1);
        assert_eq!(lines.mem_reads(&lanes(|t| t + 1), 4), 2);
        assert_eq!(hw.mem_reads(&[], 4), 0);
    }

    #[test]
    fn bank_conflicts() {
        let hw = Hardware::default();
        assert_eq!(hw.conflicts(&lanes(|t| t), 4), 1);
        assert_eq!(hw.conflicts(&lanes(|t| 2 * t), 4), 2);
        assert_eq!(hw.conflicts(&lanes(|t| 32 * t), 4), 32);
        assert_eq!(hw.conflicts(&lanes(|t| 33 * t), 4), 1);
        // same word: broadcast, no conflict.
        assert_eq!(hw.conflicts(&lanes(|_| 5), 4), 1);
        // bytes: four lanes share a word.
        assert_eq!(hw.conflicts(&lanes(|t| t), 1), 1);
        // doubles: two words per lane, 64 words over 32 banks.
        assert_eq!(hw.conflicts(&lanes(|t| t), 8), 2);
        assert_eq!(hw.conflicts(&[], 4), 0);
    }
}
