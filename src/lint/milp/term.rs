//! Integer linear expressions with their ranges, the MILP's values.

use good_lp::Expression;

/// An integer linear expression with the range of values it takes.
#[derive(Clone)]
pub(super) struct Term {
    pub(super) e: Expression,
    pub(super) lo: i128,
    pub(super) hi: i128,
}

impl Term {
    pub(super) fn constant(v: i128) -> Term {
        Term {
            e: Expression::from(v as f64),
            lo: v,
            hi: v,
        }
    }

    pub(super) fn as_const(&self) -> Option<i128> {
        (self.lo == self.hi).then_some(self.lo)
    }

    pub(super) fn add(&self, o: &Term, sign: i128) -> Term {
        let (a, b) = if sign > 0 {
            (o.lo, o.hi)
        } else {
            (-o.hi, -o.lo)
        };
        Term {
            e: self.e.clone() + o.e.clone() * sign as f64,
            lo: self.lo + a,
            hi: self.hi + b,
        }
    }

    pub(super) fn scale(&self, c: i128) -> Term {
        let (x, y) = (self.lo * c, self.hi * c);
        Term {
            e: self.e.clone() * c as f64,
            lo: x.min(y),
            hi: x.max(y),
        }
    }
}

/// Ranges wider than this are not encoded (floating-point solvers lose
/// integrality on them); such a value becomes free in its type.
pub(super) const LARGEST: i128 = 1 << 40;

/// `a / b` rounded toward negative infinity.
pub(super) fn div_floor(a: i128, b: i128) -> i128 {
    a.div_euclid(b)
}
