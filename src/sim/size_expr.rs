//! Array lengths written as integer expressions over a launch's scalar
//! arguments (`len = "w * (h + 1)"` in a parameter file): `+ - * / %`,
//! parentheses, unary minus, integer literals and argument names (dotted
//! for a struct's field or a texture's extent: `tex.width`), with C's
//! precedence and division toward zero.

use std::collections::BTreeMap;

/// Why a length expression has no value.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SizeError {
    /// A character outside the expression language.
    #[error("unexpected `{ch}` in `{expr}` (lengths use + - * / % and parentheses)")]
    BadChar {
        /// The character.
        ch: char,
        /// The expression.
        expr: String,
    },
    /// Nothing to evaluate.
    #[error("the length expression is empty")]
    Empty,
    /// A token left after a whole expression.
    #[error("unexpected `{token}` in `{expr}`")]
    Trailing {
        /// The token.
        token: String,
        /// The expression.
        expr: String,
    },
    /// A token where an operand should be.
    #[error("unexpected `{0}` in a length")]
    Unexpected(String),
    /// The expression stops before an operand.
    #[error("the length expression ends too early")]
    EndsEarly,
    /// A `(` without its `)`.
    #[error("missing `)` in a length")]
    MissingParen,
    /// A literal that is not an integer.
    #[error("`{0}` is not an integer")]
    NotAnInteger(String),
    /// A name that is no argument.
    #[error("unknown argument `{name}` in a length (arguments: {known})")]
    UnknownArgument {
        /// The name.
        name: String,
        /// The arguments there are, listed, or `none`.
        known: String,
    },
    /// An argument whose value is not an integer.
    #[error("argument `{name}` = {value} is not an integer")]
    NonIntegerArgument {
        /// The argument.
        name: String,
        /// Its value.
        value: f64,
    },
    /// `/` or `%` by zero.
    #[error("division by zero in a length")]
    DivisionByZero,
    /// A sum or difference out of range.
    #[error("overflow")]
    Overflow,
    /// A product out of range.
    #[error("overflow in a length")]
    ProductOverflow,
    /// A negative value.
    #[error("`{expr}` is {value}, a negative length")]
    Negative {
        /// The expression.
        expr: String,
        /// Its value.
        value: i128,
    },
    /// A value beyond `u64`.
    #[error("`{0}` is too large")]
    TooLarge(String),
}

/// The value of `expr` for the arguments `args`; an error names what is
/// wrong (an unknown name, a non-integer argument, division by zero, a
/// negative or too large result, bad syntax).
pub fn eval(expr: &str, args: &BTreeMap<String, f64>) -> Result<u64, SizeError> {
    let toks = tokens(expr)?;
    let mut p = Parser {
        toks: &toks,
        pos: 0,
        args,
    };
    let v = p.sum()?;
    if let Some(t) = toks.get(p.pos) {
        return Err(SizeError::Trailing {
            token: t.clone(),
            expr: expr.into(),
        });
    }
    if v < 0 {
        return Err(SizeError::Negative {
            expr: expr.into(),
            value: v,
        });
    }
    u64::try_from(v).map_err(|_| SizeError::TooLarge(expr.into()))
}

fn tokens(expr: &str) -> Result<Vec<String>, SizeError> {
    let mut out = Vec::new();
    let mut chars = expr.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_alphanumeric() || c == '_' {
            // A name may be dotted: a struct argument's field (`p.w`), a
            // texture's extent (`tex.width`).
            let name = !c.is_ascii_digit();
            let mut word = String::new();
            while let Some(&d) = chars
                .peek()
                .filter(|d| d.is_ascii_alphanumeric() || **d == '_' || (name && **d == '.'))
            {
                word.push(d);
                chars.next();
            }
            out.push(word);
        } else if "+-*/%()".contains(c) {
            out.push(c.to_string());
            chars.next();
        } else {
            return Err(SizeError::BadChar {
                ch: c,
                expr: expr.into(),
            });
        }
    }
    if out.is_empty() {
        return Err(SizeError::Empty);
    }
    Ok(out)
}

