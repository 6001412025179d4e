//! Thread-index remapping for coalescing (issue 20): in a kernel launched
//! with square blocks (`blockDim.x == blockDim.y`), `threadIdx.x` and
//! `threadIdx.y` trade places. A kernel whose row index comes from
//! `threadIdx.x` (`a[row * n + col]`, `row = blockIdx.x * blockDim.x +
//! threadIdx.x`) has the lanes of a warp one row apart; after the swap the
//! lanes vary the column, and read consecutive elements.
//!
//! Correct because each block still holds the same logical threads (the
//! block is square, so the tile of indices a block covers is unchanged,
//! and neither the launch nor `blockIdx` changes): only which hardware
//! thread runs which logical thread changes, that is, which logical
//! threads share a warp. Preconditions, so that nothing observes warps:
//! - the block is known, 2-D and square, with `blockDim.z == 1`;
//! - the kernel has no `__shared__` memory, no barrier, no warp-level
//!   intrinsic (shuffles, votes, `__syncwarp`), no atomic, and calls no
//!   device function (its own uses of `threadIdx` would not be swapped);
//! - `threadIdx` is used only as `threadIdx.x`, `.y` or `.z`.
//!
//! Data races could make results depend on the mapping; the differential
//! check simulates with race detection. The rewrite is proposed only when
//! it lowers the worst-case sectors of some global access, computed on the
//! candidate's own analysis; the description names those accesses.

use copper::absint::deps::Coef;
use copper::absint::memory::transactions;
use copper::bound::{prepare, Config};
use copper::cuda::ast::{Expr, ExprKind, Function, Space, StmtKind};
use copper::ir::sync::{sync_kind, Sync};
use copper::ir::Kernel;

use crate::ast_util;
use crate::check::materialize;
use crate::{Candidate, Context, Proposals, Skip, Transform};

/// Swapping `threadIdx.x` and `threadIdx.y` in square blocks.
pub struct RemapThreads;

impl Transform for RemapThreads {
    fn name(&self) -> &'static str {
        "thread remapping"
    }

    fn propose(&self, cx: &Context) -> Proposals {
        let mut out = Proposals::default();
        let f = cx.function;
        if !reads_thread_xy(f) {
            return out;
        }
        let skip = |why: String| Skip {
            span: f.meta.span,
            reason: format!("`threadIdx.x` and `threadIdx.y` keep their roles: {why}"),
        };
        if let Err(why) = square_block(cx.block).and_then(|()| observes_warps(cx)) {
            out.skipped.push(skip(why));
            return out;
        }
        let swapped = swap_xy(f);
        let config = Config {
            block: cx.block,
            ..cx.analysis.config()
        };
        let after = match materialize(cx.file, &swapped) {
            Ok((_, kernel)) => sectors(&prepare(&kernel, config), &kernel, config),
            Err(why) => {
                out.skipped.push(skip(why));
                return out;
            }
        };
        let before = sectors(cx.analysis, cx.kernel, config);
        let gains: Vec<String> = after
            .iter()
            .filter_map(|a| {
                let old = before.iter().find(|b| b.what == a.what)?.sectors;
                let (verb, name) = &a.what;
                (a.sectors < old).then(|| {
                    if a.consecutive {
                        format!("lanes now {verb} consecutive `{name}` elements: {old} → {} sectors per warp", a.sectors)
                    } else {
                        format!("{verb}s of `{name}`: {old} → {} sectors per warp", a.sectors)
                    }
                })
            })
            .collect();
        if gains.is_empty() {
            out.skipped.push(skip(
                "swapping them would not make any global access touch fewer sectors".into(),
            ));
            return out;
        }
        out.candidates.push(Candidate {
            function: swapped,
            description: format!(
                "swapped `threadIdx.x` and `threadIdx.y` (square blocks: each block keeps its threads); {}",
                gains.join("; ")
            ),
            transform: self.name(),
            fixes_block_size: true,
        });
        out
    }
}

/// Whether the kernel reads both `threadIdx.x` and `threadIdx.y` (else
/// there are no roles to swap).
fn reads_thread_xy(f: &Function) -> bool {
    let (mut x, mut y) = (false, false);
    for s in &f.body {
        ast_util::visit_stmt_exprs(s, &mut |e| match thread_field(e) {
            Some("x") => x = true,
            Some("y") => y = true,
            _ => {}
        });
    }
    x && y
}

/// `Some("x")` for `threadIdx.x`.
fn thread_field(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Member {
            base,
            field,
            arrow: false,
        } if matches!(&base.kind, ExprKind::Ident(n) if n == "threadIdx") => Some(field),
        _ => None,
    }
}

/// Whether the block is known, square and flat.
fn square_block(block: Option<[u64; 3]>) -> Result<(), String> {
    match block {
        None => Err("the block size is not known (give `--block`, a launch, or a parameter file)".into()),
        Some([x, y, 1]) if x == y && x > 1 => Ok(()),
        Some([x, y, z]) => Err(format!(
            "the block ({x}×{y}×{z}) is not square and flat, so swapping would change which threads a block holds"
        )),
    }
}

/// Why the kernel may see which threads share a warp, if it may.
fn observes_warps(cx: &Context) -> Result<(), String> {
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
                "__syncwarp",
                "__activemask",
                "__reduce",
            ]
            .iter()
            .any(|p| name.starts_with(p));
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
        // `threadIdx` other than through a field.
        ast_util::visit_stmt_roots(s, &mut |root| {
            let fields = count(root, &|e| thread_field(e).is_some());
            let all = count(
                root,
                &|e| matches!(&e.kind, ExprKind::Ident(n) if n == "threadIdx"),
            );
            if all != fields {
                why.get_or_insert("it uses `threadIdx` as a whole".to_string());
            }
        });
    }
    why.map_or(Ok(()), Err)
}

/// How many subexpressions of `e` satisfy `p`.
fn count(e: &Expr, p: &dyn Fn(&Expr) -> bool) -> usize {
    let mut n = 0;
    ast_util::visit_expr(e, &mut |x| n += p(x) as usize);
    n
}

/// The kernel with `threadIdx.x` and `threadIdx.y` exchanged.
fn swap_xy(f: &Function) -> Function {
    let mut g = f.clone();
    for s in &mut g.body {
        ast_util::visit_stmt_roots_mut(s, &mut swap_in);
    }
    g
}

fn swap_in(e: &mut Expr) {
    if let ExprKind::Member {
        base,
        field,
        arrow: false,
    } = &mut e.kind
    {
        if matches!(&base.kind, ExprKind::Ident(n) if n == "threadIdx") {
            match field.as_str() {
                "x" => *field = "y".into(),
                "y" => *field = "x".into(),
                _ => {}
            }
            return;
        }
    }
    for c in ast_util::children_mut(e) {
        swap_in(c);
    }
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

/// The global accesses of `kernel`, by kind and array.
fn sectors(prep: &copper::bound::Prepared, kernel: &Kernel, config: Config) -> Vec<Accesses> {
    let mut out: Vec<Accesses> = Vec::new();
    for (i, site) in kernel.sites.iter().enumerate() {
        let array = &kernel.arrays[site.array];
        if !array.is_global() || site.span.is_synthetic() {
            continue;
        }
        let dep = prep.index_dep(i);
        let t = transactions(dep, array.footprint(site), &config.hw, config.block);
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
