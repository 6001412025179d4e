//! Whether the lanes' partial results may be combined in the
//! accumulator's own type: the C types of a fold's term, read from the
//! declarations (parameters, the row's locals) without the IR.
//!
//! An integer sum is the same in any order only when every step adds an
//! integer (an `int` accumulator adding a `float` truncates at each step);
//! a maximum or minimum of integers keeps its result only when each step
//! compares in the accumulator's type (`max(int, unsigned)` compares as
//! `unsigned`, while the shuffles would compare `int`s); `fmaxf`/`fminf`
//! round a `double` accumulator to `float`, which a lane that folds
//! nothing would skip.

use std::collections::BTreeMap;

use copper::cuda::ast::{BaseType, BinOp, Expr, ExprKind, Function, Stmt, StmtKind, Type, UnOp};

use super::{Fold, RowLoop};
use crate::ast_util;

/// An integer type's conversion rank (1 `char` … 5 `long long`) and
/// whether it is signed; `None` for other types.
fn rank(ty: &Type) -> Option<(u8, bool)> {
    use BaseType as B;
    if ty.is_pointer() {
        return None;
    }
    Some(match ty.base {
        B::Bool => (0, false),
        B::Char | B::SChar => (1, true),
        B::UChar => (1, false),
        B::Short => (2, true),
        B::UShort => (2, false),
        B::Int => (3, true),
        B::UInt => (3, false),
        B::Long => (4, true),
        B::ULong => (4, false),
        B::LongLong => (5, true),
        B::ULongLong => (5, false),
        _ => return None,
    })
}

/// The declared types of the names a term may read: parameters, the
/// row index, the counter, and the locals of the row's code.
fn declared(f: &Function, r: &RowLoop) -> BTreeMap<String, Type> {
    let mut out: BTreeMap<String, Type> = f
        .params
        .iter()
        .map(|p| (p.name.clone(), p.ty.clone()))
        .collect();
    out.insert(r.row.clone(), r.row_ty.clone());
    out.insert(r.counter.clone(), Type::scalar(BaseType::Int));
    let mut add = |s: &Stmt| {
        ast_util::visit_stmts(s, &mut |x| {
            if let StmtKind::Decl(ds) = &x.kind {
                for d in ds.iter().filter(|d| d.dims.is_empty()) {
                    out.insert(d.name.clone(), d.ty.clone());
                }
            }
        })
    };
    r.body.iter().for_each(&mut add);
    r.loop_body.iter().for_each(&mut add);
    out
}

/// The integer types (rank, signed) of the leaves of `e` — names, array
/// elements, casts, literals (an unsuffixed literal that fits an `int`
/// counts as any type: it converts without changing its value) — when
/// every operator keeps an integer; `None` when some part may not be an
/// integer.
fn leaves(e: &Expr, types: &BTreeMap<String, Type>, out: &mut Vec<(u8, bool)>) -> Option<()> {
    use BinOp as B;
    match &e.kind {
        ExprKind::Int { value, text } => {
            if text.contains(['u', 'U', 'l', 'L']) || *value > i32::MAX as u64 {
                return None;
            }
        }
        ExprKind::Char(_) => {}
        ExprKind::Ident(n) => out.push(rank(types.get(n)?)?),
        ExprKind::Member { base, .. } => match &base.kind {
            ExprKind::Ident(n)
                if ["threadIdx", "blockIdx", "blockDim", "gridDim"].contains(&n.as_str()) =>
            {
                out.push((3, false))
            }
            _ => return None,
        },
        ExprKind::Index(b, _) => {
            let ExprKind::Ident(n) = &b.kind else {
                return None;
            };
            let ty = types.get(n)?;
            if ty.pointers.len() != 1 {
                return None;
            }
            out.push(rank(&Type::scalar(ty.base.clone()))?);
        }
        ExprKind::Cast(_, ty, _) => out.push(rank(ty)?),
        ExprKind::Unary(UnOp::Neg | UnOp::Plus | UnOp::BitNot, x) => leaves(x, types, out)?,
        ExprKind::Binary(op, a, b) => match op {
            B::Add | B::Sub | B::Mul | B::Div | B::Rem | B::BitAnd | B::BitOr | B::BitXor => {
                leaves(a, types, out)?;
                leaves(b, types, out)?;
            }
            B::Shl | B::Shr => leaves(a, types, out)?,
            _ => return None,
        },
        ExprKind::Cond(_, a, b) => {
            leaves(a, types, out)?;
            leaves(b, types, out)?;
        }
        _ => return None,
    }
    Some(())
}

/// Why the lanes' results of `r`'s fold could not be combined in the
/// accumulator's type, if they could not.
pub(super) fn combinable(f: &Function, r: &RowLoop, integers: bool) -> Result<(), String> {
    let print = copper::cuda::print::expression;
    let term = print(&r.term);
    if !integers {
        return match &r.fold {
            Fold::Call { name, .. }
                if r.acc_ty.base == BaseType::Double && name.ends_with('f') =>
            {
                Err(format!(
                    "`{name}` rounds the `double` `{}` to `float`, which a lane that folds nothing would not do",
                    r.acc
                ))
            }
            _ => Ok(()),
        };
    }
    let types = declared(f, r);
    let mut found = Vec::new();
    if leaves(&r.term, &types, &mut found).is_none() {
        return Err(format!(
            "the term `{term}` may not be an integer, so adding it in another order may change `{}`",
            r.acc
        ));
    }
    if let Fold::Call { name, .. } = &r.fold {
        let Some((acc_rank, acc_signed)) = rank(&r.acc_ty) else {
            return Err(format!("`{}` is not an integer", r.acc));
        };
        if found
            .iter()
            .any(|&(k, signed)| k > acc_rank || (k == acc_rank && signed != acc_signed))
        {
            return Err(format!(
                "`{name}` may compare `{term}` with `{}` in another type than `{}`'s, which the shuffles would use",
                r.acc, r.acc
            ));
        }
    }
    Ok(())
}
