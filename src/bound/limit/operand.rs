//! The operands of a named minimum or maximum, as `absint::symbols`
//! prints them: a constant, an input, a launch dimension, or a linear
//! expression over those with C's integer operators `+`, `-`, `*`, `/`,
//! `<<` and `>>` (`n/4`, `n+3`, `2*n`, `n*w`, `(n/4)+1`, `n<<2`), a
//! nested operation in parentheses.
//!
//! An operand is evaluated exactly, in 128-bit integers, with C's
//! division (toward zero) and shifts as multiplying by or dividing (down)
//! by a power of two, as they do where C defines them (without overflow);
//! `None` where an input is missing or not an integer, a divisor is zero,
//! a shift count is negative or past 63, or the arithmetic overflows.

use std::collections::BTreeMap;

/// The top-level operands of `list` (`n/4,10`), split at the commas
/// outside parentheses; `None` when its parentheses do not balance or an
/// operand is empty.
pub(super) fn split(list: &str) -> Option<Vec<&str>> {
    let mut ops = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, ch) in list.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth = depth.checked_sub(1)?,
            ',' if depth == 0 => {
                ops.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    ops.push(&list[start..]);
    (depth == 0 && ops.iter().all(|o| well_formed(o))).then_some(ops)
}

/// Whether `op` is a whole operand: it parses to its end.
fn well_formed(op: &str) -> bool {
    let mut p = Parser { s: op, at: None };
    p.shift().is_some() && p.s.is_empty()
}

/// Whether `op` is a single name or constant, with no operator.
pub(super) fn is_plain(op: &str) -> bool {
    !op.is_empty()
        && op
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
}

/// The names (inputs, launch dimensions) `op` reads, in order, each once.
pub(super) fn names(op: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let mut rest = op;
    while let Some(i) = rest.find(|c: char| c.is_alphanumeric() || c == '_') {
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(tail.len());
        let word = &tail[..end];
        if !word.starts_with(|c: char| c.is_ascii_digit()) && !out.contains(&word) {
            out.push(word);
        }
        rest = &tail[end..];
    }
    out
}

/// The value of `op` at the inputs `at` (see the module's documentation).
pub(super) fn value(op: &str, at: &BTreeMap<String, f64>) -> Option<i128> {
    let mut p = Parser {
        s: op,
        at: Some(at),
    };
    let v = p.shift()?;
    p.s.is_empty().then_some(v?)
}

/// A recursive-descent reader of an operand; without inputs (`at` is
/// `None`) it only checks the form, every value `None`.
struct Parser<'a> {
    s: &'a str,
    at: Option<&'a BTreeMap<String, f64>>,
}

/// What a parse step gives: `None` for text of another form, else the
/// value (itself `None` when it cannot be computed).
type Step = Option<Option<i128>>;

impl Parser<'_> {
    /// Whether the text goes on with `t`, then past it.
    fn eat(&mut self, t: &str) -> bool {
        match self.s.strip_prefix(t) {
            Some(rest) => {
                self.s = rest;
                true
            }
            None => false,
        }
    }

    /// `sum (('<<' | '>>') sum)*`: `x << k` is `x·2^k`, `x >> k` is
    /// `⌊x/2^k⌋`.
    fn shift(&mut self) -> Step {
        let mut v = self.sum()?;
        loop {
            let left = if self.eat("<<") {
                true
            } else if self.eat(">>") {
                false
            } else {
                return Some(v);
            };
            let r = self.sum()?;
            v = v.zip(r).and_then(|(a, k)| {
                let k = u32::try_from(k).ok().filter(|&k| k < 64)?;
                if left {
                    a.checked_mul(1i128 << k)
                } else {
                    Some(a >> k)
                }
            });
        }
    }

    /// `product (('+' | '-') product)*`
    fn sum(&mut self) -> Step {
        let mut v = self.product()?;
        loop {
            let add = if self.eat("+") {
                true
            } else if self.eat("-") {
                false
            } else {
                return Some(v);
            };
            let r = self.product()?;
            v = v.zip(r).and_then(|(a, b)| {
                if add {
                    a.checked_add(b)
                } else {
                    a.checked_sub(b)
                }
            });
        }
    }

    /// `leaf (('*' | '/') leaf)*`, `/` toward zero as in C.
    fn product(&mut self) -> Step {
        let mut v = self.leaf()?;
        loop {
            let mul = if self.eat("*") {
                true
            } else if self.eat("/") {
                false
            } else {
                return Some(v);
            };
            let r = self.leaf()?;
            v = v.zip(r).and_then(|(a, b)| {
                if mul {
                    a.checked_mul(b)
                } else {
                    a.checked_div(b)
                }
            });
        }
    }

    /// `'(' sum ')'`, `'-' leaf`, an integer or a name.
    fn leaf(&mut self) -> Step {
        if self.eat("(") {
            let v = self.shift()?;
            return self.eat(")").then_some(v);
        }
        if self.eat("-") {
            return Some(self.leaf()?.and_then(i128::checked_neg));
        }
        let end = self
            .s
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(self.s.len());
        let (word, rest) = self.s.split_at(end);
        if word.is_empty() {
            return None;
        }
        self.s = rest;
        if word.starts_with(|c: char| c.is_ascii_digit()) {
            return Some(Some(word.parse::<i128>().ok()?));
        }
        let Some(at) = self.at else {
            return Some(None);
        };
        Some(at.get(word).copied().and_then(integer))
    }
}

/// `x` as an integer, where it is one (and well inside `i128`).
fn integer(x: f64) -> Option<i128> {
    (x.is_finite() && x.fract() == 0.0 && x.abs() < 1e30).then_some(x as i128)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_split_at_top_level_commas_and_evaluate_as_c() {
        assert_eq!(split("n/4,10"), Some(vec!["n/4", "10"]));
        assert_eq!(split("(n/4)+1,m-1"), Some(vec!["(n/4)+1", "m-1"]));
        assert_eq!(split("n,(m"), None);
        assert_eq!(split("n,"), None);
        assert_eq!(split("n+,3"), None);
        let at: BTreeMap<String, f64> = [("n".to_string(), -7.0), ("m".to_string(), 30.0)].into();
        // C's division rounds toward zero: -7/4 is -1.
        assert_eq!(value("n/4", &at), Some(-1));
        assert_eq!(value("(n/4)+1", &at), Some(0));
        assert_eq!(value("2*n", &at), Some(-14));
        assert_eq!(value("m-1-n", &at), Some(36));
        assert_eq!(value("-n", &at), Some(7));
        assert_eq!(value("n/0", &at), None);
        // Shifts as C computes them where it defines them: `>>` rounds
        // down (arithmetic), `<<` multiplies; and bind looser than `+`.
        assert_eq!(value("n>>1", &at), Some(-4));
        assert_eq!(value("m>>2", &at), Some(7));
        assert_eq!(value("n<<2", &at), Some(-28));
        assert_eq!(value("m<<1+1", &at), Some(120));
        assert_eq!(value("(m<<1)+1", &at), Some(61));
        assert_eq!(value("n*m", &at), Some(-210));
        assert_eq!(value("m<<64", &at), None);
        assert_eq!(value("m>>-1", &at), None);
        assert_eq!(split("n<<2,8"), Some(vec!["n<<2", "8"]));
        assert_eq!(split("n<2,8"), None);
        assert_eq!(value("k+1", &at), None);
        assert_eq!(names("(n/4)+blockDim.x*2"), ["n", "blockDim.x"]);
        assert!(is_plain("blockDim.x") && !is_plain("n+3"));
    }
}
