//! Ranking versions that run different numbers of warps by their total
//! work. A rewrite that edits the launch ([`Reshape`]) may run more warps
//! than the original: one warp per row launches 32 times the blocks, so a
//! bound per warp 15 times lower is still twice the work. Its bound per
//! warp is compared after multiplying it by its warps over the other
//! version's ([`Work::per_warp_of`]). Both launches are counted at the
//! same sizes, and a reshape multiplies the warps of every launch by the
//! same factor ([`Reshape::warps`]), so the comparison of totals is exact
//! even where the number of warps is symbolic: `k·W` warps against `W`,
//! whatever `W` is. Versions that run as many warps compare as before.

use std::borrow::Cow;

use copper::bound::Outcome;
use copper::cuda::relaunch::Reshape;
use copper::poly::Rational;

use super::{compare, fmt_num, Comparison, Pair, Ranker};

/// A version's bound per warp, and the warps it runs as a multiple of the
/// original launch's.
#[derive(Clone, Copy, Debug)]
pub struct Work<'a> {
    /// Its bound per warp.
    pub per_warp: &'a Outcome,
    /// How many times the original's warps it runs.
    pub warps: u64,
}

impl<'a> Work<'a> {
    /// The work of a version bounded by `per_warp`, whose launch is the
    /// original's reshaped as `reshape` says (if at all).
    pub fn new(per_warp: &'a Outcome, reshape: Option<Reshape>) -> Work<'a> {
        Work {
            per_warp,
            warps: reshape.map_or(1, Reshape::warps),
        }
    }

    /// Its bound per warp of `of`'s launch: its bound per warp times its
    /// warps over `of`'s (the bound itself when they run as many warps, or
    /// when it has none); `None` when that overflows.
    pub fn per_warp_of(&self, of: &Work) -> Option<Cow<'a, Outcome>> {
        match self.per_warp {
            Outcome::Bound(b) if self.warps != of.warps => {
                (b.scaled(self.factor(of))).map(|b| Cow::Owned(Outcome::Bound(b)))
            }
            _ => Some(Cow::Borrowed(self.per_warp)),
        }
    }

    /// Its warps over `of`'s.
    fn factor(&self, of: &Work) -> Rational {
        Rational::new(i128::from(self.warps), i128::from(of.warps.max(1)))
    }
}

/// Compares a candidate's work `new` with the incumbent's `old` by total
/// work: as [`compare`] when they run as many warps; otherwise the
/// candidate's bound per warp of the incumbent's launch
/// ([`Work::per_warp_of`]) against the incumbent's, the reason saying the
/// factor ("…; per warp 2153 → 143.47, ×32 warps", or "it runs 32× the
/// warps: at stations=12, 143.47 × 32 = 4591.04 > 2153 per original
/// warp").
pub fn compare_work(ranker: &Ranker, new: Work, old: Work) -> Comparison {
    if new.warps == old.warps {
        return compare(ranker, new.per_warp, old.per_warp);
    }
    let Some(total) = new.per_warp_of(&old) else {
        return Comparison::NotBetter("the bounds overflow 128-bit rational arithmetic".into());
    };
    let factor = new.factor(&old);
    let k = factor.to_string();
    let at = per_warp_at_sizes(ranker, new.per_warp, old.per_warp);
    match (compare(ranker, &total, old.per_warp), at) {
        (Comparison::Better(why), Some((_, a, b))) => Comparison::Better(format!(
            "by total work, {why}; per warp {} → {}, ×{k} warps",
            fmt_num(b),
            fmt_num(a)
        )),
        (Comparison::Better(why), None) => {
            Comparison::Better(format!("by total work, {why}; ×{k} warps"))
        }
        (Comparison::NotBetter(_), Some((sizes, a, b))) if a * factor.to_f64() > b => {
            let at = match sizes.is_empty() {
                true => String::new(),
                false => format!("at {sizes}, "),
            };
            Comparison::NotBetter(format!(
                "it runs {k}× the warps: {at}{} × {k} = {} > {} per original warp",
                fmt_num(a),
                fmt_num(a * factor.to_f64()),
                fmt_num(b)
            ))
        }
        (Comparison::NotBetter(why), _) => {
            Comparison::NotBetter(format!("it runs {k}× the warps, and by total work {why}"))
        }
    }
}

/// What the cost model cannot see that a candidate does better: a hazard
/// it removes ([`copper_transforms::Candidate::repairs`]) or contention
/// it avoids ([`copper_transforms::Candidate::contention`]), either of
/// which is worth a constant per warp more.
#[derive(Clone, Copy, Debug, Default)]
pub struct Excuse<'a> {
    /// The hazard removed, one sentence.
    pub repairs: Option<&'a str>,
    /// The contention avoided, one sentence.
    pub contention: Option<&'a str>,
}

