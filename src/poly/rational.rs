//! Exact rational numbers over `i128`, for bounds and linear constraints.

use std::cmp::Ordering;
use std::fmt;
use std::ops::{Add, Div, Mul, Neg, Sub};

/// A rational `num/den` in lowest terms with `den > 0`.
///
/// The operators never wrap around: an `i128` overflow in `+`, `-`, `*`,
/// `/` or `-x` panics (an internal error, never a wrong number), and
/// comparison is exact for every value. Where values come from the inputs
/// (costs of user metrics, LP solutions, bounds), the `checked_*` forms
/// say `None` instead, and the caller reports "no bound" with the reason.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rational {
    num: i128,
    den: i128,
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    a = a.abs();
    b = b.abs();
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Rational {
    /// Zero.
    pub const ZERO: Rational = Rational { num: 0, den: 1 };
    /// One.
    pub const ONE: Rational = Rational { num: 1, den: 1 };

    /// `num/den`; `den` must not be zero.
    pub fn new(num: i128, den: i128) -> Rational {
        Rational::checked_new(num, den).unwrap_or_else(|| overflowed())
    }

    /// `num/den` in lowest terms, or `None` when `den` is zero or the
    /// result does not fit (`i128::MIN` has no positive counterpart).
    pub fn checked_new(num: i128, den: i128) -> Option<Rational> {
        if den == 0 || num == i128::MIN || den == i128::MIN {
            return None;
        }
        let g = gcd(num, den).max(1);
        let s = if den < 0 { -1 } else { 1 };
        Some(Rational {
            num: s * num / g,
            den: s * den / g,
        })
    }

    /// An integer.
    pub fn int(n: i128) -> Rational {
        Rational { num: n, den: 1 }
    }

    /// Numerator.
    pub fn num(self) -> i128 {
        self.num
    }

    /// Denominator (positive).
    pub fn den(self) -> i128 {
        self.den
    }

    /// Whether this is zero.
    pub fn is_zero(self) -> bool {
        self.num == 0
    }

    /// Whether this is an integer.
    pub fn is_integer(self) -> bool {
        self.den == 1
    }

    /// As a float.
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// The smallest integer `≥ self`.
    pub fn ceil(self) -> i128 {
        self.num.div_euclid(self.den) + i128::from(self.num.rem_euclid(self.den) != 0)
    }

    /// The largest integer `≤ self`.
    pub fn floor(self) -> i128 {
        self.num.div_euclid(self.den)
    }

    /// Absolute value.
    pub fn abs(self) -> Rational {
        Rational {
            num: self.num.abs(),
            den: self.den,
        }
    }

    /// The rational with the smallest denominator up to `max_den` in
    /// `[x − below, x + above]`; failing that, `x` rounded up to a multiple
    /// of `1/max_den`. LP solvers return exact rational optima up to
    /// floating-point error (`0.4999999997` for `1/2`, `0.0056152343` for
    /// `23/4096`); this recovers them while going below `x` by at most
    /// `below` (keep it at the solver's accuracy). `None` for NaN, infinite
    /// or huge `x`.
    pub fn at_least(x: f64, below: f64, above: f64, max_den: i128) -> Option<Rational> {
        if !x.is_finite() || x.abs() > 1e15 {
            return None;
        }
        let (lo, hi) = (x - below, x + above);
        let found = if lo >= 0.0 {
            simplest_between(lo, hi, max_den)
        } else if hi >= 0.0 {
            Some((0, 1))
        } else {
            simplest_between(-hi, -lo, max_den).map(|(n, d)| (-n, d))
        };
        Some(match found {
            Some((n, d)) => Rational::new(n, d),
            None => Rational::new((x * max_den as f64).ceil() as i128, max_den),
        })
    }

    /// `self + o`, or `None` on overflow.
    pub fn checked_add(self, o: Rational) -> Option<Rational> {
        let num = self
            .num
            .checked_mul(o.den)?
            .checked_add(o.num.checked_mul(self.den)?)?;
        Rational::checked_new(num, self.den.checked_mul(o.den)?)
    }

    /// `self − o`, or `None` on overflow.
    pub fn checked_sub(self, o: Rational) -> Option<Rational> {
        self.checked_add(Rational {
            num: o.num.checked_neg()?,
            den: o.den,
        })
    }

    /// `self / o`, or `None` on overflow or when `o` is zero.
    pub fn checked_div(self, o: Rational) -> Option<Rational> {
        if o.num == 0 {
            return None;
        }
        Rational::checked_new(self.num.checked_mul(o.den)?, self.den.checked_mul(o.num)?)
    }

    /// The sign of `self − o` without overflow (`None` when the cross
    /// products overflow).
    pub fn checked_cmp(self, o: Rational) -> Option<Ordering> {
        Some(
            self.num
                .checked_mul(o.den)?
                .cmp(&o.num.checked_mul(self.den)?),
        )
    }

    /// `self · o`, or `None` on overflow.
    pub fn checked_mul(self, o: Rational) -> Option<Rational> {
        Rational::checked_new(self.num.checked_mul(o.num)?, self.den.checked_mul(o.den)?)
    }

    /// `−self`, or `None` on overflow.
    pub fn checked_neg(self) -> Option<Rational> {
        Some(Rational {
            num: self.num.checked_neg()?,
            den: self.den,
        })
    }
}

