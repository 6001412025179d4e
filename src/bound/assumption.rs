//! What a bound assumes of a kernel's inputs and launch: a range of one
//! integer parameter (`0 ≤ n`, `n ≤ 2^63 − 1`) or a largest grid
//! (`gridDim.x ≤ 2^21`), made where a loop counter could otherwise wrap
//! around (see `wrap`), and reported with every bound found under it.

use std::collections::BTreeMap;
use std::fmt;

use crate::absint::symbols::Symbols;
use crate::ir::VarId;

/// What an assumption is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Subject {
    /// An integer parameter of the kernel.
    Param(VarId),
    /// `gridDim` along a dimension (0 is `x`).
    GridDim(u8),
}

/// An [`InputAssumption`] as reports write it (the `input_assumptions`
/// of `copper analyze` and `copper optimize`'s JSON).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct AssumptionRecord {
    /// The parameter's name, or `gridDim.x`.
    pub param: String,
    /// Whether it is about the launch (the grid) rather than a parameter.
    pub launch: bool,
    /// The least value assumed, if any (and if it fits in 64 bits).
    pub at_least: Option<i64>,
    /// The largest value assumed, if any (and if it fits in 64 bits).
    pub at_most: Option<i64>,
    /// The assumption in words (`n ≤ 2^31`).
    pub text: String,
    /// Why it is needed, in words.
    pub why: String,
}

/// A range assumed of one integer parameter, or of the grid along one
/// dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputAssumption {
    /// What it is about, as named in a bound point: the parameter's name,
    /// or `gridDim.x`.
    pub param: String,
    /// What it is about.
    pub subject: Subject,
    /// The least value assumed, if any.
    pub min: Option<i128>,
    /// The largest value assumed, if any.
    pub max: Option<i128>,
    /// The counters (listed) that could wrap around without it.
    pub counters: String,
    /// For the grid: what a larger one does to the counters.
    pub cause: GridCause,
}

/// What a grid larger than an assumption allows does to a loop counter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GridCause {
    /// Its stride (a product of launch dimensions) wraps around.
    #[default]
    StrideWraps,
    /// Its stride fits, but carries the counter past its type's maximum
    /// (`i + stride` with `i < n`).
    PastMax,
    /// Its start (`blockIdx.x * blockDim.x + threadIdx.x`,
    /// `grid.thread_rank()`) does not fit the counter's type.
    StartWraps,
    /// Either, for different counters (assumptions merged).
    Either,
}

impl InputAssumption {
    /// Whether the value `value` satisfies the assumption.
    pub fn holds(&self, value: f64) -> bool {
        self.min.is_none_or(|m| value >= m as f64) && self.max.is_none_or(|m| value <= m as f64)
    }

    /// Whether every assumption in `all` holds at `at` (values by name, the
    /// launch's as `gridDim.x`); one without a value there is taken to
    /// hold.
    pub fn all_hold(all: &[InputAssumption], at: &BTreeMap<String, f64>) -> bool {
        all.iter()
            .all(|a| at.get(&a.param).is_none_or(|&v| a.holds(v)))
    }

    /// Why it is made, for a report: "a larger `n` lets the counter `i`
    /// wrap around".
    pub fn why(&self) -> String {
        let what = match (self.subject, self.min, self.max) {
            (Subject::GridDim(_), ..) if self.cause == GridCause::PastMax => {
                return format!(
                    "a larger grid's stride carries the counter {} past its type's maximum",
                    self.counters
                )
            }
            (Subject::GridDim(_), ..) if self.cause == GridCause::StartWraps => {
                return format!(
                    "a larger grid's first index does not fit the counter {}",
                    self.counters
                )
            }
            (Subject::GridDim(_), ..) if self.cause == GridCause::Either => {
                return format!(
                    "a larger grid lets the counters {}, their starts or their strides wrap around",
                    self.counters
                )
            }
            (Subject::GridDim(_), ..) => "a larger grid lets the stride of".to_string(),
            (Subject::Param(_), Some(_), None) => {
                format!("a negative `{}`, converted to unsigned, lets", self.param)
            }
            (Subject::Param(_), Some(_), Some(_)) => {
                format!("a negative or larger `{}` lets", self.param)
            }
            (Subject::Param(_), None, _) => format!("a larger `{}` lets", self.param),
        };
        format!("{what} the counter {} wrap around", self.counters)
    }

    /// The line a report prints for it.
    pub fn report_line(&self) -> String {
        format!(
            "assuming {self} ({}): the bounds hold only for such inputs",
            self.why()
        )
    }

    /// How reports write it (as JSON).
    pub fn record(&self) -> AssumptionRecord {
        AssumptionRecord {
            param: self.param.clone(),
            launch: matches!(self.subject, Subject::GridDim(_)),
            at_least: self.min.and_then(|m| i64::try_from(m).ok()),
            at_most: self.max.and_then(|m| i64::try_from(m).ok()),
            text: self.to_string(),
            why: self.why(),
        }
    }

    /// Makes the analysis of `syms` assume it.
    pub(super) fn apply(&self, syms: &mut Symbols) {
        match self.subject {
            Subject::Param(v) => syms.assume_range(v, self.min, self.max),
            Subject::GridDim(d) => {
                syms.assume_grid_at_most(d, self.max.unwrap_or(i32::MAX as i128))
            }
        }
    }
}

