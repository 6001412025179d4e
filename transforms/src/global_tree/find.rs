//! Recognition of a tree reduction in global memory: the sequential tree
//! loop [`crate::warp_shuffle::tree`] knows, on a pointer (a parameter, or
//! a local pointer to a block's slice of one) rather than a `__shared__`
//! array, each thread's element `a[X]` with `X` the thread's index plus an
//! offset every thread of the block computes alike.

use copper::cuda::ast::{BaseType, BinOp, Expr, ExprKind, Function, Init, Stmt, UnOp};

use copper::source::Span;

use crate::ast_util::{self, ident};
use crate::warp_shuffle::tree::{accumulation, guarded_halving, is_thread_x, name_of, Combine};
use crate::Refusal;

/// A global-memory tree reduction loop, recognized.
pub(super) struct GlobalTree {
    /// The pointer the loop reduces in (`p`, `in`).
    pub array: String,
    /// The thread's own element's index, as the loop writes it (`tid`,
    /// `i`, `blockIdx.x * blockDim.x + tid`).
    pub own: Expr,
    /// The thread's index in the guard (`tid < s`).
    pub tid: Expr,
    /// The stride variable.
    pub var: String,
    /// Where it is declared (its IR variable's span).
    pub var_span: Span,
    /// The loop's declaration of the stride.
    pub init: Stmt,
    /// The loop's condition.
    pub cond: Expr,
    /// The loop's step.
    pub step: Expr,
    /// The stride's start.
    pub start: Expr,
    /// How two partial results are combined.
    pub combine: Combine,
}

/// Recognizes `for (T s = start; s > 0; s >>= 1) { if (tid < s) a[X] ⊕= a[X + s]; __syncthreads(); }`
/// where `a` is a pointer and `X` is the thread's index (`threadIdx.x` or
/// a copy of it), possibly plus an offset alike in every thread of the
/// block, written inline or through a local initialized once.
pub(super) fn global_tree(f: &Function, s: &Stmt) -> Option<GlobalTree> {
    let g = guarded_halving(f, s, 0)?;
    let p = &g.parts;
    let var = p.decl.name.as_str();
    let ExprKind::Assign(_, target, _) = &p.update.kind else {
        return None;
    };
    let ExprKind::Index(base, own) = &target.kind else {
        return None;
    };
    let (array, combine) = accumulation(&p.update, own, &ident(var))?;
    if name_of(base) != Some(array.as_str()) || !own_index(f, own, var) {
        return None;
    }
    // Only pointers: `__shared__` arrays are the warp shuffle's, and a
    // local array lives in each thread.
    pointer_decl(f, &array)?;
    Some(GlobalTree {
        array,
        own: own.as_ref().clone(),
        tid: g.tid.clone(),
        var: var.to_string(),
        var_span: p.decl.meta.span,
        init: g.init.clone(),
        cond: p.cond.clone(),
        step: p.step.clone(),
        start: p.start.clone(),
        combine,
    })
}

/// Whether `x` is the thread's index plus an offset every thread of the
/// block computes alike (`tid`, `blockIdx.x * blockDim.x + tid`), written
/// inline or as a local initialized to it and never assigned again; the
/// stride `var` not in it.
fn own_index(f: &Function, x: &Expr, var: &str) -> bool {
    if is_thread_x(f, x) {
        return true;
    }
    let resolved = match name_of(x) {
        Some(n) => match fixed_local(f, n) {
            Some(init) => init,
            None => return false,
        },
        None => x,
    };
    let ExprKind::Binary(BinOp::Add, l, r) = &resolved.kind else {
        return false;
    };
    let names_var = |e: &Expr| {
        let mut found = false;
        ast_util::visit_expr(e, &mut |y| {
            found |= matches!(&y.kind, ExprKind::Ident(n) if n == var)
        });
        found
    };
    ((is_thread_x(f, r) && uniform(f, l)) || (is_thread_x(f, l) && uniform(f, r)))
        && !names_var(resolved)
}

