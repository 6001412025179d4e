//! Thread-index remapping for coalescing. A kernel whose row
//! index comes from `threadIdx.x` (`a[row * n + col]`, `row = blockIdx.x *
//! blockDim.x + threadIdx.x`) has the lanes of a warp one row apart; after
//! the remapping the lanes vary the column, and touch consecutive elements.
//! Two forms:
//!
//! - **Square blocks** (`blockDim.x == blockDim.y`): `threadIdx.x` and
//!   `threadIdx.y` trade places. Each block still holds the same logical
//!   threads (the block is square, so the tile of indices a block covers
//!   is unchanged, and neither the launch nor `blockIdx` changes).
//! - **Other 2-D blocks**, when the file launches the kernel: x and y of
//!   `threadIdx`, `blockIdx`, `blockDim` and `gridDim` trade places in the
//!   kernel, and x and y of the grid and block at every launch in the host
//!   code ([`copper::cuda::relaunch`]): the logical thread (block (i, j),
//!   thread (u, v)) of the original is the thread (block (j, i), thread
//!   (v, u)) of the rewrite. When the launch cannot be edited safely
//!   (launched from another file, a block computed by a function, a `dim3`
//!   shared with another kernel's launch), the rewrite is refused with
//!   that reason.
//!
//! (A 1-D kernel with a computed row/column split, `row = idx / n; col =
//! idx % n`, has its split exchanged instead: [`crate::remap_split`].)
//!
//! In each form only which hardware thread runs which logical thread
//! changes, that is, which logical threads share a warp. Preconditions, so
//! that nothing observes warps: the kernel has no `__shared__` memory, no
//! barrier, no warp-level intrinsic (shuffles, votes, `__syncwarp`), no
//! atomic, and calls no device function (its own uses of the indices would
//! not be swapped); the thread and block indices are used only through
//! `.x`, `.y` or `.z`.
//!
//! Data races could make results depend on the mapping; the differential
//! check simulates with race detection, on the exchanged launch for the
//! second form. The rewrite is proposed only when it lowers the worst-case
//! sectors of some global access, computed on the candidate's own analysis
//! (at the exchanged block and grid for the second form); the description
//! names those accesses.

use copper::absint::deps::Coef;
use copper::absint::divmod::WarpIndex;
use copper::bound::{prepare, Config};
use copper::cuda::ast::{Expr, ExprKind, Function, Space, StmtKind};
use copper::cuda::relaunch::{self, Relaunch, Reshape};
use copper::ir::sync::{sync_kind, Sync};
use copper::ir::Kernel;

use crate::ast_util;
use crate::check::materialize;
use crate::{Candidate, Context, Proposals, Refusal, Transform};

/// Remapping threads so that consecutive lanes touch consecutive elements.
pub struct RemapThreads;

/// The built-in index variables whose x and y a 2-D remapping exchanges.
const INDICES: [&str; 4] = ["threadIdx", "blockIdx", "blockDim", "gridDim"];

/// One way to remap, before its gain is measured.
struct Remap {
    function: Function,
    /// The host code's edits, when the launch changes with the kernel.
    relaunch: Option<Relaunch>,
    /// What was done, for the description.
    what: String,
}

impl Transform for RemapThreads {
    fn name(&self) -> &'static str {
        "thread remapping"
    }

    fn propose(&self, cx: &Context) -> Proposals {
        if !ast_util::reads_thread_xy(cx.function) {
            return Proposals::default();
        }
        let made = remapped(cx);
        Proposals::one(cx.function.meta.span, "threads keep their mapping", made)
    }
}

/// The kernel of `cx` with x and y exchanged, or why not.
fn remapped(cx: &Context) -> Result<Candidate, Refusal> {
    observes_warps(cx)?;
    let o = remap_2d(cx)?;
    let reshape = o.relaunch.as_ref().map(|r| r.reshape);
    let config = cx.analysis.config().reshaped(reshape);
    let gains = gains_of(cx, &o.function, config)?;
    if gains.is_empty() {
        return Err(
            "exchanging x and y would not make any global access touch fewer sectors".into(),
        );
    }
    Ok(Candidate {
        fixes_block_size: true,
        relaunch: o.relaunch,
        ..Candidate::new(
            RemapThreads.name(),
            o.function,
            format!("{}; {}", o.what, gains.join("; ")),
        )
    })
}