/// `all` with the assumptions about one subject made one: the tightest
/// range of them all, with their counters listed together; parameters
/// first, in the order of their first appearance, then the grid.
pub(super) fn merged(all: Vec<InputAssumption>) -> Vec<InputAssumption> {
    let mut out: Vec<InputAssumption> = Vec::new();
    for a in all {
        let Some(same) = out.iter_mut().find(|o| o.subject == a.subject) else {
            out.push(a);
            continue;
        };
        same.min = same.min.max(a.min);
        same.max = match (same.max, a.max) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        if same.cause != a.cause {
            same.cause = GridCause::Either;
        }
        if !same.counters.split(", ").any(|c| c == a.counters) {
            same.counters = format!("{}, {}", same.counters, a.counters);
        }
    }
    out.sort_by_key(|a| matches!(a.subject, Subject::GridDim(_)));
    out
}

/// A large value as a power of two where it is one, one less, or one
/// less another power of two: `2^63 − 1`, `2^21`, `2^31 − 2^10`.
fn power_text(m: i128) -> String {
    let low = m & m.wrapping_neg();
    if m > 1024 && m.count_ones() == 1 {
        format!("2^{}", m.trailing_zeros())
    } else if m > 1 && (m + 1).count_ones() == 1 {
        format!("2^{} − 1", (m + 1).trailing_zeros())
    } else if m > 1024 && low > 1 && (m + low).count_ones() == 1 {
        let top = (m + low).trailing_zeros();
        format!("2^{top} − 2^{}", low.trailing_zeros())
    } else {
        m.to_string()
    }
}

impl fmt::Display for InputAssumption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(m) = self.min {
            write!(f, "{} ≤ ", power_text(m))?;
        }
        write!(f, "{}", self.param)?;
        if let Some(m) = self.max {
            write!(f, " ≤ {}", power_text(m))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assumption(min: Option<i128>, max: Option<i128>) -> InputAssumption {
        InputAssumption {
            param: "n".into(),
            subject: Subject::Param(0),
            min,
            max,
            counters: "`i`".into(),
            cause: GridCause::default(),
        }
    }

    #[test]
    fn assumptions_print_as_powers_of_two_and_check_values() {
        let at_most = |m: i128| assumption(None, Some(m));
        assert_eq!(at_most(i64::MAX as i128).to_string(), "n ≤ 2^63 − 1");
        assert_eq!(at_most(i32::MAX as i128).to_string(), "n ≤ 2^31 − 1");
        assert_eq!(at_most(1000).to_string(), "n ≤ 1000");
        assert_eq!(at_most((1 << 31) - 1024).to_string(), "n ≤ 2^31 − 2^10");
        assert_eq!(at_most((1 << 31) - 1000).to_string(), "n ≤ 2147482648");
        assert_eq!(assumption(Some(0), None).to_string(), "0 ≤ n");
        assert_eq!(
            assumption(Some(0), Some(i32::MAX as i128)).to_string(),
            "0 ≤ n ≤ 2^31 − 1"
        );
        let a = at_most(i32::MAX as i128);
        assert!(a.holds(2147483647.0) && !a.holds(2147483648.0));
        let nonneg = assumption(Some(0), None);
        assert!(nonneg.holds(0.0) && nonneg.holds(1e12) && !nonneg.holds(-1.0));
        let at: BTreeMap<String, f64> = [("n".to_string(), 4e9)].into();
        assert!(!InputAssumption::all_hold(std::slice::from_ref(&a), &at));
        assert!(InputAssumption::all_hold(
            std::slice::from_ref(&nonneg),
            &at
        ));
        assert!(InputAssumption::all_hold(&[a], &BTreeMap::new()));
        assert_eq!(
            at_most(5).why(),
            "a larger `n` lets the counter `i` wrap around"
        );
        assert_eq!(
            nonneg.why(),
            "a negative `n`, converted to unsigned, lets the counter `i` wrap around"
        );
        let record = nonneg.record();
        assert_eq!(record.at_least, Some(0));
        assert_eq!(record.at_most, None);
        assert!(!record.launch);
    }

    #[test]
    fn assumptions_about_one_subject_merge_into_the_tightest() {
        let grid = |max: i128, counters: &str| InputAssumption {
            param: "gridDim.x".into(),
            subject: Subject::GridDim(0),
            min: None,
            max: Some(max),
            counters: counters.into(),
            cause: GridCause::default(),
        };
        let all = vec![
            grid(1 << 21, "`i`"),
            assumption(Some(0), None),
            grid(1 << 20, "`j`"),
            assumption(None, Some(1 << 30)),
            grid(1 << 22, "`i`"),
        ];
        let m = merged(all);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].to_string(), "0 ≤ n ≤ 2^30");
        assert_eq!(m[1].to_string(), "gridDim.x ≤ 2^20");
        assert_eq!(m[1].counters, "`i`, `j`");
    }

    #[test]
    fn grid_assumptions_name_the_launch_dimension() {
        let a = InputAssumption {
            param: "gridDim.x".into(),
            subject: Subject::GridDim(0),
            min: None,
            max: Some(1 << 21),
            counters: "`i`".into(),
            cause: GridCause::default(),
        };
        assert_eq!(a.to_string(), "gridDim.x ≤ 2^21");
        assert_eq!(
            a.why(),
            "a larger grid lets the stride of the counter `i` wrap around"
        );
        let at: BTreeMap<String, f64> = [("gridDim.x".to_string(), 4096.0)].into();
        assert!(InputAssumption::all_hold(std::slice::from_ref(&a), &at));
        let at: BTreeMap<String, f64> = [("gridDim.x".to_string(), 3e6)].into();
        assert!(!InputAssumption::all_hold(std::slice::from_ref(&a), &at));
        assert!(a.record().launch);
    }
}
