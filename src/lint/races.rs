//! Data races before the block-size verdict: the proof of
//! [`super::block_size`] assumes race freedom, since a kernel that races
//! computes what the schedule, and so the block shape, makes it compute
//! (`out[i] = in[i] + out[i + 1]` reads a neighbour's element that another
//! warp may already have written).
//!
//! The simulator detects races between blocks and between the lanes of a
//! warp; lanes of different warps of one block run in a fixed order there.
//! So each launch is also run with the same threads in blocks of one warp
//! and of one thread along `x`, which turns every pair of warps, then of
//! threads, into a pair of blocks (only for a kernel whose results do not
//! depend on the block size otherwise). The launches are the parameter
//! file's, or, without one, the one of whole blocks among those the
//! rewrite checker synthesizes (the others have sizes a kernel may not
//! support; they are used when that one runs too long), with arrays grown
//! as it grows them.
//!
//! Atomics do not race with one another, and the simulator tracks only
//! plain accesses; the atomics whose outcome depends on the order of the
//! threads, and plain accesses to an array other threads update
//! atomically, make the verdict "depends" before any search
//! ([`super::atomics`]), so no reshaped launch is compared for them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::ir::{visit_stmts, Kernel};
use crate::launch::Dims;
use crate::sim::params::{InitKind, LaunchSpec};
use crate::sim::test_launch::{grown, synthesized};
use crate::sim::work::Work;
use crate::sim::{inputs_from_spec, simulate_owned, SimOptions, WORK_LIMIT};
use crate::source::Span;

/// Launches with more blocks than this are not reshaped into one-thread
/// blocks (the simulator's cost per block would dominate).
const MAX_BLOCKS: u64 = 1 << 16;

/// Nor when blocks times the kernel's statements exceed this: a warp of
/// one thread costs as much to simulate as a full one, so a long kernel in
/// thousands of one-thread blocks would take minutes.
const MAX_BLOCK_STMTS: u64 = 1 << 21;

/// Most instructions the lint of one kernel may simulate, every check
/// together (the block fit, growing the test launch's arrays in
/// [`launches`], the lock-step check and the race search share one
/// [`Work`]): the deterministic work limit. A launch cut by it counts as
/// not run (it says nothing about races), and so do the ones after it;
/// the lint says which checks it stopped.
pub const STEPS: u64 = 5_000_000;

/// What the lint calls growing the test launch, when the work limit
/// stops it ([`Work::note_stop`]).
pub const GROWING: &str = "growing the test launch's arrays";

/// What the lint calls the race search, when the work limit stops it.
pub const SEARCH: &str = "the race search";

/// Wall-clock safety net of the race search and the lock-step check
/// together; a launch still running then counts as not run, which may
/// differ on a faster machine.
pub const WALL_CLOCK: Duration = Duration::from_secs(20);

/// What the race search found.
#[derive(Clone, Debug, PartialEq)]
pub enum Races {
    /// No race in this many launches that ran to the end.
    NoneFound(usize),
    /// A race: where, and the simulator's message.
    Found(Span, String),
}

/// The launches the race search (and the lock-step check,
/// [`super::lockstep`]) runs `kernel` on: `spec` (scaled down when it is
/// GPU-sized: [`crate::sim::scale`]) and the same with random data, or,
/// without it, synthesized ones around `block`, their runs charged to
/// `work`, never past `deadline`. A race found while growing the
/// synthesized launch's arrays is the answer instead.
pub fn launches(
    kernel: &Kernel,
    spec: Option<&LaunchSpec>,
    block: Option<Dims>,
    work: &Arc<Work>,
    deadline: Instant,
) -> Result<Vec<LaunchSpec>, Races> {
    let Some(s) = spec else {
        // The synthesized launch of whole blocks (its sizes a multiple
        // of the block, as kernels often require: a transpose of a
        // 17 × 17 matrix by 32 × 32 tiles makes blocks overlap), its
        // arrays grown until the kernel runs in bounds, as the checks
        // grow them; a race on the way is the answer.
        // When it cannot run (too long), the smaller ones that can.
        let mut launches = synthesized(kernel, block.unwrap_or(Dims::SYNTHESIZED_BLOCK));
        let whole = launches.pop();
        let grow = |s: LaunchSpec| {
            let r = grown(kernel, s, work, Some(deadline));
            if matches!(&r, Err(Some(e)) if e.message.starts_with(WORK_LIMIT)) {
                work.note_stop(GROWING);
            }
            r
        };
        return match whole.map(grow) {
            Some(Ok(s)) => Ok(vec![s]),
            Some(Err(Some(e))) if e.race => Err(Races::Found(e.span, e.message)),
            _ => Ok(launches.into_iter().filter_map(|s| grow(s).ok()).collect()),
        };
    };
    let s = crate::sim::scale::for_testing(kernel, s).spec;
    let random = with_random_data(kernel, &s);
    Ok(vec![s, random])
}