/// The 2-D remapping for the kernel's block: `threadIdx` alone in a
/// square block, every index and the launch otherwise.
fn remap_2d(cx: &Context) -> Result<Remap, Refusal> {
    let f = cx.function;
    let block = cx.fixed_block("")?;
    match block.to_array() {
        [x, y, 1] if x == y && x > 1 => Ok(Remap {
            function: swap_xy(f, &["threadIdx"]),
            relaunch: None,
            what: "swapped `threadIdx.x` and `threadIdx.y` (square blocks: each block keeps its threads)".into(),
        }),
        [x, y, 1] if x > 1 && y > 1 => {
            let edits = relaunch::relaunch(cx.host, &f.name, Reshape::SwapXy).map_err(|why| {
                format!("the block ({x}×{y}) is not square, so the launch must change with the kernel, and {why}")
            })?;
            let lines = launch_lines(cx, &f.name);
            Ok(Remap {
                function: swap_xy(f, &INDICES),
                relaunch: Some(edits),
                what: format!(
                    "swapped x and y of `threadIdx`, `blockIdx`, `blockDim` and `gridDim`, and of the grid and block of the launch at line {} (block {x}×{y} → {y}×{x})",
                    lines
                ),
            })
        }
        _ => Err(Refusal::BlockShape {
            block,
            wanted: "2-D and flat",
        }),
    }
}

/// The per-array sector changes, for people, from the kernel of `cx` to
/// `function` analyzed under `config`; `Err` when `function` cannot be
/// written into the file.
pub(crate) fn gains_of(
    cx: &Context,
    function: &Function,
    config: Config,
) -> Result<Vec<String>, Refusal> {
    let before = sectors(cx.analysis, cx.kernel);
    let (_, kernel) = materialize(cx.file, function).map_err(|e| e.to_string())?;
    let after = sectors(&prepare(&kernel, config), &kernel);
    Ok(gains(&before, &after))
}

/// The per-array sector changes from `before` to `after`, for people.
fn gains(before: &[Accesses], after: &[Accesses]) -> Vec<String> {
    after
        .iter()
        .filter_map(|a| {
            let old = before.iter().find(|b| b.what == a.what)?.sectors;
            let (verb, name) = &a.what;
            (a.sectors < old).then(|| {
                if a.consecutive {
                    format!(
                        "lanes now {verb} consecutive `{name}` elements: {old} → {} sectors per warp",
                        a.sectors
                    )
                } else {
                    format!("{verb}s of `{name}`: {old} → {} sectors per warp", a.sectors)
                }
            })
        })
        .collect()
}

/// Why the kernel may see which threads share a warp, if it may.
pub(crate) fn observes_warps(cx: &Context) -> Result<(), Refusal> {
    let f = cx.function;
    let mut why = None;
    for s in &f.body {
        ast_util::visit_stmts(s, &mut |x| {
            if let StmtKind::Decl(ds) = &x.kind {
                if ds.iter().any(|d| d.space == Space::Shared) {
                    why.get_or_insert("it uses `__shared__` memory".to_string());
                }
            }
        });
        ast_util::visit_stmt_exprs(s, &mut |e| {
            let ExprKind::Call(name, _) = &e.kind else {
                return;
            };
            let warp_level = [
                "__shfl",
                "__ballot",
                "__any",
                "__all",
                "__match",
                "__activemask",
                "__reduce",
            ]
            .iter()
            .any(|p| name.starts_with(p))
                || sync_kind(name) == Some(Sync::Warp);
            if matches!(sync_kind(name), Some(Sync::Block | Sync::BlockPredicate)) {
                why.get_or_insert("it has a barrier".to_string());
            } else if warp_level {
                why.get_or_insert(format!("it calls `{name}`, which depends on the warps"));
            } else if name.starts_with("atomic") {
                why.get_or_insert(format!(
                    "it calls `{name}` (the order of atomics would change)"
                ));
            } else if cx.file.function(name).is_some() {
                why.get_or_insert(format!("it calls device function `{name}`"));
            }
        });
        // An index other than through a field.
        ast_util::visit_stmt_roots(s, &mut |root| {
            let fields = count(root, &|e| ast_util::index_field(e, &INDICES).is_some());
            let all = count(
                root,
                &|e| matches!(&e.kind, ExprKind::Ident(n) if INDICES.contains(&n.as_str())),
            );
            if all != fields {
                why.get_or_insert("it uses a thread or block index as a whole".to_string());
            }
        });
    }
    why.map_or(Ok(()), |why| Err(Refusal::Other(why)))
}

/// How many subexpressions of `e` satisfy `p`.
fn count(e: &Expr, p: &dyn Fn(&Expr) -> bool) -> usize {
    let mut n = 0;
    ast_util::visit_expr(e, &mut |x| n += p(x) as usize);
    n
}

/// The kernel with x and y of the built-in variables `indices` exchanged.
fn swap_xy(f: &Function, indices: &[&str]) -> Function {
    let mut g = f.clone();
    for s in &mut g.body {
        ast_util::visit_stmt_roots_mut(s, &mut |e| ast_util::swap_index_xy(e, indices));
    }
    g
}

