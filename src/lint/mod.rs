//! `copper lint`: findings about a kernel's
//! performance, from the same analysis facts the cost bounds use.
//!
//! - [`coalescing`]: global accesses a warp may serve with more sectors
//!   than consecutive aligned elements would need (GPUDrano).
//! - [`banks`]: shared accesses that may be bank conflicts, with their
//!   degree bounds; [`witness`] finds inputs that reach them, or proves a
//!   degree impossible with the MILP of [`milp`] (Horga et al.).
//! - [`divergence`]: conditions that may differ between the lanes of a
//!   warp, with their cost under `wsteps`.
//! - [`overflow`]: 32-bit index arithmetic that can overflow for the
//!   sizes given (launch shape, parameter file).
//! - [`barriers`]: `__syncthreads()` that only part of a block may reach
//!   (`divergent-barrier`, an error).
//! - [`redundant`]: loops every thread of a block runs identically
//!   (`redundant-work`), by the dependence analysis across the block.
//! - [`lockstep`]: code that relies on the lanes of a warp running in
//!   lock step (`warp-synchronous`, an error), found by simulating each
//!   warp as two halves that run one after the other.
//! - [`races`]: data races found by simulating the kernel (`data-race`,
//!   an error): two threads writing different values to one element, or a
//!   block accessing an element another block writes.
//! - [`block_size`]: whether a kernel's results are independent of its
//!   block size (BSI), once the race search found no race;
//!   [`atomics`]: the atomics whose outcome depends on the thread order.

pub mod atomics;
pub mod banks;
pub mod barriers;
pub mod block_size;
pub mod coalescing;
pub mod divergence;
pub mod explain;
pub mod index;
pub mod lanes;
pub mod lockstep;
pub mod milp;
pub mod overflow;
pub mod races;
pub mod redundant;
pub mod suppress;
pub mod witness;

use std::sync::Arc;
use std::time::Instant;

use crate::bound::{prepare, Config, Prepared};
use crate::cost::Hardware;
use crate::diag::Severity;
use crate::ir::Kernel;
use crate::launch::Dims;
use crate::sim::params::LaunchSpec;
use crate::sim::work::Work;
use crate::source::Span;
use serde::Serialize;

/// A lint code that does not exist; the message lists those that do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown lint code `{code}` (codes: {})", Code::ALL.map(Code::name).join(", "))]
pub struct UnknownCode {
    /// The code as written.
    pub code: String,
}

/// What a finding is about; each can be turned off (`--allow CODE`,
/// `[lint] disable = [...]` in `copper.toml`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Code {
    /// A global access whose lanes are spread over more sectors than
    /// consecutive elements need (a stride, a non-linear index).
    UncoalescedGlobal,
    /// A global access that consecutive lanes make contiguous, but whose
    /// start may not be aligned to a sector.
    MisalignedGlobal,
    /// A shared access that may be a bank conflict.
    BankConflict,
    /// A condition that may differ between the lanes of a warp.
    DivergentBranch,
    /// A kernel whose results may change with its block size.
    BlockSizeDependent,
    /// 32-bit index arithmetic that can overflow for the sizes given.
    IndexOverflow,
    /// Threads whose results depend on the order they run in.
    DataRace,
    /// A barrier that only part of a block may reach.
    DivergentBarrier,
    /// Code that relies on the lanes of a warp running in lock step.
    WarpSynchronous,
    /// A loop every thread of a block runs identically.
    RedundantWork,
}

impl Code {
    /// Every code.
    pub const ALL: [Code; 10] = [
        Code::UncoalescedGlobal,
        Code::MisalignedGlobal,
        Code::BankConflict,
        Code::DivergentBranch,
        Code::BlockSizeDependent,
        Code::IndexOverflow,
        Code::DataRace,
        Code::DivergentBarrier,
        Code::WarpSynchronous,
        Code::RedundantWork,
    ];

