//! The value of an IR expression that is a compile-time constant: built
//! only from literals, template value parameters and `sizeof` (which
//! lowering has already made [`ExprKind::Const`]), with the operators the
//! simulator applies to them. Lowering uses it to keep only the branch an
//! `if` on such a condition takes, as nvcc does for an instantiation.

use super::value::{binary, unary};
use super::{Expr, ExprKind, Value};

/// The value of `e` when it is the same for every thread of every launch,
/// computed as the simulator computes it; `None` when `e` reads a variable,
/// a built-in, memory or a function, or when evaluating it would be
/// undefined behaviour (then the branch stays, and the simulator reports it).
pub fn constant(e: &Expr) -> Option<Value> {
    match &e.kind {
        ExprKind::Const(v) => Some(*v),
        ExprKind::Unary(op, x) => unary(*op, constant(x)?, e.ty).ok(),
        ExprKind::Binary(op, l, r) => binary(*op, constant(l)?, constant(r)?, l.ty).ok(),
        ExprKind::And(l, r) => {
            let a = constant(l)?.truthy();
            Some(Value::I((a && constant(r)?.truthy()) as i64))
        }
        ExprKind::Or(l, r) => {
            let a = constant(l)?.truthy();
            Some(Value::I((a || constant(r)?.truthy()) as i64))
        }
        ExprKind::Select(c, a, b) => {
            if constant(c)?.truthy() {
                constant(a)
            } else {
                constant(b)
            }
        }
        ExprKind::Convert { value, .. } => Some(constant(value)?.convert_from(value.ty, e.ty)),
        ExprKind::Var(_) | ExprKind::Builtin(_) | ExprKind::Load(_) | ExprKind::Call(..) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{BinOp, Scalar, Unary};

    fn int(v: i64, ty: Scalar) -> Expr {
        Expr {
            kind: ExprKind::Const(Value::I(v)),
            ty,
        }
    }

    fn bin(op: BinOp, l: Expr, r: Expr, ty: Scalar) -> Expr {
        Expr {
            kind: ExprKind::Binary(op, Box::new(l), Box::new(r)),
            ty,
        }
    }

    #[test]
    fn a_comparison_of_constants_is_folded_as_the_simulator_computes_it() {
        let ge = bin(
            BinOp::Ge,
            int(16, Scalar::U32),
            int(32, Scalar::U32),
            Scalar::I32,
        );
        assert_eq!(constant(&ge), Some(Value::I(0)));
        let sum = bin(
            BinOp::Add,
            int(u32::MAX as i64, Scalar::U32),
            int(1, Scalar::U32),
            Scalar::U32,
        );
        assert_eq!(constant(&sum), Some(Value::I(0)), "unsigned wraps");
    }

    #[test]
    fn undefined_behaviour_and_variables_are_not_constants() {
        let overflow = bin(
            BinOp::Add,
            int(i32::MAX as i64, Scalar::I32),
            int(1, Scalar::I32),
            Scalar::I32,
        );
        assert_eq!(constant(&overflow), None);
        let var = Expr {
            kind: ExprKind::Var(0),
            ty: Scalar::I32,
        };
        let and = Expr {
            kind: ExprKind::And(Box::new(int(1, Scalar::I32)), Box::new(var)),
            ty: Scalar::I32,
        };
        assert_eq!(constant(&and), None);
        let short = Expr {
            kind: ExprKind::And(
                Box::new(int(0, Scalar::I32)),
                Box::new(Expr {
                    kind: ExprKind::Var(0),
                    ty: Scalar::I32,
                }),
            ),
            ty: Scalar::I32,
        };
        assert_eq!(
            constant(&short),
            Some(Value::I(0)),
            "`0 && x` is false whatever `x` is, as in C"
        );
    }

    #[test]
    fn negation_is_folded_as_the_simulator_negates() {
        let neg = |v: i64, ty: Scalar| Expr {
            kind: ExprKind::Unary(Unary::Neg, Box::new(int(v, ty))),
            ty,
        };
        assert_eq!(constant(&neg(5, Scalar::I32)), Some(Value::I(-5)));
        assert_eq!(
            constant(&neg(i32::MIN as i64, Scalar::I32)),
            None,
            "-INT_MIN overflows"
        );
        assert_eq!(
            constant(&neg(1, Scalar::U32)),
            Some(Value::I(u32::MAX as i64)),
            "unsigned negation wraps"
        );
    }
}
