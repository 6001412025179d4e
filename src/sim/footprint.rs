//! How many values a launch's arrays take in the simulator (one 8-byte
//! value per component of an element), checked against
//! [`MAX_ELEMENTS`](super::MAX_ELEMENTS) before anything is allocated:
//! the global arrays of the launch together, and each block's `__shared__`
//! arrays with its threads' local arrays. A kernel may declare any size
//! (`float loc[268435456];`, `__device__ float g[1 << 30];`, a parameter
//! file's `shared_bytes = 4294967296`).

use crate::cuda::ast::Space;
use crate::ir::{Array, Kernel};
use crate::source::Span;

use super::{Inputs, MAX_ELEMENTS};

/// The values array `a` takes: per block for a `__shared__` array (a
/// dynamic one sized by the launch's `shared_bytes`), per thread for a
/// local one, in all for a global one without contents given.
pub fn values_of(a: &Array, shared_bytes: u64) -> u64 {
    let elements = match (a.fixed_len(), a.space) {
        (Some(n), _) => n,
        (None, Space::Shared) => shared_bytes / u64::from(a.layout.size.max(1)),
        (None, _) => 1,
    };
    elements.saturating_mul(a.layout.slots() as u64)
}

/// An array that takes the launch past [`MAX_ELEMENTS`].
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("array `{array}` takes {what}; copper simulates at most {MAX_ELEMENTS} values (the launch's global arrays together, and each block's shared and local arrays)")]
pub struct TooMuchStorage {
    /// The array.
    pub array: String,
    /// Where it is declared.
    pub span: Span,
    /// What it takes.
    what: String,
}

/// Refuses a launch whose arrays take more than [`MAX_ELEMENTS`] values:
/// names the first array (in declaration order) past the limit. The
/// contents given in `inputs` count towards the global arrays.
pub fn check(kernel: &Kernel, inputs: &Inputs) -> Result<(), TooMuchStorage> {
    let threads = inputs.shape.block_threads();
    // Local arrays are kept per warp, 32 lanes each.
    let lanes = threads.div_ceil(32).saturating_mul(32);
    let mut global: u64 = inputs.arrays.values().map(|v| v.len() as u64).sum();
    let mut per_block = 0u64;
    for a in &kernel.arrays {
        let values = values_of(a, inputs.shared_bytes);
        let (total, added, what) = match a.space {
            Space::Shared => (&mut per_block, values, format!("{values} values per block")),
            Space::Local => {
                let block = values.saturating_mul(lanes);
                let what =
                    format!("{values} values per thread, {block} for a block of {threads} threads");
                (&mut per_block, block, what)
            }
            _ if inputs.arrays.contains_key(&a.name) => continue,
            _ => (&mut global, values, format!("{values} values")),
        };
        *total = total.saturating_add(added);
        if *total > MAX_ELEMENTS {
            return Err(TooMuchStorage {
                array: a.name.clone(),
                span: a.span,
                what,
            });
        }
    }
    Ok(())
}