    /// The code as written (`uncoalesced-global`, …).
    pub fn name(self) -> &'static str {
        match self {
            Code::UncoalescedGlobal => "uncoalesced-global",
            Code::MisalignedGlobal => "misaligned-global",
            Code::BankConflict => "bank-conflict",
            Code::DivergentBranch => "divergent-branch",
            Code::BlockSizeDependent => "block-size-dependent",
            Code::IndexOverflow => "index-overflow",
            Code::DataRace => "data-race",
            Code::DivergentBarrier => "divergent-barrier",
            Code::WarpSynchronous => "warp-synchronous",
            Code::RedundantWork => "redundant-work",
        }
    }

    /// How serious it is: a data race, a divergent barrier and reliance
    /// on lock step are errors (the results are not determined), the rest are warnings about
    /// performance.
    pub fn severity(self) -> Severity {
        match self {
            Code::DataRace | Code::DivergentBarrier | Code::WarpSynchronous => Severity::Error,
            _ => Severity::Warning,
        }
    }

    /// The code written `s`; the error lists the codes.
    pub fn parse(s: &str) -> Result<Code, UnknownCode> {
        Code::ALL
            .into_iter()
            .find(|c| c.name() == s.trim())
            .ok_or_else(|| UnknownCode {
                code: s.to_string(),
            })
    }

    /// One sentence on what the code means.
    pub fn describe(self) -> &'static str {
        match self {
            Code::UncoalescedGlobal => "A warp's global access may touch more 32-byte sectors than consecutive elements need (a thread stride too large, or an index not linear in threadIdx).",
            Code::MisalignedGlobal => "A warp's global access is contiguous but may start off a sector boundary, costing one sector more.",
            Code::BankConflict => "A shared-memory access may put several words of one bank in one warp request (an n-way bank conflict).",
            Code::DivergentBranch => "A condition may differ between the lanes of a warp: the warp runs both sides one after the other.",
            Code::BlockSizeDependent => "The kernel's results may change when its block size changes.",
            Code::IndexOverflow => "32-bit index arithmetic can overflow (or wrap) for the launch and sizes given: compute the index in 64 bits.",
            Code::DivergentBarrier => "A `__syncthreads()` inside a branch or loop that the threads of one block may take differently: CUDA requires every thread of the block to reach it, or none.",
            Code::WarpSynchronous => "Lanes of one warp exchange values through memory with no barrier or `__syncwarp()` between the write and the read: the results change when the halves of a warp run one after the other, as Volta and later GPUs may run them.",
            Code::RedundantWork => "A loop every thread of a block runs identically (same trip count, same addresses, same values): the block does the same work once per thread where once per block would do.",
            Code::DataRace => "Simulation found threads whose results depend on the order they run in: two threads writing different values to one element, or a block accessing an element another block writes.",
        }
    }
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// What it is about.
    pub code: Code,
    /// Where (the access, the `if` or loop, the builtin use).
    #[serde(skip)]
    pub span: Span,
    /// What is wrong, in one sentence.
    pub message: String,
    /// Why, in one line.
    pub why: String,
    /// A suggested fix, when one is known.
    pub help: Option<String>,
    /// The quantity: worst-case sectors, conflict degree, extra `wsteps`.
    pub worst: Option<f64>,
    /// The access site, for accesses (the worst one when several inlined
    /// calls reach this place).
    #[serde(skip)]
    pub site: Option<usize>,
    /// The kernel's calls through which an access inside a device function
    /// is reached, in source order (empty for the kernel's own code).
    #[serde(skip)]
    pub calls: Vec<Span>,
}

/// The block-size verdict of a kernel (BSI).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict", content = "reason")]
pub enum BlockSize {
    /// Its results do not depend on the block size, assuming it has no
    /// data race.
    Independent {
        /// Launches simulated without finding a race (`None`: not
        /// searched).
        race_free_launches: Option<usize>,
    },
    /// They may: why.
    Depends(String),
    /// It races, so its results depend on the schedule: the simulator's
    /// message (the finding is at the racing access).
    Races(String),
    /// Not checked: why (barriers, shared memory).
    NotChecked(String),
}

/// The lint of one kernel.
pub struct KernelLint {
    /// Findings, in source order.
    pub findings: Vec<Finding>,
    /// Block-size verdict.
    pub block_size: BlockSize,
    /// The analysis the findings came from.
    pub prepared: Prepared,
    /// The checks the kernel's simulation work limit stopped, in order
    /// ([`Work::note_stop`]); what they would have found may be missing
    /// ([`stop_note`]).
    pub stopped: Vec<String>,
    /// Whether the simulations reached their wall-clock safety net
    /// ([`races::WALL_CLOCK`]) first, which a faster machine may not.
    pub wall_clock: bool,
}

