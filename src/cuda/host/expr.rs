//! Integer expressions of the host code: C's operators, `sizeof`,
//! casts, `dim3(…)`, `grid.x`, `min`/`max`, literals, and macros expanded,
//! over the variables the evaluator ([`super`]) has followed.

use super::{is_ident, split_top, Evaluator, StructSizes, Value, TYPE_WORDS};
use crate::cuda::limits::MAX_NESTING;

/// Element sizes `sizeof` knows: scalars, CUDA vectors, pointers, and the
/// file's structs (`sizes`).
fn size_of(ty: &[String], sizes: &StructSizes) -> Option<i128> {
    let words: Vec<&str> = ty
        .iter()
        .map(String::as_str)
        .filter(|w| {
            !matches!(
                *w,
                "const" | "unsigned" | "signed" | "std" | "::" | "struct"
            )
        })
        .collect();
    if let [name] = words.as_slice() {
        if let Some(s) = sizes.get(*name) {
            return Some(i128::from(*s));
        }
    }
    Some(match words.as_slice() {
        ["char"] | ["bool"] | ["int8_t"] | ["uint8_t"] => 1,
        ["short"] | ["half"] | ["__half"] | ["int16_t"] | ["uint16_t"] => 2,
        ["int"] | ["float"] | ["int32_t"] | ["uint32_t"] | [] => 4,
        ["long", "long"] | ["double"] | ["size_t"] | ["int64_t"] | ["uint64_t"] | ["long"] => 8,
        ["float2"] | ["int2"] => 8,
        ["double2"] | ["float4"] | ["int4"] => 16,
        [_, "*"] | [_, _, "*"] => 8,
        _ => return None,
    })
}

/// C's binary operators by precedence level, loosest first (shared with
/// the `#if` evaluator).
pub(crate) const BINARY_LEVELS: &[&[&str]] = &[
    &["||"],
    &["&&"],
    &["|"],
    &["^"],
    &["&"],
    &["==", "!="],
    &["<", "<=", ">", ">="],
    &["<<", ">>"],
    &["+", "-"],
    &["*", "/", "%"],
];

/// Deepest macro expansion followed.
const MAX_DEPTH: usize = 32;

/// Integer expressions of C with the host's variables and macros.
pub(super) struct Parser<'a, 'e> {
    pub(super) ev: &'a Evaluator<'e>,
    pub(super) toks: &'a [String],
    pub(super) pos: usize,
    pub(super) depth: usize,
    /// Nested [`Parser::ternary`] and [`Parser::unary`] calls now open
    /// (at most [`MAX_NESTING`]: deeper text is no known value).
    pub(super) nest: usize,
}