/// [`compare_work`], except that a candidate with an [`Excuse`] whose
/// bound is at most a constant per warp above the incumbent's (within the
/// ranking's epsilon at every higher degree) is better, with why.
pub fn compare_excused(ranker: &Ranker, new: Work, old: Work, excuse: Excuse) -> Comparison {
    let comparison = compare_work(ranker, new, old);
    let Some(why) = excuse.repairs.or(excuse.contention) else {
        return comparison;
    };
    if comparison.is_better() {
        return comparison;
    }
    let no_worse = !compare_work(ranker, old, new).is_better();
    let a_constant_more = new.per_warp_of(&old).is_some_and(|per_warp| {
        crate::rank::at_most_a_constant_more(&per_warp, old.per_warp, ranker.epsilon())
    });
    match (no_worse, a_constant_more) {
        (true, _) => Comparison::Better(format!("the same bound, and {why}")),
        (false, true) => Comparison::Better(format!(
            "{}, at most a constant per warp, and {why}",
            comparison.reason()
        )),
        (false, false) => comparison,
    }
}

/// The bounds `new` and `old` per warp at the sizes the kernel is used at
/// (those they depend on, in words), where the ranking has them and
/// they give every variable of both.
fn per_warp_at_sizes(ranker: &Ranker, new: &Outcome, old: &Outcome) -> Option<(String, f64, f64)> {
    let (Ranker::At(s), Outcome::Bound(n), Outcome::Bound(o)) = (ranker, new, old) else {
        return None;
    };
    s.values_of(&Pair::of(n, o)?)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::rank::{sized, DEFAULT_EPSILON};
    use copper::bound::{BoundExpr, Term};
    use copper::poly::Poly;

    /// `c + k·stations`.
    fn bound(c: Rational, k: Rational) -> Outcome {
        let term = Term {
            coef: k,
            factors: vec![Poly::var("stations")],
        };
        Outcome::Bound(BoundExpr::new(c, vec![term]).unwrap())
    }

    fn at(stations: f64) -> Ranker {
        Ranker::At(sized::InUse {
            values: BTreeMap::from([("stations".to_string(), stations)]),
            from: "the launch at line 36".into(),
            given: false,
            epsilon: DEFAULT_EPSILON,
        })
    }

    /// The original's 41 + 176·s against one warp per row's
    /// 128.6 + 1.25·s on 32 times the warps.
    fn votes() -> (Outcome, Outcome) {
        let original = bound(Rational::int(41), Rational::int(176));
        let rows = bound(Rational::new(643, 5), Rational::new(5, 4));
        (original, rows)
    }

    #[test]
    fn the_same_warps_compare_per_warp() {
        let (original, rows) = votes();
        let r = at(12.0);
        let same = compare_work(
            &r,
            Work::new(&rows, Some(Reshape::SwapXy)),
            Work::new(&original, None),
        );
        assert_eq!(same, compare(&r, &rows, &original));
        assert!(same.is_better());
    }

    #[test]
    fn thirty_two_times_the_warps_lose_on_short_rows_and_win_on_long_ones() {
        let (original, rows) = votes();
        let (new, old) = (
            Work::new(&rows, Some(Reshape::ScaleGridX(32))),
            Work::new(&original, None),
        );
        // 41 + 176·12 = 2153 against 32·(128.6 + 15) = 4595.2.
        assert_eq!(
            compare_work(&at(12.0), new, old),
            Comparison::NotBetter(
                "it runs 32× the warps: at stations=12, 143.60 × 32 = 4595.20 > 2153 per original warp"
                    .into()
            )
        );
        let long = compare_work(&at(2000.0), new, old);
        assert_eq!(
            long,
            Comparison::Better(
                "by total work, at stations=2000: 352041 → 84115.20 (the stations term: 176 → 40); per warp 352041 → 2628.60, ×32 warps"
                    .into()
            )
        );
        // Without sizes: the heuristic on the totals (176 → 40 per
        // original warp), the factor said.
        let r = Ranker::Asymptotic {
            epsilon: DEFAULT_EPSILON,
        };
        assert_eq!(
            compare_work(&r, new, old),
            Comparison::Better("by total work, the stations term: 176 → 40; ×32 warps".into())
        );
        // Per warp of the reshaped launch, the original does 32 times less.
        assert_eq!(
            compare_work(&at(2000.0), old, new),
            Comparison::NotBetter(
                "it runs 1/32× the warps: at stations=2000, 352041 × 1/32 = 11001.28 > 2628.60 per original warp"
                    .into()
            )
        );
    }

    #[test]
    fn a_bound_per_warp_of_another_launch_is_scaled_exactly() {
        let (original, rows) = votes();
        let (new, old) = (
            Work::new(&rows, Some(Reshape::ScaleGridX(32))),
            Work::new(&original, None),
        );
        let Some(Cow::Owned(Outcome::Bound(total))) = new.per_warp_of(&old) else {
            panic!("not scaled");
        };
        assert_eq!(total.to_string(), "4115.2 + 40·max(0, stations)");
        assert!(matches!(old.per_warp_of(&old), Some(Cow::Borrowed(_))));
    }
}