/// The initializer of the local `name` when it is declared once, with an
/// initializer, and never assigned, incremented or its address taken.
fn fixed_local<'f>(f: &'f Function, name: &str) -> Option<&'f Expr> {
    let [d] = ast_util::declarations(f, name)[..] else {
        return None;
    };
    let Some(Init::Expr(init)) = &d.init else {
        return None;
    };
    let param = f.params.iter().any(|p| p.name == name);
    (!ast_util::assigned_names(&f.body).contains(name) && !param).then_some(init)
}

/// Whether `e` has the same value in every thread of a block, wherever
/// the kernel evaluates it: built from literals, `blockIdx`, `blockDim`,
/// `gridDim` and parameters the kernel never assigns, by arithmetic and
/// casts (no memory read, no call).
fn uniform(f: &Function, e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int { .. } => true,
        ExprKind::Ident(n) => f.params.iter().any(|p| p.name == *n) && fixed_param(f, n),
        ExprKind::Member {
            base, arrow: false, ..
        } => matches!(name_of(base), Some("blockIdx" | "blockDim" | "gridDim")),
        ExprKind::Binary(_, a, b) => uniform(f, a) && uniform(f, b),
        ExprKind::Cast(_, _, x) => uniform(f, x),
        _ => false,
    }
}

/// Whether the kernel never assigns the parameter `name` (nor takes its
/// address).
fn fixed_param(f: &Function, name: &str) -> bool {
    !ast_util::assigned_names(&f.body).contains(name)
}

/// The pointer `name`'s element type and whether it is `volatile` or
/// `const`: a pointer parameter, or a local pointer to a parameter's
/// elements at an offset alike in every thread of the block, never
/// assigned again (so every thread's `name[k]` is the same element).
fn pointer_decl(f: &Function, name: &str) -> Option<(BaseType, bool)> {
    if let Some(p) = f.params.iter().find(|p| p.name == name) {
        let ok = p.ty.pointers.len() == 1 && p.dims.is_empty() && fixed_param(f, name);
        return ok.then(|| (p.ty.base.clone(), p.ty.is_volatile || p.ty.is_const));
    }
    let [d] = ast_util::declarations(f, name)[..] else {
        return None;
    };
    if d.ty.pointers.len() != 1 || !d.dims.is_empty() || d.ty.is_ref {
        return None;
    }
    let init = fixed_local(f, name)?;
    let of_param = |e: &Expr| name_of(e).is_some() && uniform(f, e);
    let slice = match &init.kind {
        // `in + off`, `off + in`
        ExprKind::Binary(BinOp::Add, a, b) => {
            (of_param(a) && uniform(f, b)) || (uniform(f, a) && of_param(b))
        }
        // `&in[off]`
        ExprKind::Unary(UnOp::AddrOf, x) => {
            matches!(&x.kind, ExprKind::Index(a, i) if of_param(a) && uniform(f, i))
        }
        _ => of_param(init),
    };
    slice.then(|| (d.ty.base.clone(), d.ty.is_volatile || d.ty.is_const))
}

/// The element type of the pointer `name` when a `__shared__` array may
/// hold its elements: an arithmetic scalar of 32 or 64 bits, not
/// `volatile` (the refusal says why not otherwise).
pub(super) fn element_type(f: &Function, name: &str) -> Result<BaseType, Refusal> {
    let (base, qualified) =
        pointer_decl(f, name).ok_or_else(|| format!("`{name}` is not a pointer of the kernel"))?;
    if qualified {
        return Err(format!("`{name}` is `volatile` (or `const`)").into());
    }
    use BaseType as B;
    match base {
        B::Int
        | B::UInt
        | B::Long
        | B::ULong
        | B::LongLong
        | B::ULongLong
        | B::Float
        | B::Double => Ok(base),
        other => Err(format!(
            "its elements are `{}`, not a 32- or 64-bit number type",
            other.c_name()
        )
        .into()),
    }
}