/// The global accesses of one kind to one array, and what a warp's
/// request costs at worst.
struct Accesses {
    /// ("read", "a") or ("write", "a").
    what: (&'static str, String),
    /// Worst-case sectors per warp request, over the sites.
    sectors: u64,
    /// Whether at every site consecutive lanes (along `threadIdx.x`) touch
    /// consecutive elements.
    consecutive: bool,
}

/// The global accesses of `kernel`, by kind and array, with their
/// worst-case sectors per warp from the analysis `prep` of `kernel`.
fn sectors(prep: &copper::bound::Prepared, kernel: &Kernel) -> Vec<Accesses> {
    let mut out: Vec<Accesses> = Vec::new();
    for (i, site) in kernel.sites.iter().enumerate() {
        let array = &kernel.arrays[site.array];
        if !array.is_global() || site.span.is_synthetic() {
            continue;
        }
        let dep = match prep.index_split(i) {
            Some(WarpIndex::Exact(d)) => d,
            _ => prep.index_dep(i),
        };
        let t = prep.memory_bound(i).unwrap_or(u64::MAX);
        let consecutive = dep
            .affine_parts()
            .is_some_and(|(k, _)| k[0] == Coef::Known(1));
        let what = (
            if site.is_write { "write" } else { "read" },
            array.name.clone(),
        );
        match out.iter_mut().find(|a| a.what == what) {
            Some(a) => {
                a.sectors = a.sectors.max(t);
                a.consecutive &= consecutive;
            }
            None => out.push(Accesses {
                what,
                sectors: t,
                consecutive,
            }),
        }
    }
    out
}

/// The rewrite before and after, and the kernels it leaves alone with the
/// exact reason ([`crate::fixture`]).
/// The lines of the file's launches of `kernel` (`12, 30`), for a
/// description of the launches a rewrite edits.
pub(crate) fn launch_lines(cx: &Context, kernel: &str) -> String {
    let lines: Vec<String> = cx
        .host
        .launches
        .iter()
        .filter(|l| l.kernel == kernel)
        .map(|l| l.line.to_string())
        .collect();
    lines.join(", ")
}

#[cfg(test)]
mod tests {
    use super::RemapThreads;
    use crate::fixture::{check, check_not_applicable};

    #[test]
    fn a_warp_walking_a_column_walks_a_row_after_the_swap() {
        let desc = check(
            &RemapThreads,
            [16, 16, 1],
            r#"__global__ void scale2d(const float *a, float *out, int n) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < n && col < n) {
        out[row * n + col] = 2.0f * a[row * n + col];
    }
}
"#,
            r#"__global__ void scale2d(const float *a, float *out, int n) {
    int row = blockIdx.x * blockDim.x + threadIdx.y;
    int col = blockIdx.y * blockDim.y + threadIdx.x;
    if (row < n && col < n) {
        out[row * n + col] = 2.0f * a[row * n + col];
    }
}
"#,
        );
        assert_eq!(
        desc,
        "swapped `threadIdx.x` and `threadIdx.y` (square blocks: each block keeps its threads); lanes now read consecutive `a` elements: 32 → 6 sectors per warp; lanes now write consecutive `out` elements: 32 → 6 sectors per warp"
    );
    }

    #[test]
    fn unsigned_indices_over_a_macro_width_are_swapped() {
        let desc = check(
            &RemapThreads,
            [8, 8, 1],
            r#"#define WIDTH 40
__global__ void add_planes(const int *__restrict__ x, const int *__restrict__ y, int *__restrict__ z,
                           unsigned int height) {
    unsigned int r = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int c = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < height && c < WIDTH) {
        z[r * WIDTH + c] = x[r * WIDTH + c] + y[r * WIDTH + c];
    }
}
"#,
            r#"#define WIDTH 40
__global__ void add_planes(const int *__restrict__ x, const int *__restrict__ y, int *__restrict__ z,
                           unsigned int height) {
    unsigned int r = blockIdx.x * blockDim.x + threadIdx.y;
    unsigned int c = blockIdx.y * blockDim.y + threadIdx.x;
    if (r < height && c < WIDTH) {
        z[r * WIDTH + c] = x[r * WIDTH + c] + y[r * WIDTH + c];
    }
}
"#,
        );
        assert_eq!(
        desc,
        "swapped `threadIdx.x` and `threadIdx.y` (square blocks: each block keeps its threads); lanes now read consecutive `x` elements: 8 → 4 sectors per warp; lanes now read consecutive `y` elements: 8 → 4 sectors per warp; lanes now write consecutive `z` elements: 8 → 4 sectors per warp"
    );
    }

    #[test]
    fn atomics_keep_the_mapping() {
        check_not_applicable(
            &RemapThreads,
            [16, 16, 1],
            r#"__global__ void count_pos(const float *a, int *count, int n) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < n && col < n && a[row * n + col] > 0.0f) {
        atomicAdd(count, 1);
    }
}
"#,
            "threads keep their mapping: it calls `atomicAdd` (the order of atomics would change)",
        );
    }

    #[test]
    fn a_three_dimensional_block_keeps_the_mapping() {
        check_not_applicable(
            &RemapThreads,
            [8, 8, 2],
            r#"__global__ void scale3d(const float *a, float *out, int n) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < n && col < n) {
        out[(threadIdx.z * n + row) * n + col] = 2.0f * a[(threadIdx.z * n + row) * n + col];
    }
}
"#,
            "threads keep their mapping: the block (8×8×2) is not 2-D and flat",
        );
    }
}