/// What the output says when the work limit `limit` stopped the checks
/// of a kernel's lint `lint` ([`KernelLint::stopped`]), or its wall-clock
/// safety net did; `None` when neither stopped any.
pub fn stop_note(lint: &KernelLint, limit: u64) -> Option<String> {
    if lint.wall_clock {
        return Some(format!("the lint's simulations stopped at their wall-clock safety net of {} s; results may be incomplete and differ on a faster machine", races::WALL_CLOCK.as_secs()));
    }
    let (last, first) = lint.stopped.split_last()?;
    let checks = match first {
        [] => last.clone(),
        _ => format!("{} and {last}", first.join(", ")),
    };
    Some(format!(
        "{checks} stopped at the lint's work limit of {limit} units (simulated instructions and array values, every simulation of the kernel together, the same on every machine); results may be incomplete"
    ))
}

/// Lints one kernel under `config` (its hardware, launch shape, each
/// `None` when unknown, and work limits and wall-clock safety net); `spec`, the parameter file's
/// launch, is simulated to look for races (synthesized launches around
/// the block without it), reshaped too before a block-size independent
/// verdict. The analysis and the race search stop at their work limits
/// ([`Config::max_steps`], [`races::STEPS`]), or at the safety net.
pub fn lint_kernel(kernel: &Kernel, config: Config, spec: Option<&LaunchSpec>) -> KernelLint {
    lint_kernel_within(kernel, config, spec, &Arc::new(Work::new(races::STEPS)))
}

/// [`lint_kernel`], its simulations charged to `work` (the kernel's
/// allowance, [`races::STEPS`] in the lint, which the caller may have
/// charged already: the block fit).
pub fn lint_kernel_within(
    kernel: &Kernel,
    config: Config,
    spec: Option<&LaunchSpec>,
    work: &Arc<Work>,
) -> KernelLint {
    let deadline = Instant::now() + config.budget;
    let (hw, block, grid) = (config.hw, config.block, config.grid);
    let prepared = prepare(kernel, config);
    let mut findings = shape_findings(kernel, &prepared, &hw, block, grid);
    findings.extend(overflow::findings(&prepared, spec));
    findings.extend(barriers::findings(&prepared));
    findings.extend(redundant::findings(&prepared, block));
    let (mut block_size, mut at) = block_size::verdict(kernel);
    let independent = matches!(block_size, BlockSize::Independent { .. });
    let race_deadline = (Instant::now() + races::WALL_CLOCK).min(deadline);
    let searched = races::launches(kernel, spec, block, work, race_deadline).map(|bases| {
        findings.extend(lockstep::findings(kernel, &bases, work, race_deadline));
        races::search(kernel, &bases, independent, work, race_deadline)
    });
    match searched.unwrap_or_else(|found| found) {
        races::Races::NoneFound(n) if independent => {
            block_size = BlockSize::Independent {
                race_free_launches: Some(n),
            };
        }
        races::Races::NoneFound(_) => {}
        races::Races::Found(span, message) => {
            findings.push(race_finding(kernel, span, &message));
            if independent {
                // The data-race finding says it at the same place.
                at = None;
                block_size = BlockSize::Races(message);
            }
        }
    }
    if let (Some(span), BlockSize::Depends(why)) = (at, &block_size) {
        findings.push(Finding {
            code: Code::BlockSizeDependent,
            span,
            message: format!(
                "the results of `{}` may depend on its block size",
                kernel.name
            ),
            why: why.clone(),
            help: Some("index with the global thread index blockIdx·blockDim + threadIdx only, or keep the block size fixed".into()),
            worst: None,
            site: None,
            calls: Vec::new(),
        });
    }
    KernelLint {
        findings: one_per_place(kernel, findings),
        block_size,
        prepared,
        stopped: work.stopped(),
        wall_clock: Instant::now() >= race_deadline,
    }
}

/// The findings that depend on the launch shape (`block`, `grid`: `None`
/// when unknown): coalescing, bank conflicts and divergence.
pub fn shape_findings(
    kernel: &Kernel,
    prepared: &Prepared,
    hw: &Hardware,
    block: Option<Dims>,
    grid: Option<Dims>,
) -> Vec<Finding> {
    let mut findings = coalescing::findings(kernel, prepared, hw, block, grid);
    findings.extend(banks::findings(kernel, prepared, hw, block));
    findings.extend(divergence::findings(kernel, prepared));
    findings
}