/// What an operator does on an `i128` overflow.
fn overflowed() -> ! {
    panic!("128-bit rational arithmetic overflowed")
}

/// The order of `a/b` and `c/d` (`b, d > 0`) without overflow: by integer
/// parts, then by the reciprocals of the fractional parts (a continued
/// fraction expansion of both).
fn exact_cmp(mut a: i128, mut b: i128, mut c: i128, mut d: i128) -> Ordering {
    let mut flip = false;
    loop {
        let (p, q) = (a.div_euclid(b), c.div_euclid(d));
        if p != q {
            return if flip { q.cmp(&p) } else { p.cmp(&q) };
        }
        let (r, t) = (a.rem_euclid(b), c.rem_euclid(d));
        match (r == 0, t == 0) {
            (true, true) => return Ordering::Equal,
            (true, false) => {
                return if flip {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            (false, true) => {
                return if flip {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            // a/b = p + r/b: compare b/r with d/t, the other way round.
            (false, false) => (a, b, c, d, flip) = (b, r, d, t, !flip),
        }
    }
}

/// The fraction `n/d` with the smallest denominator `d ≤ max_den` in
/// `[lo, hi]` (`0 ≤ lo ≤ hi`), by continued fractions.
fn simplest_between(lo: f64, hi: f64, max_den: i128) -> Option<(i128, i128)> {
    // Convergents p/q of the continued fraction being built.
    let (mut p0, mut q0, mut p1, mut q1): (i128, i128, i128, i128) = (0, 1, 1, 0);
    let (mut lo, mut hi) = (lo, hi);
    for _ in 0..64 {
        let a = lo.floor();
        if a + 1.0 <= hi || a == lo {
            // An integer lies in [lo, hi]: the smallest one ends the fraction.
            let a = if a == lo { a } else { a + 1.0 } as i128;
            let (p, q) = (
                a.checked_mul(p1)?.checked_add(p0)?,
                a.checked_mul(q1)?.checked_add(q0)?,
            );
            return (q <= max_den).then_some((p, q));
        }
        let ai = a as i128;
        let (p, q) = (
            ai.checked_mul(p1)?.checked_add(p0)?,
            ai.checked_mul(q1)?.checked_add(q0)?,
        );
        if q > max_den {
            return None;
        }
        (p0, q0, p1, q1) = (p1, q1, p, q);
        // x = a + 1/y with y in [1/(hi − a), 1/(lo − a)].
        (lo, hi) = (1.0 / (hi - a), 1.0 / (lo - a));
    }
    None
}

impl Default for Rational {
    fn default() -> Rational {
        Rational::ZERO
    }
}

impl From<i64> for Rational {
    fn from(n: i64) -> Rational {
        Rational::int(n as i128)
    }
}

impl Add for Rational {
    type Output = Rational;
    fn add(self, o: Rational) -> Rational {
        self.checked_add(o).unwrap_or_else(|| overflowed())
    }
}

impl Sub for Rational {
    type Output = Rational;
    fn sub(self, o: Rational) -> Rational {
        self.checked_sub(o).unwrap_or_else(|| overflowed())
    }
}

impl Mul for Rational {
    type Output = Rational;
    fn mul(self, o: Rational) -> Rational {
        self.checked_mul(o).unwrap_or_else(|| overflowed())
    }
}

impl Div for Rational {
    type Output = Rational;
    fn div(self, o: Rational) -> Rational {
        assert!(!o.is_zero(), "division of a rational by zero");
        self.checked_div(o).unwrap_or_else(|| overflowed())
    }
}

impl Neg for Rational {
    type Output = Rational;
    fn neg(self) -> Rational {
        self.checked_neg().unwrap_or_else(|| overflowed())
    }
}

impl PartialOrd for Rational {
    fn partial_cmp(&self, o: &Rational) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Rational {
    fn cmp(&self, o: &Rational) -> Ordering {
        match self.checked_cmp(*o) {
            Some(order) => order,
            None => exact_cmp(self.num, self.den, o.num, o.den),
        }
    }
}

impl fmt::Display for Rational {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}

impl fmt::Debug for Rational {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_and_order() {
        let h = Rational::new(1, 2);
        let t = Rational::new(2, -6);
        assert_eq!(t, Rational::new(-1, 3));
        assert_eq!(h + t, Rational::new(1, 6));
        assert_eq!(h * t, Rational::new(-1, 6));
        assert_eq!(h / t, Rational::new(-3, 2));
        assert!(t < h);
        assert_eq!(Rational::new(7, 2).ceil(), 4);
        assert_eq!(Rational::new(-7, 2).ceil(), -3);
        assert_eq!(Rational::new(-7, 2).floor(), -4);
        assert_eq!(format!("{}", Rational::new(6, 4)), "3/2");
    }

    #[test]
    fn operations_at_the_edges_of_i128_never_wrap() {
        let big = Rational::int(i128::MAX);
        let tiny = Rational::new(1, i128::MAX);
        assert_eq!(big.checked_add(Rational::ONE), None);
        assert_eq!(big.checked_mul(Rational::int(2)), None);
        assert_eq!(tiny.checked_mul(tiny), None);
        assert_eq!(Rational::checked_new(i128::MIN, 1), None);
        assert_eq!(Rational::new(3, i128::MAX - 1).checked_add(tiny), None);
        assert!(std::panic::catch_unwind(|| big + Rational::ONE).is_err());
        assert!(std::panic::catch_unwind(|| tiny * tiny).is_err());
        // Comparison is exact where the cross products overflow.
        let a = Rational::new(i128::MAX - 2, i128::MAX - 1);
        let b = Rational::new(i128::MAX - 1, i128::MAX);
        assert_eq!(a.cmp(&b), Ordering::Less);
        assert_eq!(b.cmp(&a), Ordering::Greater);
        assert!(b < Rational::ONE);
        assert!(-b < -a && Rational::new(-1, i128::MAX) < tiny);
        assert_eq!(big.cmp(&big), Ordering::Equal);
    }

    proptest::proptest! {
        /// Comparison agrees with exact integer arithmetic, at any size.
        #[test]
        fn comparison_is_exact(
            a in proptest::num::i64::ANY, b in 1i64..,
            c in proptest::num::i64::ANY, d in 1i64..,
            shift in 0u32..63,
        ) {
            let scale = |x: i64| i128::from(x) << shift;
            let (x, y) = (Rational::new(scale(a), i128::from(b)), Rational::new(scale(c), i128::from(d)));
            let exact = (scale(a) as f64 / b as f64).partial_cmp(&(scale(c) as f64 / d as f64));
            let cross = (i128::from(a) * i128::from(d)).cmp(&(i128::from(c) * i128::from(b)));
            proptest::prop_assert_eq!(x.cmp(&y), cross);
            if let Some(o) = exact.filter(|o| *o != Ordering::Equal) {
                proptest::prop_assert_eq!(x.cmp(&y), o);
            }
            let (u, v) = (Rational::new(i128::from(b), scale(a).max(1)), Rational::new(i128::from(d), scale(c).max(1)));
            proptest::prop_assert_eq!(u.cmp(&v), exact_cmp(u.num, u.den, v.num, v.den));
        }
    }

    #[test]
    fn at_least_never_rounds_down() {
        assert_eq!(
            Rational::at_least(0.4999999997, 1e-9, 1e-6, 1000),
            Some(Rational::new(1, 2))
        );
        assert_eq!(
            Rational::at_least(177.00000001, 1e-7, 1e-6, 1000),
            Some(Rational::int(177))
        );
        for x in [0.1, 1.0 / 3.0, 2.5182818, 1e-9, 12345.678] {
            let r = Rational::at_least(x, 1e-9, 1e-6, 1000).unwrap();
            assert!(r.to_f64() >= x - 1e-9, "{x} -> {r}");
        }
        assert_eq!(Rational::at_least(f64::NAN, 1e-9, 1e-6, 10), None);
        assert_eq!(
            Rational::at_least(23.0 / 4096.0 + 1e-12, 1e-11, 1e-7, 1 << 20),
            Some(Rational::new(23, 4096))
        );
        assert_eq!(
            Rational::at_least(-2.0 / 3.0 + 1e-12, 1e-11, 1e-7, 1 << 20),
            Some(Rational::new(-2, 3))
        );
        assert_eq!(
            Rational::at_least(-1e-12, 1e-11, 1e-7, 1 << 20),
            Some(Rational::ZERO)
        );
        // Rounding down only within `below`: 31/4096, not the simpler
        // 23/3039 just under it.
        assert_eq!(
            Rational::at_least(31.0 / 4096.0, 1e-11, 1e-7, 1 << 20),
            Some(Rational::new(31, 4096))
        );
        // Nothing simple nearby: rounded up.
        let r = Rational::at_least(std::f64::consts::PI, 1e-15, 1e-15, 100).unwrap();
        assert_eq!(r, Rational::new(315, 100));
    }
}