impl Parser<'_, '_> {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.pos).map(String::as_str)
    }

    fn eat(&mut self, w: &str) -> bool {
        let yes = self.peek() == Some(w);
        self.pos += yes as usize;
        yes
    }

    fn int(&mut self, f: fn(&mut Self) -> Option<Value>) -> Option<i128> {
        match f(self)? {
            Value::Int(v) => Some(v),
            Value::Dim3(_) => None,
        }
    }

    pub(super) fn ternary(&mut self) -> Option<Value> {
        self.nested(Self::ternary_here)
    }

    /// Runs `f`, one level deeper: every recursion of the parser passes
    /// through here, so that nesting is bounded, not the stack.
    fn nested(&mut self, f: fn(&mut Self) -> Option<Value>) -> Option<Value> {
        if self.nest >= MAX_NESTING {
            return None;
        }
        self.nest += 1;
        let v = f(self);
        self.nest -= 1;
        v
    }

    fn ternary_here(&mut self) -> Option<Value> {
        let c = self.binary(0)?;
        if !self.eat("?") {
            return Some(c);
        }
        let Value::Int(c) = c else { return None };
        let a = self.ternary()?;
        self.eat(":").then_some(())?;
        let b = self.ternary()?;
        Some(if c != 0 { a } else { b })
    }

    /// Binary operators by C precedence, loosest first.
    fn binary(&mut self, level: usize) -> Option<Value> {
        if level == BINARY_LEVELS.len() {
            return self.unary();
        }
        let mut v = self.binary(level + 1)?;
        while let Some(op) = self.peek().filter(|o| BINARY_LEVELS[level].contains(o)) {
            let op = op.to_string();
            self.pos += 1;
            let (Value::Int(a), Value::Int(b)) = (v, self.binary(level + 1)?) else {
                return None;
            };
            v = Value::Int(apply(&op, a, b)?);
        }
        Some(v)
    }

    fn unary(&mut self) -> Option<Value> {
        self.nested(Self::unary_here)
    }

    fn unary_here(&mut self) -> Option<Value> {
        if self.eat("-") {
            return Some(Value::Int(self.int(Self::unary)?.checked_neg()?));
        }
        if self.eat("+") {
            return self.unary();
        }
        if self.eat("~") {
            return Some(Value::Int(!self.int(Self::unary)?));
        }
        if self.eat("!") {
            return Some(Value::Int((self.int(Self::unary)? == 0) as i128));
        }
        // A cast to an integer type: `(int)x`, `(size_t)(n)`.
        if self.peek() == Some("(") {
            let close = (self.pos + 1..self.toks.len()).find(|&j| self.toks[j] == ")");
            if let Some(c) = close.filter(|&c| {
                c > self.pos + 1
                    && self.toks[self.pos + 1..c]
                        .iter()
                        .all(|w| TYPE_WORDS.contains(&w.as_str()) && w != "dim3")
            }) {
                self.pos = c + 1;
                return self.unary();
            }
        }
        self.primary()
    }

    fn primary(&mut self) -> Option<Value> {
        let t = self.peek()?.to_string();
        self.pos += 1;
        match t.as_str() {
            "(" => {
                let v = self.ternary()?;
                self.eat(")").then_some(v)
            }
            "sizeof" => {
                let inner = self.parenthesized()?;
                // `sizeof(REAL)` with `#define REAL float`.
                let inner = self.ev.macros.expand_tokens(&inner).ok()?;
                Some(Value::Int(size_of(&inner, self.ev.sizes)?))
            }
            "static_cast" | "reinterpret_cast" => {
                self.eat("<").then_some(())?;
                while self.peek().is_some_and(|w| w != ">") {
                    self.pos += 1;
                }
                self.eat(">").then_some(())?;
                let inner = self.parenthesized()?;
                self.sub(&inner)
            }
            "dim3" => {
                let inner = self.parenthesized()?;
                self.ev.dim3(&inner)
            }
            "std" if self.eat("::") => self.primary(),
            "min" | "max" => {
                let inner = self.parenthesized()?;
                let parts = split_top(&inner, ",");
                let [a, b] = parts.as_slice() else {
                    return None;
                };
                let (Value::Int(a), Value::Int(b)) = (self.sub(a)?, self.sub(b)?) else {
                    return None;
                };
                Some(Value::Int(if t == "min" { a.min(b) } else { a.max(b) }))
            }
            _ if t.starts_with(|c: char| c.is_ascii_digit()) => literal(&t).map(Value::Int),
            _ if is_ident(&t) => {
                if self.peek() == Some(".") {
                    // `grid.x`
                    self.pos += 1;
                    let field = self.peek()?.to_string();
                    self.pos += 1;
                    let Some(Some(Value::Dim3(d))) = self.ev.followed.vars.get(&t) else {
                        return None;
                    };
                    let k = ["x", "y", "z"].iter().position(|f| *f == field)?;
                    return Some(Value::Int(d[k]));
                }
                if let Some(v) = self.ev.followed.vars.get(&t) {
                    return *v;
                }
                self.macro_value(&t)
            }
            _ => None,
        }
    }

    /// The tokens between `(` and its `)`.
    fn parenthesized(&mut self) -> Option<Vec<String>> {
        self.eat("(").then_some(())?;
        let mut depth = 1;
        let from = self.pos;
        while let Some(w) = self.peek() {
            match w {
                "(" => depth += 1,
                ")" => {
                    depth -= 1;
                    if depth == 0 {
                        let inner = self.toks[from..self.pos].to_vec();
                        self.pos += 1;
                        return Some(inner);
                    }
                }
                _ => {}
            }
            self.pos += 1;
        }
        None
    }

    /// Evaluates a sub-expression one macro level deeper.
    fn sub(&self, toks: &[String]) -> Option<Value> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        let mut p = Parser {
            ev: self.ev,
            toks,
            pos: 0,
            depth: self.depth + 1,
            nest: self.nest,
        };
        let v = p.ternary()?;
        (p.pos == toks.len()).then_some(v)
    }

    fn macro_value(&mut self, name: &str) -> Option<Value> {
        let def = self.ev.macros.get(name)?.clone();
        let body = match &def.params {
            None => self.ev.macros.expand(&def, &[]).ok()?,
            Some(_) => {
                let inner = self.parenthesized()?;
                let args: Vec<Vec<String>> = split_top(&inner, ",")
                    .into_iter()
                    .map(<[String]>::to_vec)
                    .collect();
                self.ev.macros.expand(&def, &args).ok()?
            }
        };
        self.sub(&body)
    }
}

fn apply(op: &str, a: i128, b: i128) -> Option<i128> {
    Some(match op {
        "+" => a.checked_add(b)?,
        "-" => a.checked_sub(b)?,
        "*" => a.checked_mul(b)?,
        "/" => a.checked_div(b)?,
        "%" => a.checked_rem(b)?,
        "<<" => a.checked_shl(u32::try_from(b).ok().filter(|&s| s < 64)?)?,
        ">>" => a.checked_shr(u32::try_from(b).ok().filter(|&s| s < 64)?)?,
        "&" => a & b,
        "|" => a | b,
        "^" => a ^ b,
        "&&" => (a != 0 && b != 0) as i128,
        "||" => (a != 0 || b != 0) as i128,
        "==" => (a == b) as i128,
        "!=" => (a != b) as i128,
        "<" => (a < b) as i128,
        "<=" => (a <= b) as i128,
        ">" => (a > b) as i128,
        ">=" => (a >= b) as i128,
        _ => return None,
    })
}

/// An integer literal (`42`, `0x10`, `1024u`, `1UL`); `None` for floats.
fn literal(t: &str) -> Option<i128> {
    let digits = t.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        return i128::from_str_radix(hex, 16).ok();
    }
    digits.parse().ok()
}