/// The `data-race` finding for the simulator's race `message` at `span`.
fn race_finding(kernel: &Kernel, span: Span, message: &str) -> Finding {
    let detail = message
        .strip_prefix("data race: ")
        .or_else(|| message.strip_prefix("data race between blocks: "))
        .unwrap_or(message);
    Finding {
        code: Code::DataRace,
        span,
        message: format!("data race in `{}`: {detail}", kernel.name),
        why: "the element's final value depends on the order the threads run in, which CUDA does not fix (copper found it by simulating the kernel; a write of the value already there is no race)".into(),
        help: Some("make each thread write only elements no other thread writes or reads in the same launch (write to a second array), reduce with atomics, or synchronize".into()),
        worst: None,
        site: None,
        calls: Vec::new(),
    }
}

/// `n` and the noun, plural unless `n` is 1 (`1 element`, `2 elements`).
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The findings sorted by place, one per code and source location: a
/// device function inlined at several calls yields one finding, the worst
/// of them, listing every call; the load and the store of one `+=` are one
/// finding about the "load and store".
fn one_per_place(kernel: &Kernel, mut findings: Vec<Finding>) -> Vec<Finding> {
    let key = |f: &Finding| (f.span.start, f.span.end, f.code);
    let write = |f: &Finding| f.site.map(|s| kernel.sites[s].is_write);
    findings.sort_by(|a, b| {
        key(a).cmp(&key(b)).then(
            b.worst
                .partial_cmp(&a.worst)
                .unwrap_or(std::cmp::Ordering::Equal),
        )
    });
    let mut out: Vec<Finding> = Vec::new();
    for f in findings {
        match out.last_mut() {
            Some(last) if key(last) == key(&f) => {
                if write(last).is_some() && write(&f).is_some() && write(last) != write(&f) {
                    last.message = both_ways(&last.message);
                }
                last.calls.extend(f.calls);
            }
            _ => out.push(f),
        }
    }
    for f in &mut out {
        f.calls.sort_by_key(|s| s.start);
        f.calls.dedup();
    }
    out
}

