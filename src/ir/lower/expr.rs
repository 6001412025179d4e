//! Expressions: each AST expression becomes an IR expression, its side
//! effects statements before it in C's evaluation order.

use super::types::char_value;
use super::*;
use crate::cuda::ast::{CastStyle, ExprKind as A, UnOp};
use crate::ir::record::FieldType;

/// Whether evaluating `e` may write a variable or memory, or synchronize:
/// assignments, increments, and calls other than math functions (`min`,
/// `sqrtf`: the lowering reads those before any device function) of
/// arguments without effects.
pub(super) fn expr_has_effects(e: &ast::Expr) -> bool {
    match &e.kind {
        A::Assign(..) | A::Method { .. } => true,
        A::Call(name, args) => {
            crate::ir::math::lookup(name).is_none() || args.iter().any(expr_has_effects)
        }
        A::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, _) => true,
        A::Unary(_, x) | A::Cast(_, _, x) | A::SizeofExpr(x) | A::Member { base: x, .. } => {
            expr_has_effects(x)
        }
        A::Binary(_, l, r) | A::Index(l, r) => expr_has_effects(l) || expr_has_effects(r),
        A::Cond(c, a, b) => expr_has_effects(c) || expr_has_effects(a) || expr_has_effects(b),
        A::Comma(xs) => xs.iter().any(expr_has_effects),
        _ => false,
    }
}

