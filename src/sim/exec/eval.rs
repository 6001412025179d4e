//! Evaluation of expressions on the lanes of a warp: constants,
//! variables, built-ins, arithmetic (with its undefined behaviour reported
//! as errors), short-circuit operators, conversions, loads, math functions
//! and warp-level primitives, charging the cost of each node.

use super::{lanes_of, Block, Lanes, SimError, Warp, ZERO_LANES};
use crate::cost::Counter;
use crate::ir::value::{binary, unary, wrap, ArithError};
use crate::ir::{math, Builtin, Expr, ExprKind, MathFn, Scalar, Value, VarKind};

impl Block<'_> {
    /// Evaluates `e` on the lanes of `mask`, charging its cost once. Lanes
    /// hold bit patterns of values of type `e.ty` ([`Value::to_bits`]).
    pub(super) fn eval(&mut self, w: &mut Warp, e: &Expr, mask: u32) -> Result<Lanes, SimError> {
        let mut out = ZERO_LANES;
        self.eval_into(w, e, mask, &mut out)?;
        Ok(out)
    }

    /// [`Block::eval`] into `out` (lanes outside `mask` set to 0): the
    /// recursion writes each operand in place instead of returning 256
    /// bytes through a `Result` at every node.
    fn eval_into(
        &mut self,
        w: &mut Warp,
        e: &Expr,
        mask: u32,
        out: &mut Lanes,
    ) -> Result<(), SimError> {
        *out = ZERO_LANES;
        let ty = e.ty;
        match &e.kind {
            ExprKind::Const(v) => {
                Self::charge(w, Counter::Const);
                *out = [v.to_bits(); 32];
            }
            ExprKind::Var(v) => {
                match self.ctx.kernel.vars[*v].kind {
                    VarKind::Param(_) => Self::charge(w, Counter::Param),
                    VarKind::Local => Self::charge(w, Counter::Var),
                    // Charged as the literal a `-D` would give.
                    VarKind::Symbol => Self::charge(w, Counter::Const),
                }
                *out = w.vars[*v];
            }
            ExprKind::Builtin(b) => {
                let shape = self.ctx.shape;
                match b {
                    Builtin::ThreadIdx(d) => {
                        Self::charge(w, Counter::Var);
                        for l in lanes_of(mask) {
                            out[l] = w.tid[l][*d as usize];
                        }
                    }
                    Builtin::BlockIdx(d) => {
                        Self::charge(w, Counter::Param);
                        *out = [self.block[*d as usize]; 32];
                    }
                    Builtin::BlockDim(d) => {
                        Self::charge(w, Counter::Param);
                        *out = [shape.block()[*d as usize]; 32];
                    }
                    Builtin::GridDim(d) => {
                        Self::charge(w, Counter::Param);
                        *out = [shape.grid()[*d as usize]; 32];
                    }
                    Builtin::WarpSize => {
                        Self::charge(w, Counter::Param);
                        *out = [self.ctx.hw.warp_size as u64; 32];
                    }
                }
            }
            ExprKind::Unary(op, x) => {
                let mut v = ZERO_LANES;
                self.eval_into(w, x, mask, &mut v)?;
                Self::charge(w, Counter::Op);
                for l in lanes_of(mask) {
                    let a = Value::from_bits(v[l], x.ty);
                    out[l] = unary(*op, a, ty)
                        .map_err(|e| self.error(w, l, w.span, arith_message(e)))?
                        .to_bits();
                }
            }
            ExprKind::Binary(op, l, r) => {
                let mut a = ZERO_LANES;
                self.eval_into(w, l, mask, &mut a)?;
                let mut b = ZERO_LANES;
                self.eval_into(w, r, mask, &mut b)?;
                Self::charge(w, Counter::Op);
                if fast_binary(*op, l.ty, &a, &b, mask, out) {
                    return Ok(());
                }
                for lane in lanes_of(mask) {
                    let (x, y) = (
                        Value::from_bits(a[lane], l.ty),
                        Value::from_bits(b[lane], r.ty),
                    );
                    out[lane] = binary(*op, x, y, l.ty)
                        .map_err(|e| self.error(w, lane, w.span, arith_message(e)))?
                        .to_bits();
                }
            }
            ExprKind::And(l, r) | ExprKind::Or(l, r) => {
                let is_and = matches!(e.kind, ExprKind::And(..));
                let mut a = ZERO_LANES;
                self.eval_into(w, l, mask, &mut a)?;
                Self::charge(w, Counter::Op);
                let rest = lanes_of(mask)
                    .filter(|&x| truthy(a[x], l.ty) == is_and)
                    .fold(0u32, |m, x| m | 1 << x);
                let mut b = ZERO_LANES;
                if rest != 0 {
                    self.eval_into(w, r, rest, &mut b)?;
                }
                for lane in lanes_of(mask) {
                    let v = if rest & (1 << lane) != 0 {
                        truthy(b[lane], r.ty)
                    } else {
                        truthy(a[lane], l.ty)
                    };
                    out[lane] = v as u64;
                }
            }
            ExprKind::Select(c, a, b) => {
                let mut cv = ZERO_LANES;
                self.eval_into(w, c, mask, &mut cv)?;
                Self::charge(w, Counter::Op);
                let t = lanes_of(mask)
                    .filter(|&x| truthy(cv[x], c.ty))
                    .fold(0u32, |m, x| m | 1 << x);
                let f = mask & !t;
                let (mut av, mut bv) = (ZERO_LANES, ZERO_LANES);
                if t != 0 {
                    self.eval_into(w, a, t, &mut av)?;
                }
                if f != 0 {
                    self.eval_into(w, b, f, &mut bv)?;
                }
                for lane in lanes_of(mask) {
                    out[lane] = if t & (1 << lane) != 0 {
                        av[lane]
                    } else {
                        bv[lane]
                    };
                }
            }
            ExprKind::Convert { value, explicit } => {
                let mut v = ZERO_LANES;
                self.eval_into(w, value, mask, &mut v)?;
                if *explicit {
                    Self::charge(w, Counter::Op);
                }
                let from = value.ty;
                for l in lanes_of(mask) {
                    out[l] = Value::from_bits(v[l], from)
                        .convert_from(from, ty)
                        .to_bits();
                }
            }
            ExprKind::Load(a) => {
                // An index is an address: an undefined value in it is an
                // error even where the loaded value may be undefined.
                let copying = self.undefined_lanes.take();
                let idx = self.indices(w, a, mask);
                self.undefined_lanes = copying;
                let idx = idx?;
                self.charge_access(w, a, &idx, mask, false);
                for l in lanes_of(mask) {
                    self.track(w, a, idx[l], l, None)?;
                    let at = self.flat(w, a, idx[l], l);
                    match self.undefined_lanes {
                        Some(lanes) if !self.is_written(a, at) => {
                            self.undefined_lanes = Some(lanes | 1 << l);
                        }
                        _ => self.check_initialized(w, a, idx[l], at, l)?,
                    }
                    out[l] = self.read(w, a.array, at, l);
                }
            }
            ExprKind::Call(f, args) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(w, a, mask)?);
                }
                Self::charge(w, Counter::Op);
                if f.is_warp() {
                    *out = self.warp_call(w, *f, &vals, mask)?;
                    return Ok(());
                }
                let arg_ty = args.first().map_or(ty, |a| a.ty);
                let mut lane_args = Vec::with_capacity(args.len());
                for l in lanes_of(mask) {
                    lane_args.clear();
                    lane_args.extend(
                        args.iter()
                            .enumerate()
                            .map(|(i, a)| Value::from_bits(vals[i][l], a.ty)),
                    );
                    out[l] = math::eval(*f, &lane_args, arg_ty, ty).to_bits();
                }
            }
        }
        Ok(())
    }

    /// A warp-level primitive on the lanes of `mask`, from its arguments'
    /// values in every lane. Lanes of the member mask that are not running
    /// (exited, or outside the block) do not take part. Undefined behaviour
    /// is an error: a shuffle reading a lane that is not running it, a
    /// width that is not a power of two up to the warp size.
    fn warp_call(&self, w: &Warp, f: MathFn, vals: &[Lanes], mask: u32) -> Result<Lanes, SimError> {
        let mut out = ZERO_LANES;
        let warp = self.ctx.hw.warp_size.min(32);
        let Some(first) = lanes_of(mask).next() else {
            return Ok(out);
        };
        if f == MathFn::ActiveMask {
            return Ok([mask as u64; 32]);
        }
        match f {
            MathFn::Ballot | MathFn::Any | MathFn::All => {
                let votes = lanes_of(mask)
                    .filter(|&l| vals[1][l] != 0)
                    .fold(0u32, |m, l| m | 1 << l);
                let members = vals[0][first] as u32 & mask;
                let v = match f {
                    MathFn::Ballot => (votes & members) as u64,
                    MathFn::Any => (votes & members != 0) as u64,
                    _ => (votes & members == members) as u64,
                };
                for l in lanes_of(mask) {
                    out[l] = v;
                }
            }
            _ => {
                for l in lanes_of(mask) {
                    let width = vals[3][l] as u32;
                    if !width.is_power_of_two() || width > warp {
                        return Err(self.error(
                            w,
                            l,
                            w.span,
                            format!("undefined behaviour: shuffle width {} is not a power of two up to {warp}", vals[3][l] as u32 as i32),
                        ));
                    }
                    let src = math::shuffle_source(f, l as u32, vals[2][l] as u32, width);
                    if src >= warp || mask & (1 << src) == 0 {
                        return Err(self.error(
                            w,
                            l,
                            w.span,
                            format!("undefined behaviour: a shuffle in lane {l} reads lane {src}, which is not running it"),
                        ));
                    }
                    out[l] = vals[1][src as usize];
                }
            }
        }
        Ok(out)
    }
}

