//! Congruences `x ≡ r (mod m)`: what the analysis knows about the
//! alignment of a uniform value (`blockIdx.x * 256` is a multiple of 256,
//! so an array access at `blockIdx.x * 256 + threadIdx.x` starts a warp on
//! a sector boundary).

/// `x ≡ r (mod m)`; `m = 0` means `x = r` exactly, `m = 1` means nothing
/// is known. Normalized: `0 ≤ r < m` when `m ≥ 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cong {
    m: i64,
    r: i64,
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.min(i64::MAX as u64) as i64
}

impl Cong {
    /// Nothing known.
    pub const ANY: Cong = Cong { m: 1, r: 0 };

    /// Exactly `c`.
    pub fn exact(c: i64) -> Cong {
        Cong { m: 0, r: c }
    }

    /// `x ≡ r (mod m)`, normalized (`m ≤ 0` or overflow gives nothing).
    pub fn new(m: i64, r: i64) -> Cong {
        if m <= 0 {
            return Cong::ANY;
        }
        Cong {
            m,
            r: r.rem_euclid(m),
        }
    }

    fn from_parts(m: Option<i64>, r: Option<i64>) -> Cong {
        match (m, r) {
            (Some(0), Some(r)) => Cong::exact(r),
            (Some(m), Some(r)) if m > 0 => Cong::new(m, r),
            _ => Cong::ANY,
        }
    }

    /// The value, when known exactly.
    pub fn value(self) -> Option<i64> {
        (self.m == 0).then_some(self.r)
    }

    /// The modulus (`0`: exact).
    pub fn modulus(self) -> i64 {
        self.m
    }

    /// The residue.
    pub fn residue(self) -> i64 {
        self.r
    }

    /// Whether `x` may equal `v`.
    pub fn admits(self, v: i64) -> bool {
        match self.m {
            0 => v == self.r,
            m => (v - self.r).rem_euclid(m) == 0,
        }
    }

    /// Whether `x` may be `v` modulo `p`: some value of the congruence is
    /// `≡ v (mod p)`.
    pub fn admits_mod(self, v: i64, p: i64) -> bool {
        let g = gcd(self.m, p);
        g == 0 || (v - self.r).rem_euclid(g) == 0
    }

    /// The least congruence holding for both.
    pub fn join(self, o: Cong) -> Cong {
        if self == o {
            return self;
        }
        let d = o.r.checked_sub(self.r).map(i64::unsigned_abs);
        match d {
            Some(d) if d <= i64::MAX as u64 => {
                let m = gcd(gcd(self.m, o.m), d as i64);
                if m == 0 {
                    self
                } else {
                    Cong::new(m, self.r)
                }
            }
            _ => Cong::ANY,
        }
    }

    /// `k · x`.
    pub fn scale(self, k: i64) -> Cong {
        if k == 0 {
            return Cong::exact(0);
        }
        Cong::from_parts(self.m.checked_mul(k.abs()), self.r.checked_mul(k))
    }
}

impl std::ops::Add for Cong {
    type Output = Cong;

    /// `x + y`.
    fn add(self, o: Cong) -> Cong {
        Cong::from_parts(Some(gcd(self.m, o.m)), self.r.checked_add(o.r))
    }
}

impl std::ops::Neg for Cong {
    type Output = Cong;

    /// `−x`.
    fn neg(self) -> Cong {
        Cong::from_parts(Some(self.m), self.r.checked_neg())
    }
}

impl std::ops::Mul for Cong {
    type Output = Cong;

    /// `x · y`.
    fn mul(self, o: Cong) -> Cong {
        match (self.value(), o.value()) {
            (Some(a), Some(b)) => a.checked_mul(b).map_or(Cong::ANY, Cong::exact),
            (Some(k), None) => o.scale(k),
            (None, Some(k)) => self.scale(k),
            (None, None) => {
                let m = self
                    .m
                    .checked_mul(o.m)
                    .zip(self.m.checked_mul(o.r))
                    .zip(o.m.checked_mul(self.r))
                    .map(|((a, b), c)| gcd(gcd(a, b), c));
                Cong::from_parts(m, self.r.checked_mul(o.r))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic() {
        let b = Cong::ANY.scale(256); // blockIdx.x * 256
        assert_eq!(b, Cong::new(256, 0));
        assert!(b.admits(512) && !b.admits(4));
        assert_eq!(b + Cong::exact(3), Cong::new(256, 3));
        assert_eq!(b + Cong::ANY, Cong::ANY);
        assert_eq!(Cong::exact(4).join(Cong::exact(12)), Cong::new(8, 4));
        assert_eq!(Cong::new(8, 4).join(Cong::exact(6)), Cong::new(2, 0));
        assert_eq!(Cong::new(6, 2) * Cong::new(4, 1), Cong::new(2, 0));
        assert_eq!(Cong::exact(5) * Cong::new(4, 1), Cong::new(20, 5));
        assert_eq!(Cong::exact(i64::MAX) + Cong::exact(1), Cong::ANY);
        assert_eq!(-Cong::new(8, 4), Cong::new(8, 4));
        assert!(Cong::new(64, 0).admits_mod(0, 8) && !Cong::new(64, 4).admits_mod(0, 8));
        assert!(Cong::new(3, 1).admits_mod(0, 8));
        assert!(Cong::exact(9).admits_mod(1, 8) && !Cong::exact(9).admits_mod(0, 8));
    }
}
