//! Code that relies on the lanes of a warp running in lock step
//! (`warp-synchronous`): lanes exchanging values through shared or global
//! memory with no barrier or `__syncwarp()` between the write and the
//! read, as the classic unrolled last warp of a reduction does. Since
//! Volta a warp's lanes may run in any interleaving, so such code computes
//! whatever the schedule makes it compute.
//!
//! Each launch the race search uses is simulated again with every warp
//! split into two halves that run one after the other (lanes 0–15 up to
//! the next barrier, then 16–31: [`crate::sim::SimOptions::split_warps`]);
//! different final arrays are the finding. Kernels with warp-level
//! primitives or `__syncwarp` are warp-aware and not split, nor are those
//! with atomics whose outcome depends on the order of the threads.

use std::sync::Arc;
use std::time::Instant;

use crate::ir::Kernel;
use crate::sim::params::LaunchSpec;
use crate::sim::work::Work;
use crate::sim::{inputs_from_spec, simulate_owned, SimOptions, SimResult, WORK_LIMIT};

use super::{Code, Finding};

/// The `warp-synchronous` finding of `kernel` when one of `launches`
/// (those [`super::races::launches`] chose) ends with other arrays under
/// split warps than in lock step; the simulations are charged to `work`
/// and stop once it is spent (the launches from there on are not
/// compared: the check notes it stopped), or at the safety net `deadline`.
pub fn findings(
    kernel: &Kernel,
    launches: &[LaunchSpec],
    work: &Arc<Work>,
    deadline: Instant,
) -> Option<Finding> {
    // Atomics whose outcome depends on the order of the threads differ
    // under another schedule without relying on lock step.
    if kernel.lockstep_only() || super::atomics::order_dependent(kernel).is_some() {
        return None;
    }
    let run = |spec: &LaunchSpec, split_warps: bool| -> Option<SimResult> {
        let inputs = inputs_from_spec(kernel, spec).ok()?;
        let opts = SimOptions {
            deadline: Some(deadline),
            work: Some(Arc::clone(work)),
            split_warps,
            ..SimOptions::default()
        };
        match simulate_owned(kernel, inputs, &opts) {
            Ok(r) => Some(r),
            Err(e) if e.message.starts_with(WORK_LIMIT) => {
                work.note_stop(CHECK);
                None
            }
            Err(_) => None,
        }
    };
    launches.iter().find_map(|spec| {
        if work.spent() {
            work.note_stop(CHECK);
            return None;
        }
        let lockstep = run(spec, false)?;
        let split = run(spec, true)?;
        let (name, _) = lockstep
            .arrays
            .iter()
            .zip(&split.arrays)
            .find(|(a, b)| a != b)
            .map(|(a, _)| a)?;
        Some(finding(kernel, name, spec))
    })
}

/// What the lint calls this check, when the work limit stops it.
pub const CHECK: &str = "the lock-step check";

/// The finding for `kernel`, whose array `name` differs on launch `spec`.
fn finding(kernel: &Kernel, name: &str, spec: &LaunchSpec) -> Finding {
    let block = spec
        .block
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join("×");
    Finding {
        code: Code::WarpSynchronous,
        span: kernel.span,
        message: format!(
            "`{}` relies on the lanes of a warp running in lock step: `{name}` ends different (blocks of {block}) when the two halves of each warp run one after the other",
            kernel.name
        ),
        why: "lanes of one warp exchange values through memory with no barrier between the write and the read; since Volta the lanes of a warp may run in any order, so the result depends on the schedule".into(),
        help: Some("put `__syncwarp()` between each write and the reads of it by other lanes (or use warp shuffles, or `__syncthreads()`)".into()),
        worst: None,
        site: None,
        calls: Vec::new(),
    }
}