struct Parser<'a> {
    toks: &'a [String],
    pos: usize,
    args: &'a BTreeMap<String, f64>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.pos).map(String::as_str)
    }

    fn sum(&mut self) -> Result<i128, SizeError> {
        let mut v = self.product()?;
        while let Some(op @ ("+" | "-")) = self.peek() {
            let op = op.to_string();
            self.pos += 1;
            let r = self.product()?;
            v = if op == "+" {
                v.checked_add(r)
            } else {
                v.checked_sub(r)
            }
            .ok_or(SizeError::Overflow)?;
        }
        Ok(v)
    }

    fn product(&mut self) -> Result<i128, SizeError> {
        let mut v = self.factor()?;
        while let Some(op @ ("*" | "/" | "%")) = self.peek() {
            let op = op.to_string();
            self.pos += 1;
            let r = self.factor()?;
            if op != "*" && r == 0 {
                return Err(SizeError::DivisionByZero);
            }
            v = match op.as_str() {
                "*" => v.checked_mul(r).ok_or(SizeError::ProductOverflow)?,
                "/" => v / r,
                _ => v % r,
            };
        }
        Ok(v)
    }

    fn factor(&mut self) -> Result<i128, SizeError> {
        let Some(t) = self.peek().map(str::to_string) else {
            return Err(SizeError::EndsEarly);
        };
        self.pos += 1;
        match t.as_str() {
            "-" => Ok(-self.factor()?),
            "(" => {
                let v = self.sum()?;
                if self.peek() != Some(")") {
                    return Err(SizeError::MissingParen);
                }
                self.pos += 1;
                Ok(v)
            }
            _ if t.starts_with(|c: char| c.is_ascii_digit()) => {
                t.parse::<i128>().map_err(|_| SizeError::NotAnInteger(t))
            }
            _ if t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') => {
                let x = *self.args.get(&t).ok_or_else(|| {
                    let known: Vec<&str> = self.args.keys().map(String::as_str).collect();
                    SizeError::UnknownArgument {
                        name: t.clone(),
                        known: if known.is_empty() {
                            "none".into()
                        } else {
                            known.join(", ")
                        },
                    }
                })?;
                if x.fract() != 0.0 || x.abs() > 1e30 {
                    return Err(SizeError::NonIntegerArgument { name: t, value: x });
                }
                Ok(x as i128)
            }
            _ => Err(SizeError::Unexpected(t)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> BTreeMap<String, f64> {
        [
            ("w".to_string(), 1024.0),
            ("h".to_string(), 64.0),
            ("a".to_string(), 1.5),
            ("t.width".to_string(), 30.0),
        ]
        .into_iter()
        .collect()
    }

    #[test]
    fn evaluates_with_c_precedence() {
        assert_eq!(eval("w * (h + 1)", &args()), Ok(1024 * 65));
        assert_eq!(eval("w*h+1", &args()), Ok(1024 * 64 + 1));
        assert_eq!(eval("7 / 2 + 7 % 2", &args()), Ok(4));
        assert_eq!(eval("-(-h)", &args()), Ok(64));
        assert_eq!(eval(" 42 ", &args()), Ok(42));
        assert_eq!(eval("t.width * h", &args()), Ok(30 * 64));
    }

    #[test]
    fn rejects_bad_expressions() {
        let err = |e: &str| eval(e, &args()).unwrap_err().to_string();
        assert!(err("x * 2").contains("unknown argument `x`"));
        assert!(err("a * 2").contains("not an integer"));
        assert!(err("h - w").contains("negative"));
        assert!(err("w / (h - 64)").contains("division by zero"));
        assert!(err("w * (h").contains("missing `)`"));
        assert!(err("w +").contains("ends too early"));
        assert!(err("w h").contains("unexpected `h`"));
        assert!(err("w ^ 2").contains("unexpected `^`"));
        assert!(err("").contains("empty"));
        assert!(err("t.depth").contains("unknown argument `t.depth`"));
        assert!(err(".5 * w").contains("unexpected `.`"));
        assert!(err("99999999999999999999 * 99999999999999999999").contains("overflow"));
    }
}