/// C truth of a lane holding a value of type `ty`.
pub(super) fn truthy(bits: u64, ty: Scalar) -> bool {
    if ty.is_float() {
        f64::from_bits(bits) != 0.0
    } else {
        bits != 0
    }
}

/// `a op b` on every lane for the common integer and floating-point
/// cases; false when the general path must handle it.
fn fast_binary(
    op: crate::cuda::ast::BinOp,
    ty: Scalar,
    a: &Lanes,
    b: &Lanes,
    mask: u32,
    out: &mut Lanes,
) -> bool {
    use crate::cuda::ast::BinOp as B;
    let comparison = matches!(op, B::Lt | B::Gt | B::Le | B::Ge | B::Eq | B::Ne);
    if ty.is_float() {
        let f: fn(f64, f64) -> f64 = match op {
            B::Add => |x, y| x + y,
            B::Sub => |x, y| x - y,
            B::Mul => |x, y| x * y,
            B::Div => |x, y| x / y,
            B::Lt => |x, y| (x < y) as u8 as f64,
            B::Gt => |x, y| (x > y) as u8 as f64,
            B::Le => |x, y| (x <= y) as u8 as f64,
            B::Ge => |x, y| (x >= y) as u8 as f64,
            B::Eq => |x, y| (x == y) as u8 as f64,
            B::Ne => |x, y| (x != y) as u8 as f64,
            _ => return false,
        };
        let single = ty == Scalar::F32;
        for l in lanes_of(mask) {
            let r = f(f64::from_bits(a[l]), f64::from_bits(b[l]));
            out[l] = if comparison {
                r as u64
            } else if single {
                (r as f32 as f64).to_bits()
            } else {
                Value::F(r).convert(ty).to_bits()
            };
        }
        return true;
    }
    if !matches!(ty, Scalar::I32 | Scalar::U32 | Scalar::I64) {
        return false;
    }
    // Signed 64-bit arithmetic may overflow: the general path reports it.
    if ty == Scalar::I64 && matches!(op, B::Add | B::Sub | B::Mul) {
        return false;
    }
    let f: fn(i64, i64) -> i64 = match op {
        B::Add => i64::wrapping_add,
        B::Sub => i64::wrapping_sub,
        B::Mul => i64::wrapping_mul,
        B::BitAnd => |x, y| x & y,
        B::BitOr => |x, y| x | y,
        B::BitXor => |x, y| x ^ y,
        B::Lt => |x, y| (x < y) as i64,
        B::Gt => |x, y| (x > y) as i64,
        B::Le => |x, y| (x <= y) as i64,
        B::Ge => |x, y| (x >= y) as i64,
        B::Eq => |x, y| (x == y) as i64,
        B::Ne => |x, y| (x != y) as i64,
        _ => return false,
    };
    for l in lanes_of(mask) {
        let r = f(a[l] as i64, b[l] as i64);
        let v = wrap(r, ty);
        if !comparison && ty == Scalar::I32 && v != Value::I(r) {
            // A signed 32-bit overflow (exact in i64): the general path
            // reports it.
            return false;
        }
        out[l] = if comparison { r as u64 } else { v.to_bits() };
    }
    true
}

/// What a simulated arithmetic error is called.
fn arith_message(e: ArithError) -> String {
    match e {
        ArithError::DivByZero => "integer division by zero".into(),
        ArithError::SignedOverflow => {
            "signed integer overflow (undefined behaviour: copper's bounds assume it does not happen)"
                .into()
        }
        ArithError::ShiftCount => {
            "shift by a count that is negative or not below the width of its type (undefined behaviour: copper's bounds assume it does not happen)"
                .into()
        }
    }
}