impl Lowerer<'_> {
    /// The scalar element `a[i]…` or `*p` read.
    fn load(&mut self, e: &ast::Expr, out: &mut Vec<Stmt>) -> Result<Expr> {
        let (a, idx) = self.element(e, out)?;
        self.scalar_element(a, e.meta.span)?;
        let access = self.access(a, idx, false, &e.meta);
        Ok(Expr {
            kind: ExprKind::Load(access),
            ty: self.k.arrays[a].elem,
        })
    }

    /// Lowers an expression used as a value.
    pub(super) fn expr(&mut self, e: &ast::Expr, out: &mut Vec<Stmt>) -> Result<Expr> {
        let span = e.meta.span;
        if let Some(call) = self.method_as_call(e)? {
            return self.expr(&call, out);
        }
        Ok(match &e.kind {
            A::Int { value, text } => {
                let ty = self.int_literal_type(*value, text);
                Expr {
                    kind: ExprKind::Const(Value::I(*value as i64).convert(ty)),
                    ty,
                }
            }
            A::Float(t) => {
                let single = t.ends_with(['f', 'F']);
                let ty = if single { Scalar::F32 } else { Scalar::F64 };
                let Ok(f) = t.trim_end_matches(['f', 'F']).parse::<f64>() else {
                    return fail(span, format!("floating literal `{t}` is not supported"));
                };
                Expr {
                    kind: ExprKind::Const(Value::F(f).convert(ty)),
                    ty,
                }
            }
            A::Char(c) => match char_value(c) {
                Some(v) => int(v, Scalar::I8),
                None => return fail(span, format!("character literal {c} is not supported")),
            },
            A::Bool(b) => Expr {
                kind: ExprKind::Const(Value::I(*b as i64)),
                ty: Scalar::Bool,
            },
            A::Str(_) => return fail(span, "string literals outside `printf`"),
            A::Ident(n) => match n.as_str() {
                "warpSize" => Expr {
                    kind: ExprKind::Builtin(Builtin::WarpSize),
                    ty: Scalar::I32,
                },
                _ => match self.lookup(n, span) {
                    Ok(Binding::Var(v)) => var_expr(&self.k, v),
                    Ok(Binding::Cell(a)) => {
                        self.scalar_element(a, span)?;
                        let access = self.access(a, int(0, Scalar::I64), false, &e.meta);
                        Expr {
                            kind: ExprKind::Load(access),
                            ty: self.k.arrays[a].elem,
                        }
                    }
                    Ok(Binding::Elem {
                        array,
                        index,
                        slot,
                        field,
                    }) => {
                        if !matches!(field, Some(FieldType::Scalar(_))) {
                            self.scalar_element(array, span)?;
                        }
                        let idx = var_expr(&self.k, index);
                        let access = self.access_slot(array, idx, slot, false, &e.meta);
                        Expr {
                            kind: ExprKind::Load(access),
                            ty: self.k.arrays[array].slot_type(slot),
                        }
                    }
                    Ok(Binding::Const(v, ty)) => Expr {
                        kind: ExprKind::Const(v),
                        ty,
                    },
                    Ok(Binding::Ptr { .. } | Binding::View { .. }) => {
                        return fail(span, format!("array `{n}` used as a value"))
                    }
                    Ok(Binding::Rec { rec, .. }) => {
                        return fail(
                            span,
                            format!("`{n}` (a `{}`) used as a scalar value", rec.name),
                        )
                    }
                    // `INT_MAX`, `FLT_MAX`, … when nothing in the file
                    // defines them; otherwise an unknown constant.
                    Err(e) => match math::library_constant(n) {
                        Some((v, ty)) => Expr {
                            kind: ExprKind::Const(v),
                            ty,
                        },
                        None if self.is_undefined(n) => {
                            let v = self.symbol(n, span);
                            var_expr(&self.k, v)
                        }
                        None => return Err(e),
                    },
                },
            },
            A::Member {
                base,
                field,
                arrow: false,
            } => {
                let dim = match field.as_str() {
                    "x" => 0,
                    "y" => 1,
                    "z" => 2,
                    _ => 3,
                };
                let b = match &base.kind {
                    A::Ident(n) if dim < 3 => match n.as_str() {
                        "threadIdx" => Some(Builtin::ThreadIdx(dim)),
                        "blockIdx" => Some(Builtin::BlockIdx(dim)),
                        "blockDim" => Some(Builtin::BlockDim(dim)),
                        "gridDim" => Some(Builtin::GridDim(dim)),
                        _ => None,
                    },
                    _ => None,
                };
                match b {
                    Some(b) => Expr {
                        kind: ExprKind::Builtin(b),
                        ty: Scalar::U32,
                    },
                    None => self.member_value(e, out)?,
                }
            }
            A::Member { .. } => self.member_value(e, out)?,
            A::Unary(op, x) => match op {
                UnOp::Neg | UnOp::BitNot => {
                    let v = self.expr(x, out)?;
                    if *op == UnOp::BitNot && v.ty.is_float() {
                        return fail(span, "`~` on a floating-point operand");
                    }
                    let ty = v.ty.promote();
                    let u = if *op == UnOp::Neg {
                        Unary::Neg
                    } else {
                        Unary::BitNot
                    };
                    Expr {
                        kind: ExprKind::Unary(u, Box::new(convert(v, ty))),
                        ty,
                    }
                }
                UnOp::Plus => {
                    let v = self.expr(x, out)?;
                    let ty = v.ty.promote();
                    convert(v, ty)
                }
                UnOp::Not => {
                    let v = self.expr(x, out)?;
                    Expr {
                        kind: ExprKind::Unary(Unary::Not, Box::new(v)),
                        ty: Scalar::I32,
                    }
                }
                UnOp::Deref => self.load(e, out)?,
                UnOp::AddrOf => {
                    return fail(span, "`&` outside an atomic call or pointer initialization")
                }
                UnOp::PreInc | UnOp::PreDec => {
                    let (bop, one) = step_of(*op, &e.meta);
                    let v = self.assign(Some(bop), x, &one, span, out, true)?;
                    self.snapshot(v, span, out)
                }
                UnOp::PostInc | UnOp::PostDec => {
                    let old = self.expr(x, out)?;
                    let old = self.snapshot(old, span, out);
                    let (bop, one) = step_of(*op, &e.meta);
                    self.assign(Some(bop), x, &one, span, out, false)?;
                    old
                }
            },
            A::Binary(op @ (BinOp::And | BinOp::Or), l, r) => {
                let lv = self.expr(l, out)?;
                let mut effects = Vec::new();
                let rv = self.expr(r, &mut effects)?;
                if effects.is_empty() {
                    arith(*op, lv, rv, span)?
                } else {
                    // `l && r` where r has side effects: t = l; if (t) { effects; t = r; }
                    let t = self.temp(Scalar::I32, span);
                    let truth = |v: Expr| Expr {
                        kind: ExprKind::Unary(
                            Unary::Not,
                            Box::new(Expr {
                                kind: ExprKind::Unary(Unary::Not, Box::new(v)),
                                ty: Scalar::I32,
                            }),
                        ),
                        ty: Scalar::I32,
                    };
                    out.push(Stmt::Assign {
                        var: t,
                        value: truth(lv),
                        span,
                    });
                    effects.push(Stmt::Assign {
                        var: t,
                        value: truth(rv),
                        span,
                    });
                    let tv = var_expr(&self.k, t);
                    let cond = if *op == BinOp::And {
                        tv
                    } else {
                        Expr {
                            kind: ExprKind::Unary(Unary::Not, Box::new(tv)),
                            ty: Scalar::I32,
                        }
                    };
                    out.push(Stmt::If {
                        cond,
                        then: effects,
                        els: Vec::new(),
                        span,
                    });
                    var_expr(&self.k, t)
                }
            }
            A::Binary(op, l, r) => {
                if self.is_pointer_expr(e) {
                    return fail(span, "pointer arithmetic used as a value");
                }
                let lv = self.expr(l, out)?;
                let lv = if expr_has_effects(r) {
                    self.snapshot(lv, span, out)
                } else {
                    lv
                };
                let rv = self.expr(r, out)?;
                arith(*op, lv, rv, span)?
            }
            A::Assign(op, lhs, rhs) => {
                let v = self.assign(*op, lhs, rhs, span, out, true)?;
                self.snapshot(v, span, out)
            }
            A::Cond(c, a, b) => {
                let cv = self.expr(c, out)?;
                let mut ea = Vec::new();
                let av = self.expr(a, &mut ea)?;
                let mut eb = Vec::new();
                let bv = self.expr(b, &mut eb)?;
                let ty = if av.ty == bv.ty {
                    av.ty
                } else {
                    Scalar::common(av.ty, bv.ty)
                };
                if ea.is_empty() && eb.is_empty() {
                    Expr {
                        kind: ExprKind::Select(
                            Box::new(cv),
                            Box::new(convert(av, ty)),
                            Box::new(convert(bv, ty)),
                        ),
                        ty,
                    }
                } else {
                    let t = self.temp(ty, span);
                    ea.push(Stmt::Assign {
                        var: t,
                        value: convert(av, ty),
                        span,
                    });
                    eb.push(Stmt::Assign {
                        var: t,
                        value: convert(bv, ty),
                        span,
                    });
                    out.push(Stmt::If {
                        cond: cv,
                        then: ea,
                        els: eb,
                        span,
                    });
                    var_expr(&self.k, t)
                }
            }
            A::Cast(style, t, x) => {
                if !t.pointers.is_empty() {
                    return fail(span, "pointer casts used as values");
                }
                let v = self.expr(x, out)?;
                let ty = self.scalar(t, span)?;
                if let (Some(kw), true) = (
                    style.keyword(),
                    matches!(style, CastStyle::Reinterpret | CastStyle::Const),
                ) {
                    if v.ty != ty {
                        return fail(
                            span,
                            format!("`{kw}` that changes the value's type is not supported"),
                        );
                    }
                }
                Expr {
                    kind: ExprKind::Convert {
                        value: Box::new(v),
                        explicit: true,
                    },
                    ty,
                }
            }
            A::Call(name, args) => match self.call(name, args, span, out, true)? {
                Some(v) => v,
                None => return fail(span, format!("`{name}` does not return a value")),
            },
            A::Index(b, _) if self.is_array_member(b) => self.member_value(e, out)?,
            A::Index(..) => self.load(e, out)?,
            A::SizeofType(t) => {
                let size = match self.record_type(t, span)? {
                    _ if !t.pointers.is_empty() => 8,
                    Some(r) => r.size,
                    _ => self.scalar(t, span)?.size(),
                };
                int(size as i64, Scalar::U64)
            }
            A::SizeofExpr(x) => {
                let mut scratch = Vec::new();
                let saved = (self.k.sites.len(), self.k.vars.len());
                let v = self.expr(x, &mut scratch)?;
                self.k.sites.truncate(saved.0);
                self.k.vars.truncate(saved.1);
                int(v.ty.size() as i64, Scalar::U64)
            }
            A::Comma(xs) => {
                let (last, rest) = xs.split_last().expect("comma has operands");
                for x in rest {
                    self.effect(x, out)?;
                }
                self.expr(last, out)?
            }
            // Read as the call it stands for, above.
            A::Method { .. } => return fail(span, "a member function call"),
        })
    }

    /// Saves a value in a temporary when later effects could change it.
    pub(super) fn snapshot(&mut self, v: Expr, span: Span, out: &mut Vec<Stmt>) -> Expr {
        if matches!(v.kind, ExprKind::Const(_)) {
            return v;
        }
        let t = self.temp(v.ty, span);
        out.push(Stmt::Assign {
            var: t,
            value: v,
            span,
        });
        var_expr(&self.k, t)
    }
}