/// A message about a load or a store, about both (`load of `x`` and
/// `store to `x`` become `load and store of `x``).
fn both_ways(message: &str) -> String {
    for one in ["load of ", "store to "] {
        if let Some(i) = message.find(one) {
            return format!(
                "{}load and store of {}",
                &message[..i],
                &message[i + one.len()..]
            );
        }
    }
    message.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::parse::parse_source;
    use crate::ir::lower::lower_kernel;
    use crate::source::SourceFile;

    /// The default configuration with a launch shape.
    fn shaped(block: Option<Dims>, grid: Option<Dims>) -> Config {
        Config {
            block,
            grid,
            ..Config::default()
        }
    }

    /// The codes found in kernel `k` of `src` for a 256-thread block.
    fn lint(src: &str, k: &str) -> KernelLint {
        let parsed = parse_source(SourceFile::new("t.cu", src));
        let kernel = lower_kernel(&parsed, k).expect("kernel lowers");
        lint_kernel(
            &kernel,
            shaped(
                crate::launch::block([256, 1, 1]).ok(),
                crate::launch::grid([4, 1, 1]).ok(),
            ),
            None,
        )
    }

    /// The codes of the findings, block-size dependence left out.
    fn codes(l: &KernelLint) -> Vec<Code> {
        l.findings
            .iter()
            .map(|f| f.code)
            .filter(|c| *c != Code::BlockSizeDependent)
            .collect()
    }

    #[test]
    fn strided_global_access_is_uncoalesced() {
        let l = lint(
            "__global__ void k(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; a[i * n] = 0; }",
            "k",
        );
        assert_eq!(codes(&l), vec![Code::UncoalescedGlobal]);
        assert_eq!(l.findings[0].worst, Some(32.0));
        let ok = lint(
            "__global__ void k(float *a) { int i = blockIdx.x * blockDim.x + threadIdx.x; a[i] = 0; }",
            "k",
        );
        assert!(codes(&ok).is_empty());
    }

    /// The original code a rewrite keeps for other blocks (`else` of a
    /// guard on `blockDim`) is not reached at the launch linted: its
    /// uncoalesced access is no finding there, and is one for a block the
    /// guard sends to it.
    #[test]
    fn code_a_guard_on_the_known_block_rules_out_has_no_findings() {
        let src =
            "__global__ void k(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
            if (blockDim.x % 32 == 0) { a[i] = 0; } else { a[i * n] = 0; } }";
        assert!(codes(&lint(src, "k")).is_empty());
        let parsed = parse_source(SourceFile::new("t.cu", src));
        let kernel = lower_kernel(&parsed, "k").expect("kernel lowers");
        let odd = lint_kernel(
            &kernel,
            shaped(
                crate::launch::block([48, 1, 1]).ok(),
                crate::launch::grid([4, 1, 1]).ok(),
            ),
            None,
        );
        assert_eq!(codes(&odd), vec![Code::UncoalescedGlobal]);
        let negated = src.replace("blockDim.x % 32 == 0", "blockDim.x % 32 != 0");
        assert_eq!(codes(&lint(&negated, "k")), vec![Code::UncoalescedGlobal]);
    }

    #[test]
    fn a_warp_within_its_ideal_is_not_said_to_exceed_it() {
        // Gaussian elimination's a[Size*t + (yidx+t)] in 2×16 blocks: a
        // warp reads 16 consecutive elements (3 sectors at worst, fewer
        // than the 4 of 32 consecutive ones); only a subset of lanes can
        // straddle a sector.
        let src = "__global__ void fan(float *a, int Size, int t) {\n\
            int yidx = blockIdx.y * blockDim.y + threadIdx.y;\n\
            a[Size * t + (yidx + t)] = 1.0f; }";
        let parsed = parse_source(SourceFile::new("t.cu", src));
        let kernel = lower_kernel(&parsed, "fan").expect("kernel lowers");
        let l = lint_kernel(
            &kernel,
            shaped(
                crate::launch::block([2, 16, 1]).ok(),
                crate::launch::grid([4, 4, 1]).ok(),
            ),
            None,
        );
        let f = &l.findings[0];
        assert_eq!(f.worst, Some(3.0));
        assert!(!f.message.contains("where 4 would do"), "{}", f.message);
        assert!(
            f.message
                .contains("a whole warp needs at most 3 32-byte sectors"),
            "{}",
            f.message
        );
        // With the block unknown, lanes 1 apart in x share an element: the
        // reason says so, not "0 elements apart".
        let l = lint_kernel(&kernel, shaped(None, None), None);
        let f = &l.findings[0];
        assert!(!f.why.contains("0 elements"), "{}", f.why);
        assert!(
            f.why
                .contains("threads 1 apart in threadIdx.x access the same element"),
            "{}",
            f.why
        );
        assert!(
            f.why
                .contains("threads 1 apart in threadIdx.y are 1 element (4 bytes) apart"),
            "{}",
            f.why
        );
    }

    /// The lines of `src`'s kernel `k` with a `divergent-barrier` error.
    fn divergent_barriers(src: &str, k: &str) -> Vec<usize> {
        let parsed = parse_source(SourceFile::new("t.cu", src));
        lint(src, k)
            .findings
            .iter()
            .filter(|f| f.code == Code::DivergentBarrier)
            .map(|f| parsed.source.line_col(f.span.start).0)
            .collect()
    }

    #[test]
    fn barriers_only_part_of_a_block_reaches_are_errors() {
        let bad = [
            // Under a bounds test.
            "__global__ void k(float *a, int n) { __shared__ float s[256];\n\
             int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
             if (i < n) { s[threadIdx.x] = a[i];\n__syncthreads();\na[i] = s[0]; } }",
            // In a loop whose trip count depends on the thread.
            "__global__ void k(float *a, int n) { __shared__ float s[256];\n\
             for (int i = threadIdx.x; i < n; i += blockDim.x) { s[threadIdx.x] = a[i];\n\
             __syncthreads();\na[i] = s[0]; } }",
            // After a `continue` one thread takes.
            "__global__ void k(float *a, int n) { __shared__ float s[256];\n\
             for (int j = 0; j < n; j++) { if (threadIdx.x == j) continue;\n\
             s[threadIdx.x] = a[j];\n__syncthreads();\na[j] = s[0]; } }",
            // In a loop some threads leave by `break` (data-dependent).
            "__global__ void k(float *a, int n) {\n\
             for (int j = 0; j < n; j++) { if (a[threadIdx.x] > 0.0f) break;\n\
             \n__syncthreads(); } }",
            // One warp of the block: uniform in the warp, not in the block.
            "__global__ void k(float *a) {\n\
             if (threadIdx.x / 32 == 0) {\n\
             \n__syncthreads(); } a[threadIdx.x] = 0; }",
        ];
        for src in bad {
            let barrier = src.lines().position(|l| l.contains("__syncthreads"));
            let line = barrier.expect("a barrier") + 1;
            assert_eq!(divergent_barriers(src, "k"), vec![line], "{src}");
        }
        let good = [
            // A block-uniform loop with a divergent `if` beside the barrier.
            "__global__ void k(float *a, float *out) { __shared__ float s[256];\n\
             unsigned t = threadIdx.x; s[t] = a[blockIdx.x * blockDim.x + t]; __syncthreads();\n\
             for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }\n\
             if (t == 0) out[blockIdx.x] = s[0]; }",
            // Threads that returned are gone, not waiting.
            "__global__ void k(float *a, int n) { __shared__ float s[256];\n\
             int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n\
             s[threadIdx.x] = a[i]; __syncthreads(); a[i] = s[0]; }",
            // A condition on the block, the same for all its threads.
            "__global__ void k(float *a, int n) { __shared__ float s[256];\n\
             if (blockIdx.x * blockDim.x < n) { s[threadIdx.x] = a[threadIdx.x]; __syncthreads(); a[threadIdx.x] = s[0]; } }",
        ];
        for src in good {
            assert!(divergent_barriers(src, "k").is_empty(), "{src}");
        }
    }

    #[test]
    fn code_relying_on_lockstep_warps_is_an_error() {
        let head = "__global__ void k(const float *in, float *out) { __shared__ float s[256];\n\
            unsigned t = threadIdx.x; s[t] = in[blockIdx.x * blockDim.x + t]; __syncthreads();\n\
            for (unsigned d = 128; d > 32; d >>= 1) { if (t < d) s[t] += s[t + d]; __syncthreads(); }\n";
        let tail = "if (t == 0) out[blockIdx.x] = s[0]; }";
        let has = |body: &str| {
            let src = format!("{head}{body}{tail}");
            lint(&src, "k")
                .findings
                .iter()
                .any(|f| f.code == Code::WarpSynchronous)
        };
        // The last warp unrolled by hand, without barriers.
        assert!(has(
            "if (t < 32) { volatile float *v = s; v[t] += v[t + 32]; v[t] += v[t + 16];\n\
             v[t] += v[t + 8]; v[t] += v[t + 4]; v[t] += v[t + 2]; v[t] += v[t + 1]; }\n"
        ));
        // With a barrier after each step.
        assert!(!has(
            "for (unsigned d = 32; d > 0; d >>= 1) { if (t < d) s[t] += s[t + d]; __syncthreads(); }\n"
        ));
        // With `__syncwarp()`: warp-aware code is not split.
        assert!(!has(
            "if (t < 32) { float x = s[t] + s[t + 32]; __syncwarp(); s[t] = x; __syncwarp(); }\n"
        ));
    }

    #[test]
    fn one_finding_per_place() {
        let l = lint(
            "__device__ float get(const float *a, int i) { return a[i * 7]; }\n\
             __global__ void k(const float *a, float *o) { int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
             o[i] = get(a, i) + get(a, i + 1) + get(a, 2 * i); }",
            "k",
        );
        assert_eq!(codes(&l), vec![Code::UncoalescedGlobal]);
        assert_eq!(l.findings[0].calls.len(), 3);
        // The worst of the three (a[14·i]) is the one reported.
        assert_eq!(l.findings[0].worst, Some(32.0));
    }

    #[test]
    fn lane_by_lane_indices() {
        let codes_in = |src: &str, block: [u64; 3]| {
            let block = crate::launch::block(block).unwrap();
            let parsed = parse_source(SourceFile::new("t.cu", src));
            let kernel = lower_kernel(&parsed, "k").expect("kernel lowers");
            let l = lint_kernel(
                &kernel,
                shaped(Some(block), crate::launch::grid([2, 2, 1]).ok()),
                None,
            );
            l.findings
                .iter()
                .filter(|f| f.site.is_some())
                .map(|f| (f.code, f.worst))
                .collect::<Vec<_>>()
        };
        // A clamped neighbour reads 33 consecutive elements at most:
        // misaligned, never 32 sectors.
        let clamped = "__global__ void k(const float *in, float *out) {\n\
            int c = blockIdx.x * blockDim.x + threadIdx.x;\n\
            int w = c == 0 ? c : c - 1;\n\
            out[c] = in[w]; }";
        assert_eq!(
            codes_in(clamped, [32, 1, 1]),
            vec![(Code::MisalignedGlobal, Some(5.0))]
        );
        // One element per warp: the lanes share an address.
        let per_warp = "__global__ void k(int *count) {\n\
            int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
            count[i / 32] = 1; }";
        assert_eq!(codes_in(per_warp, [128, 1, 1]), vec![]);
        // A select between rows far apart stays uncoalesced.
        let rows = "__global__ void k(const float *in, float *out, int n) {\n\
            int c = blockIdx.x * blockDim.x + threadIdx.x;\n\
            int r = c == 0 ? c : c * 64;\n\
            out[c] = in[r]; }";
        assert!(codes_in(rows, [32, 1, 1]).contains(&(Code::UncoalescedGlobal, Some(32.0))));
    }

    #[test]
    fn one_thread_is_coalesced() {
        // Nor is `threadIdx.x == 0` a divergent branch worth a finding: it
        // splits one warp per block, and its empty side costs 1 step.
        let l = lint(
            "__global__ void k(float *a, int n) { if (threadIdx.x == 0) a[threadIdx.x * n] = 0; }",
            "k",
        );
        assert_eq!(codes(&l), vec![]);
    }

    #[test]
    fn bounds_guards_are_not_divergent_branches() {
        // Only the partial last warp diverges on these: no finding.
        for cond in [
            "i < n",
            "i >= 1 && i < n - 1",
            "!(i >= n)",
            "threadIdx.x < 16 || i > n",
        ] {
            let src = format!(
                "__global__ void k(float *a, float *b, int n) {{ int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                 if ({cond}) {{ a[i] = b[i] * 2.0f + 1.0f; }} else {{ a[i] = b[i] * 3.0f - 1.0f; }} }}"
            );
            assert!(
                !codes(&lint(&src, "k")).contains(&Code::DivergentBranch),
                "{cond}"
            );
        }
        // A grid-stride loop's test is a range test too.
        let l = lint(
            "__global__ void k(float *a, int n) { for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) a[i] = 0; }",
            "k",
        );
        assert!(!codes(&l).contains(&Code::DivergentBranch));
        // Lanes split by parity, both sides working: reported, with the
        // threshold in its explanation.
        let src = "__global__ void k(float *a, float *b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                   if (i % 2 == 0) { a[i] = b[i] * 2.0f + 1.0f; } else { a[i] = b[i] * 3.0f - 1.0f; } }";
        let l = lint(src, "k");
        let f = l
            .findings
            .iter()
            .find(|f| f.code == Code::DivergentBranch)
            .expect("a divergent branch");
        assert!(f.why.contains("at least 5 wsteps and 25%"), "{}", f.why);
        // The lane index splits every warp: no range test; with an empty
        // side it costs 1 step, so no finding either.
        let l = lint(
            "__global__ void k(float *a) { if ((threadIdx.x & 31) == 0) a[blockIdx.x] = 1.0f; }",
            "k",
        );
        assert!(!codes(&l).contains(&Code::DivergentBranch));
        // So is a lane-strided loop: lanes' trip counts differ by one.
        let l = lint(
            "__global__ void k(float *a, int cols) { int lane = threadIdx.x % 32; float s = 0; for (int c = lane; c < cols; c += 32) s += a[c]; a[blockIdx.x * blockDim.x + threadIdx.x] = s; }",
            "k",
        );
        assert!(!codes(&l).contains(&Code::DivergentBranch));
        // A triangular loop is not: lane t runs t rounds.
        let l = lint(
            "__global__ void k(float *a) { float s = 0; for (int j = 0; j < threadIdx.x; j++) s += 1.0f; a[blockIdx.x * blockDim.x + threadIdx.x] = s; }",
            "k",
        );
        assert!(codes(&l).contains(&Code::DivergentBranch));
        // A data-dependent loop is reported.
        let l = lint(
            "__global__ void k(float *a, const int *len) { int i = blockIdx.x * blockDim.x + threadIdx.x; float s = 0; for (int j = 0; j < len[i]; j++) s += 1.0f; a[i] = s; }",
            "k",
        );
        assert!(codes(&l).contains(&Code::DivergentBranch));
    }

    #[test]
    fn misaligned_advice_names_the_cause() {
        let l = lint(
            "__global__ void k(const float *in, float *out) { int c = blockIdx.x * blockDim.x + threadIdx.x; out[c] = in[c + 1]; }",
            "k",
        );
        let f = l
            .findings
            .iter()
            .find(|f| f.code == Code::MisalignedGlobal)
            .expect("a misaligned load");
        assert!(
            f.why
                .contains("starts 1 element past a 32-byte sector boundary"),
            "{}",
            f.why
        );
        let l = lint(
            "__global__ void k(const float *in, float *out, int s) { int c = blockIdx.x * blockDim.x + threadIdx.x; out[c] = in[c + s]; }",
            "k",
        );
        let f = l
            .findings
            .iter()
            .find(|f| f.code == Code::MisalignedGlobal)
            .expect("a misaligned load");
        assert!(f.why.contains("depends on a run-time value"), "{}", f.why);
    }

    #[test]
    fn a_load_and_a_store_at_one_place_are_one_finding() {
        let l = lint(
            "__global__ void k(float *b, int w) { int i = blockIdx.x * blockDim.x + threadIdx.x; b[i * w] += 1.0f; }",
            "k",
        );
        let f: Vec<&Finding> = l
            .findings
            .iter()
            .filter(|f| f.code == Code::UncoalescedGlobal)
            .collect();
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].message.contains("load and store of `b`"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn bank_conflicts_have_degrees() {
        let l = lint(
            "__global__ void k(float *a) { __shared__ float s[8192]; s[threadIdx.x * 32] = 1; __syncthreads(); a[threadIdx.x] = s[threadIdx.x]; }",
            "k",
        );
        assert_eq!(codes(&l), vec![Code::BankConflict]);
        assert_eq!(l.findings[0].worst, Some(32.0));
    }

    #[test]
    fn divergence_costs_the_cheaper_side_and_a_step() {
        let l = lint(
            "__global__ void k(int *a) { int i = threadIdx.x; if (i % 2 == 0) { i = i + 1; } else { i = i + 2; i = i * 3; } a[blockIdx.x * 256 + threadIdx.x] = i; }",
            "k",
        );
        assert_eq!(codes(&l), vec![Code::DivergentBranch]);
        let f = l.findings.iter().find(|f| f.code == Code::DivergentBranch);
        // then: i = i + 1 is 4 steps (var, const, op, write); 1 for the
        // divergence.
        assert_eq!(f.and_then(|f| f.worst), Some(5.0));
    }

    #[test]
    fn block_size_verdicts() {
        let indep = lint(
            "__global__ void k(int *a) { int bw = blockDim.x; int x = blockIdx.x * bw + threadIdx.x; a[x] = x * 2; }",
            "k",
        );
        // The synthesized launch of whole blocks, in blocks of 256, 32
        // and 1 thread.
        assert!(matches!(
            indep.block_size,
            BlockSize::Independent {
                race_free_launches: Some(n)
            } if n >= 3
        ));
        let dep = lint(
            "__global__ void k(int *a) { a[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x; }",
            "k",
        );
        assert!(matches!(dep.block_size, BlockSize::Depends(_)));
        assert_eq!(dep.findings.len(), 1);
        assert_eq!(dep.findings[0].code, Code::BlockSizeDependent);
        let synced = lint(
            "__global__ void k(int *a) { int g = blockIdx.x * blockDim.x + threadIdx.x; a[g] = 1; __syncthreads(); a[g] = a[g ^ 1]; }",
            "k",
        );
        assert!(matches!(synced.block_size, BlockSize::NotChecked(_)));
    }

    #[test]
    fn codes_parse() {
        for c in Code::ALL {
            assert_eq!(Code::parse(c.name()), Ok(c));
        }
        assert!(Code::parse("nonsense").is_err());
    }

    #[test]
    fn a_struct_field_conflict_is_advised_a_structure_of_arrays() {
        // An 8-byte struct: lanes read a field every second word (2-way).
        let src = "struct P { float x; int n; };\n\
                   __global__ void k(float *o) { __shared__ P s[256];\n\
                   s[threadIdx.x].x = o[threadIdx.x]; __syncthreads();\n\
                   o[threadIdx.x] = s[threadIdx.x].x; }";
        let l = lint(src, "k");
        let f = l
            .findings
            .iter()
            .find(|f| f.code == Code::BankConflict)
            .expect("a bank conflict");
        assert_eq!(f.worst, Some(2.0));
        let help = f.help.as_deref().unwrap_or("");
        assert!(
            help.contains("structure of arrays") && help.contains("8-byte"),
            "{help}"
        );
        assert!(!help.contains("rows"), "{help}");
    }
}