/// Searches races of `kernel` in `bases` ([`launches`]) and, with
/// `reshape` (for a kernel whose results do not depend on the block size,
/// so that regrouping its threads changes nothing else), their reshaped
/// variants, charging every run to `work` (in the lint, the kernel's
/// whole allowance, [`STEPS`]) and stopping once it is spent, or at the
/// safety net `deadline`.
pub fn search(
    kernel: &Kernel,
    bases: &[LaunchSpec],
    reshape: bool,
    work: &Arc<Work>,
    deadline: Instant,
) -> Races {
    let opts = SimOptions {
        detect_races: true,
        deadline: Some(deadline),
        work: Some(Arc::clone(work)),
        ..SimOptions::default()
    };
    let mut clean = 0;
    let mut stmts = 0u64;
    visit_stmts(&kernel.body, &mut |_| stmts += 1);
    let launches: Vec<LaunchSpec> = if reshape {
        bases.iter().flat_map(|s| reshaped(s, stmts)).collect()
    } else {
        bases.to_vec()
    };
    for launch in launches {
        let Ok(inputs) = inputs_from_spec(kernel, &launch) else {
            continue;
        };
        match simulate_owned(kernel, inputs, &opts) {
            Ok(_) => clean += 1,
            Err(e) if e.race => return Races::Found(e.span, e.message),
            Err(e) if e.message.starts_with(WORK_LIMIT) => {
                work.note_stop(SEARCH);
                break;
            }
            // A launch the kernel cannot run (out of bounds at another
            // shape) says nothing about races.
            Err(_) => {}
        }
    }
    Races::NoneFound(clean)
}

/// `spec` with every array filled with random values: a write that stores
/// the value already there is no race (the order cannot matter), so data
/// of zeros or constants can hide one.
fn with_random_data(kernel: &Kernel, spec: &LaunchSpec) -> LaunchSpec {
    let mut s = spec.clone();
    for (name, a) in s.arrays.iter_mut() {
        let float = kernel
            .arrays
            .iter()
            .find(|k| &k.name == name)
            .is_some_and(|k| k.layout.types.iter().all(|t| t.is_float()));
        a.init = InitKind::Random;
        a.seed = a.seed.wrapping_add(0x5eed);
        (a.min, a.max) = if float { (-2.0, 2.0) } else { (0.0, 9.0) };
    }
    s
}

/// `spec`, then the same threads along `x` in blocks of 32 and of 1 thread
/// (where they divide them, within the limits above for a kernel of
/// `stmts` statements).
fn reshaped(spec: &LaunchSpec, stmts: u64) -> Vec<LaunchSpec> {
    let mut out = vec![spec.clone()];
    let Ok(shape) = spec.shape() else {
        return out;
    };
    let threads_x = shape.grid()[0] * shape.block()[0];
    let others = shape.blocks() / shape.grid()[0];
    for bx in [32, 1] {
        let blocks = (threads_x / bx) * others;
        if bx >= shape.block()[0]
            || threads_x % bx != 0
            || blocks > MAX_BLOCKS
            || blocks.saturating_mul(stmts) > MAX_BLOCK_STMTS
        {
            continue;
        }
        let mut s = spec.clone();
        s.block = vec![bx, shape.block()[1], shape.block()[2]];
        s.grid = vec![threads_x / bx, shape.grid()[1], shape.grid()[2]];
        out.push(s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::parse::parse_source;
    use crate::ir::lower::lower_kernel;
    use crate::source::SourceFile;

    /// The race search stops at its work limit, not at the clock: a
    /// limit the first launch exceeds finds nothing, the same way on
    /// every run, with all the time in the world; the default limit finds
    /// the race (a thread reads its right neighbour's element, which the
    /// next block writes).
    #[test]
    fn the_race_search_stops_at_its_work_limit() {
        let src = "__global__ void k(float *in, float *out) { int i = blockIdx.x * blockDim.x + threadIdx.x; out[i] = in[i] + out[i + 1]; }";
        let f = parse_source(SourceFile::new("t.cu", src));
        let k = lower_kernel(&f, "k").unwrap();
        let params = "[kernel.k]\ngrid=[4]\nblock=[64]\n[kernel.k.arrays.in]\nlen=257\ninit=\"random\"\n[kernel.k.arrays.out]\nlen=257\ninit=\"random\"\n";
        let spec = &crate::sim::params::ParamFile::from_toml(params)
            .unwrap()
            .kernel["k"];
        let far = Instant::now() + Duration::from_secs(3600);
        let work = |n| Arc::new(Work::new(n));
        let Ok(bases) = launches(&k, Some(spec), None, &work(STEPS), far) else {
            panic!("a parameter file's launches are not run");
        };
        let spent = work(1);
        let tiny = search(&k, &bases, false, &spent, far);
        assert_eq!(tiny, Races::NoneFound(0));
        assert_eq!(spent.stopped(), [SEARCH]);
        assert_eq!(search(&k, &bases, false, &work(1), far), tiny);
        assert!(matches!(
            search(&k, &bases, false, &work(STEPS), far),
            Races::Found(..)
        ));
    }
}
