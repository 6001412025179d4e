//! The synchronisation builtins, by name: the one table the lowering and
//! the transforms consult to recognise barriers.

/// What a synchronisation builtin waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sync {
    /// `__syncthreads()`: every thread of the block reaches it before any
    /// goes on (the model's barrier).
    Block,
    /// `__syncthreads_count`, `_and`, `_or`: a block barrier that also
    /// combines a predicate over the block.
    BlockPredicate,
    /// `__syncwarp(mask)`: the lanes of a warp wait for each other (no
    /// effect in the lock-step model).
    Warp,
    /// `__threadfence*()`: orders memory accesses without waiting (no
    /// effect in the model).
    Fence,
}

/// The block barrier, `__syncthreads`.
pub const BARRIER: &str = "__syncthreads";

/// The synchronisation builtins and what each waits for.
pub const SYNC_BUILTINS: &[(&str, Sync)] = &[
    (BARRIER, Sync::Block),
    ("__syncthreads_count", Sync::BlockPredicate),
    ("__syncthreads_and", Sync::BlockPredicate),
    ("__syncthreads_or", Sync::BlockPredicate),
    ("__syncwarp", Sync::Warp),
    ("__threadfence", Sync::Fence),
    ("__threadfence_block", Sync::Fence),
    ("__threadfence_system", Sync::Fence),
];

/// What the builtin `name` waits for, if it is a synchronisation builtin.
pub fn sync_kind(name: &str) -> Option<Sync> {
    SYNC_BUILTINS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, kind)| kind)
}

/// Whether calling `name` makes threads wait for each other: a block or
/// warp barrier (fences do not wait).
pub fn is_barrier(name: &str) -> bool {
    matches!(
        sync_kind(name),
        Some(Sync::Block | Sync::BlockPredicate | Sync::Warp)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn barriers_and_fences_are_told_apart() {
        assert_eq!(sync_kind("__syncthreads"), Some(Sync::Block));
        assert_eq!(sync_kind("__syncthreads_or"), Some(Sync::BlockPredicate));
        assert!(is_barrier("__syncwarp"));
        assert!(!is_barrier("__threadfence_block"));
        assert_eq!(sync_kind("__threadfence_block"), Some(Sync::Fence));
        assert_eq!(sync_kind("__syncthreads_foo"), None);
        assert_eq!(sync_kind("syncthreads"), None);
    }
}
