//! Conditional inclusion like the C preprocessor: `#if`, `#ifdef`,
//! `#ifndef`, `#elif`, `#else` and `#endif`.
//!
//! [`active`] walks the command line's definitions, then the user's file,
//! entering each header at its `#include`, with the macros defined so far
//! (`#define` and `#undef` in active text, in order). Each condition is an
//! integer constant expression ([`eval`]): `defined X` and `defined(X)`
//! first, then macros expanded, then identifiers left over count as 0.
//! Text in a branch not taken is blanked (spaces, line breaks kept), so
//! every offset, line and column stays where it was and extraction and
//! parsing see only the branches nvcc compiles. A header reached only
//! through branches not taken is blanked whole. The `#define`s and
//! `#undef`s of the compiled text, in that order, are the file's
//! [`Timeline`]: the macros in force at each point.

use super::extract::define_of;
use super::host::BINARY_LEVELS as LEVELS;
use super::include::{include_target, Target};
use super::lex::{tokenize, TokKind};
use super::limits::MAX_NESTING;
use super::macros::{token_texts, MacroError, MacroTable};
use super::timeline::Timeline;
use crate::diag::{Diagnostic, Severity};
use crate::source::{IncludedFile, IncludedKind, SourceFile};

/// Why an `#if` expression has no value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CondError {
    /// `defined(` not followed by a name and `)`.
    #[error("`defined(` without a name and `)`")]
    DefinedParen,
    /// `defined` at the end.
    #[error("`defined` without a name")]
    DefinedAlone,
    /// A macro does not expand.
    #[error(transparent)]
    Macro(#[from] MacroError),
    /// A token where none of its kind may stand.
    #[error("unexpected `{0}`")]
    Unexpected(String),
    /// A token missing (`)`, `:`).
    #[error("expected `{0}`")]
    Expected(String),
    /// An operand missing at the end.
    #[error("the expression ends early")]
    EndsEarly,
    /// `/` or `%` by 0 in an operand that is evaluated.
    #[error("division by zero")]
    DivisionByZero,
    /// A number that is no integer literal (or too large).
    #[error("`{0}` is not an integer")]
    NotInteger(String),
    /// A token starting with `'` that is not a character literal.
    #[error("`{0}` is not a character")]
    NotCharacter(String),
    /// A character literal copper does not read (`'\x41'`, `'ab'`).
    #[error("character `{0}` in a condition")]
    Character(String),
    /// Parentheses, operators or `?:` nested more than [`MAX_NESTING`] deep.
    #[error("expression nested deeper than {MAX_NESTING}")]
    TooDeep,
}

/// Macros every translation unit nvcc compiles has (for conditions only),
/// as nvcc 12.8 defines them for the device pass of `-arch=sm_90` (the
/// version macros of `cuda.h` and `cuda_runtime_api.h` included): `-D` and
/// `-U` on the command line override them.
const PREDEFINED: &str = "#define __CUDACC__ 1
#define __NVCC__ 1
#define __cplusplus 201703L
#define __CUDACC_VER_MAJOR__ 12
#define __CUDACC_VER_MINOR__ 8
#define __CUDACC_VER_BUILD__ 0
#define __CUDA_ARCH__ 900
#define CUDA_VERSION 12080
#define CUDART_VERSION 12080
";

/// What [`active`] finds: the file with the text of every branch not
/// taken blanked, the macros in force at each point, warnings for
/// conditions that could not be evaluated (they count as false), and an
/// error for each `#error` in a branch taken.
pub struct Active {
    /// The compiled text (offsets unchanged).
    pub source: SourceFile,
    /// The `#define`s and `#undef`s read, in translation-unit order.
    pub timeline: Timeline,
    /// Conditions not evaluated, `#error`s reached.
    pub diagnostics: Vec<Diagnostic>,
}

/// Walks the translation unit of `source` (see the module's doc).
pub fn active(source: &SourceFile) -> Active {
    let files = &source.included().files;
    let mut w = Walk {
        source,
        macros: MacroTable::default(),
        timeline: None,
        entered: vec![false; files.len()],
        inactive: vec![Vec::new(); files.len() + 1],
        problems: Vec::new(),
    };
    w.text(PREDEFINED, None, 0);
    // The predefined macros serve conditions only; the rest is recorded.
    w.timeline = Some(Timeline::new(source));
    for (i, f) in files.iter().enumerate() {
        if f.kind == IncludedKind::CommandLine {
            w.entered[i] = true;
            w.text(&f.text, Some(i), f.base);
        }
    }
    w.text(&source.text, None, 0);
    let Walk {
        mut inactive,
        entered,
        problems,
        timeline,
        ..
    } = w;
    let timeline = timeline.unwrap_or_default();
    for (i, f) in files.iter().enumerate() {
        if !entered[i] {
            inactive[i + 1] = vec![(0, f.text.len())];
        }
    }
    let diagnostics = problems
        .into_iter()
        .map(|(at, s, m)| source.diagnostic(s, "preprocess", at, m))
        .collect();
    if inactive.iter().all(Vec::is_empty) {
        return Active {
            source: source.clone(),
            timeline,
            diagnostics,
        };
    }
    let mut out = source.with_text(blank(&source.text, &inactive[0]));
    if inactive[1..].iter().any(|r| !r.is_empty()) {
        let mut included = source.included().clone();
        for (f, r) in included.files.iter_mut().zip(&inactive[1..]) {
            if !r.is_empty() {
                let mut b = IncludedFile::new(
                    f.path.clone(),
                    f.kind,
                    blank(&f.text, r),
                    f.base,
                    f.directive,
                );
                b.parent = f.parent;
                b.name = std::mem::take(&mut f.name);
                *f = b;
            }
        }
        out = out.with_included(included);
    }
    Active {
        source: out,
        timeline,
        diagnostics,
    }
}

/// `text` with the byte ranges `ranges` turned into spaces (line breaks
/// kept).
fn blank(text: &str, ranges: &[(usize, usize)]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for &(a, b) in ranges {
        for c in &mut bytes[a..b] {
            if *c != b'\n' && *c != b'\r' {
                *c = b' ';
            }
        }
    }
    // Whole characters were replaced (ranges start and end at directives).
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// One open conditional.
struct Frame {
    /// Whether the text around it is compiled.
    outer: bool,
    /// Whether a branch was taken already.
    taken: bool,
    /// Whether the current branch is compiled.
    active: bool,
}

/// The state of the walk through the translation unit.
struct Walk<'a> {
    source: &'a SourceFile,
    macros: MacroTable,
    /// The definitions recorded (from the command line on).
    timeline: Option<Timeline>,
    /// Per included file, whether the walk went into it.
    entered: Vec<bool>,
    /// Branches not taken: the user's file first, then each included file,
    /// as byte ranges of its text.
    inactive: Vec<Vec<(usize, usize)>>,
    /// Conditions that could not be evaluated and `#error`s reached:
    /// offset, severity and message.
    problems: Vec<(usize, Severity, String)>,
}

impl Walk<'_> {
    /// Walks `text` (the included file `file`, or the user's file for
    /// `None`), whose first byte is at offset `base`.
    fn text(&mut self, text: &str, file: Option<usize>, base: usize) {
        let mut stack: Vec<Frame> = Vec::new();
        let mut off_since: Option<usize> = None;
        let mut ranges = Vec::new();
        if let Some(tl) = &mut self.timeline {
            tl.enter(file);
        }
        for t in tokenize(text) {
            if t.kind != TokKind::Directive {
                continue;
            }
            let directive = t.text(text);
            let body = directive[1..].trim_start();
            let word_len = body
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(body.len());
            let (word, arg) = (&body[..word_len], body[word_len..].trim());
            let was_active = stack.iter().all(|f| f.active);
            let at = base + t.start;
            match word {
                "if" | "ifdef" | "ifndef" => {
                    let taken = was_active && self.condition(word, arg, at);
                    stack.push(Frame {
                        outer: was_active,
                        taken,
                        active: taken,
                    });
                }
                "elif" => {
                    if let Some(f) = stack.last() {
                        let (outer, taken) = (f.outer, f.taken);
                        let now = outer && !taken && self.condition("if", arg, at);
                        if let Some(f) = stack.last_mut() {
                            f.active = now;
                            f.taken |= now;
                        }
                    }
                }
                "else" => {
                    if let Some(f) = stack.last_mut() {
                        f.active = f.outer && !f.taken;
                        f.taken = true;
                    }
                }
                "endif" => {
                    stack.pop();
                }
                _ if !was_active => {}
                "define" => {
                    if let Some(m) = define_of(directive, at) {
                        if let Some(tl) = &mut self.timeline {
                            tl.define(file, base + t.end, m.clone());
                        }
                        self.macros.define(m);
                    }
                }
                "undef" => {
                    let name = arg.split_whitespace().next().unwrap_or("");
                    if let Some(tl) = &mut self.timeline {
                        tl.undefine(file, base + t.end, name);
                    }
                    self.macros.undefine(name);
                }
                "error" => self.problems.push((
                    at,
                    Severity::Error,
                    format!("`#error {arg}` is in a branch nvcc compiles: the build stops here"),
                )),
                "include" => {
                    if let Some(Target::Quoted(name) | Target::System(name)) =
                        include_target(directive)
                    {
                        self.include(name, file);
                        if let Some(tl) = &mut self.timeline {
                            tl.mark(file, base + t.end);
                        }
                    }
                }
                _ => {}
            }
            let now_active = stack.iter().all(|f| f.active);
            match (off_since, now_active) {
                (None, false) => off_since = Some(t.end),
                (Some(from), true) => {
                    ranges.push((from, t.start));
                    off_since = None;
                }
                _ => {}
            }
        }
        if let Some(from) = off_since {
            ranges.push((from, text.len()));
        }
        self.inactive[file.map_or(0, |i| i + 1)].extend(ranges);
    }

    /// Enters the header `name` that `#include` names in `parent`: the one
    /// the loader read for that directive, else one of that name read for
    /// another directive. Each header is entered once.
    fn include(&mut self, name: &str, parent: Option<usize>) {
        let files = &self.source.included().files;
        // (Files attached by hand, without the name, match by path.)
        let named = |i: usize| {
            let f = &files[i];
            f.name == name || (f.name.is_empty() && f.path.ends_with(name))
        };
        let same = |i: usize| named(i) && !self.entered[i];
        let Some(i) = (0..files.len())
            .find(|&i| same(i) && files[i].parent == parent)
            .or_else(|| (0..files.len()).find(|&i| same(i)))
        else {
            return;
        };
        self.entered[i] = true;
        let f = &self.source.included().files[i];
        self.text(&f.text, Some(i), f.base);
    }

    /// Whether the branch of `#if arg` (or `#ifdef`, `#ifndef`) is taken.
    fn condition(&mut self, word: &str, arg: &str, at: usize) -> bool {
        let name = || arg.split_whitespace().next().unwrap_or("");
        match word {
            "ifdef" => self.macros.get(name()).is_some(),
            "ifndef" => self.macros.get(name()).is_none(),
            _ => match eval(arg, &self.macros) {
                Ok(v) => v != 0,
                Err(e) => {
                    self.problems.push((
                        at,
                        Severity::Warning,
                        format!("`#if {arg}` cannot be evaluated ({e}); the branch is left out"),
                    ));
                    false
                }
            },
        }
    }
}

/// The value of an `#if` expression under `macros`: `defined`, then macro
/// expansion, then identifiers as 0 (`true` as 1), evaluated in 64-bit
/// signed arithmetic with C's precedence.
pub fn eval(expr: &str, macros: &MacroTable) -> Result<i64, CondError> {
    let toks = token_texts(&expr.replace("\\\r\n", " ").replace("\\\n", " "));
    let mut replaced = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if toks[i] == "defined" {
            let (name, next) = match toks.get(i + 1).map(String::as_str) {
                Some("(") => match (toks.get(i + 2), toks.get(i + 3).map(String::as_str)) {
                    (Some(n), Some(")")) => (n, i + 4),
                    _ => return Err(CondError::DefinedParen),
                },
                Some(_) => (&toks[i + 1], i + 2),
                None => return Err(CondError::DefinedAlone),
            };
            replaced.push(if macros.get(name).is_some() { "1" } else { "0" }.to_string());
            i = next;
        } else {
            replaced.push(toks[i].clone());
            i += 1;
        }
    }
    let expanded = macros.expand_tokens(&replaced)?;
    let mut p = Parser {
        toks: &expanded,
        pos: 0,
        nest: 0,
    };
    let v = p.ternary(true)?;
    match p.toks.get(p.pos) {
        None => Ok(v),
        Some(t) => Err(CondError::Unexpected(t.clone())),
    }
}

/// A precedence-climbing evaluator over expanded tokens.
struct Parser<'a> {
    toks: &'a [String],
    pos: usize,
    /// Nested [`Parser::ternary`] and [`Parser::unary`] calls now open.
    nest: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.pos).map(String::as_str)
    }

    fn expect(&mut self, t: &str) -> Result<(), CondError> {
        if self.peek() == Some(t) {
            self.pos += 1;
            Ok(())
        } else {
            Err(CondError::Expected(t.to_string()))
        }
    }

    /// `c ? a : b`; `live` is false in an operand that is not evaluated
    /// (where dividing by zero is no error).
    fn ternary(&mut self, live: bool) -> Result<i64, CondError> {
        self.nested(live, Self::ternary_here)
    }

    /// Runs `f`, one level deeper: every recursion of the parser passes
    /// through here, so that nesting is bounded, not the stack.
    fn nested(
        &mut self,
        live: bool,
        f: fn(&mut Self, bool) -> Result<i64, CondError>,
    ) -> Result<i64, CondError> {
        if self.nest >= MAX_NESTING {
            return Err(CondError::TooDeep);
        }
        self.nest += 1;
        let v = f(self, live);
        self.nest -= 1;
        v
    }

    fn ternary_here(&mut self, live: bool) -> Result<i64, CondError> {
        let c = self.binary(0, live)?;
        if self.peek() != Some("?") {
            return Ok(c);
        }
        self.pos += 1;
        let a = self.ternary(live && c != 0)?;
        self.expect(":")?;
        let b = self.ternary(live && c == 0)?;
        Ok(if c != 0 { a } else { b })
    }

    fn binary(&mut self, level: usize, live: bool) -> Result<i64, CondError> {
        if level == LEVELS.len() {
            return self.unary(live);
        }
        let mut l = self.binary(level + 1, live)?;
        while let Some(op) = self.peek().filter(|t| LEVELS[level].contains(t)) {
            let op = op.to_string();
            self.pos += 1;
            let rlive = live && !((op == "&&" && l == 0) || (op == "||" && l != 0));
            let r = self.binary(level + 1, rlive)?;
            l = apply(&op, l, r, rlive)?;
        }
        Ok(l)
    }

    fn unary(&mut self, live: bool) -> Result<i64, CondError> {
        self.nested(live, Self::unary_here)
    }

    fn unary_here(&mut self, live: bool) -> Result<i64, CondError> {
        let toks = self.toks;
        let Some(t) = toks.get(self.pos).map(String::as_str) else {
            return Err(CondError::EndsEarly);
        };
        self.pos += 1;
        Ok(match t {
            "!" => i64::from(self.unary(live)? == 0),
            "~" => !self.unary(live)?,
            "-" => self.unary(live)?.wrapping_neg(),
            "+" => self.unary(live)?,
            "(" => {
                let v = self.ternary(live)?;
                self.expect(")")?;
                v
            }
            "true" => 1,
            t if t.starts_with(|c: char| c.is_ascii_digit()) => number(t)?,
            t if t.starts_with('\'') => char_value(t)?,
            t if t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') => 0,
            t => return Err(CondError::Unexpected(t.to_string())),
        })
    }
}

/// `l op r` in wrapping 64-bit arithmetic.
fn apply(op: &str, l: i64, r: i64, live: bool) -> Result<i64, CondError> {
    let b = |x: bool| i64::from(x);
    Ok(match op {
        "||" => b(l != 0 || r != 0),
        "&&" => b(l != 0 && r != 0),
        "|" => l | r,
        "^" => l ^ r,
        "&" => l & r,
        "==" => b(l == r),
        "!=" => b(l != r),
        "<" => b(l < r),
        ">" => b(l > r),
        "<=" => b(l <= r),
        ">=" => b(l >= r),
        "<<" => l.wrapping_shl(r as u32),
        ">>" => l.wrapping_shr(r as u32),
        "+" => l.wrapping_add(r),
        "-" => l.wrapping_sub(r),
        "*" => l.wrapping_mul(r),
        "/" | "%" if r == 0 => {
            if live {
                return Err(CondError::DivisionByZero);
            }
            0
        }
        "/" => l.wrapping_div(r),
        _ => l.wrapping_rem(r),
    })
}

/// An integer literal (`256`, `0x100`, `0400`, `0b1`, with `u`/`l`
/// suffixes).
fn number(t: &str) -> Result<i64, CondError> {
    let digits = t.trim_end_matches(['u', 'U', 'l', 'L']).replace('\'', "");
    let lower = digits.to_ascii_lowercase();
    let parsed = if let Some(h) = lower.strip_prefix("0x") {
        u64::from_str_radix(h, 16)
    } else if let Some(b) = lower.strip_prefix("0b") {
        u64::from_str_radix(b, 2)
    } else if lower.len() > 1 && lower.starts_with('0') {
        u64::from_str_radix(&lower[1..], 8)
    } else {
        lower.parse::<u64>()
    };
    parsed
        .map(|v| v as i64)
        .map_err(|_| CondError::NotInteger(t.to_string()))
}

/// A plain character literal (`'a'`, `'\n'`, `'\0'`).
fn char_value(t: &str) -> Result<i64, CondError> {
    let inner = t
        .strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\''))
        .ok_or_else(|| CondError::NotCharacter(t.to_string()))?;
    let v = match inner {
        "\\n" => 10,
        "\\t" => 9,
        "\\0" => 0,
        "\\\\" => 92,
        "\\'" => 39,
        s if s.chars().count() == 1 => s.chars().next().map_or(0, |c| c as i64),
        _ => return Err(CondError::Character(t.to_string())),
    };
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::extract::extract;

    fn value(defs: &str, e: &str) -> Result<i64, CondError> {
        eval(e, &MacroTable::new(&extract(defs).macros))
    }

    #[test]
    fn expressions_follow_c_precedence() {
        assert_eq!(value("", "1 + 2 * 3"), Ok(7));
        assert_eq!(value("", "(1 + 2) * 3"), Ok(9));
        assert_eq!(value("", "1 << 4 | 1"), Ok(17));
        assert_eq!(value("", "10 - 4 - 3"), Ok(3));
        assert_eq!(value("", "7 / 2 == 3 && 7 % 2"), Ok(1));
        assert_eq!(value("", "!0 + ~0"), Ok(0));
        assert_eq!(value("", "-3 < 2 ? 0x10 : 010"), Ok(16));
        assert_eq!(value("", "0 ? 1 : 010"), Ok(8));
        assert_eq!(value("", "256u >= 128UL"), Ok(1));
        assert_eq!(value("", "'A' == 65"), Ok(1));
    }

    #[test]
    fn defined_macros_and_unknown_names() {
        let defs = "#define BLOCK_SIZE 256\n#define USE_SHARED\n#define TWICE(x) ((x) * 2)\n";
        assert_eq!(value(defs, "defined(USE_SHARED)"), Ok(1));
        assert_eq!(value(defs, "defined USE_SHARED && !defined(DEBUG)"), Ok(1));
        assert_eq!(value(defs, "BLOCK_SIZE >= 512"), Ok(0));
        assert_eq!(value(defs, "TWICE(BLOCK_SIZE) == 512"), Ok(1));
        // Unknown identifiers are 0, as in C.
        assert_eq!(value(defs, "UNKNOWN_FLAG"), Ok(0));
        assert_eq!(value(defs, "UNKNOWN_FLAG + 3"), Ok(3));
        assert_eq!(value(defs, "true"), Ok(1));
    }

    #[test]
    fn errors_are_reported_not_guessed() {
        assert!(value("", "1 +").is_err());
        assert!(value("", "(1").is_err());
        assert_eq!(value("", "1 / 0"), Err(CondError::DivisionByZero));
        assert_eq!(
            value("", "1 / 0").unwrap_err().to_string(),
            "division by zero"
        );
        // An operand that is not evaluated may divide by zero.
        assert_eq!(value("", "0 && 1 / 0"), Ok(0));
        assert_eq!(value("", "1 || 1 / 0"), Ok(1));
        assert!(value("", "defined(").is_err());
        assert!(value("", "2 3").is_err());
    }

    #[test]
    fn nesting_far_past_the_limit_is_an_error_not_a_crash() {
        let n = 100 * MAX_NESTING;
        let deep = [
            format!("{}1{}", "(".repeat(n), ")".repeat(n)),
            format!("{}1", "- ".repeat(n)),
            format!("{}1", "1 ? ".repeat(n)) + &" : 0".repeat(n),
        ];
        for e in deep {
            let got = crate::on_small_stack(move || value("", &e));
            assert_eq!(got, Err(CondError::TooDeep));
        }
        let shallow = format!("{}1{}", "(".repeat(50), ")".repeat(50));
        assert_eq!(value("", &shallow), Ok(1));
    }

    fn active_text(src: &str) -> String {
        active(&SourceFile::new("t.cu", src)).source.text
    }

    #[test]
    fn branches_not_taken_are_blanked_in_place() {
        let src = "#ifndef BS\n#define BS 256\n#endif\n#if BS > 128\nint big;\n#elif BS > 32\nint mid;\n#else\nint small;\n#endif\n";
        let out = active_text(src);
        assert_eq!(out.len(), src.len());
        assert_eq!(out.lines().count(), src.lines().count());
        assert!(out.contains("int big;") && !out.contains("mid") && !out.contains("small"));
        // Nested and #undef.
        let src = "#define A 1\n#if A\n#undef A\n#if A\nint no;\n#else\nint yes;\n#endif\n#endif\n";
        let out = active_text(src);
        assert!(
            out.contains("int yes;") && !out.contains("int no;"),
            "{out}"
        );
        // An #ifndef default gives way to a definition made before it.
        let src =
            "#define BS 64\n#ifndef BS\n#define BS 256\n#endif\n#if BS == 64\nint ok;\n#endif\n";
        assert!(active_text(src).contains("int ok;"));
        // Predefined: nvcc compiles C++ with CUDA.
        assert!(active_text("#ifdef __CUDACC__\nint cuda;\n#endif\n").contains("int cuda;"));
    }

    #[test]
    fn an_error_directive_reached_is_reported() {
        let src = "#define BS 48
#if BS & (BS - 1)
#error \"BS must be a power of two\"
#endif
#ifdef NOPE
#error never
#endif
";
        let d = active(&SourceFile::new("t.cu", src)).diagnostics;
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!((d[0].line, d[0].severity), (3, Severity::Error));
    }

    #[test]
    fn a_bad_condition_is_a_warning_and_false() {
        let Active {
            source: out,
            diagnostics: d,
            ..
        } = active(&SourceFile::new(
            "t.cu",
            "#if 1 +\nint x;\n#else\nint y;\n#endif\n",
        ));
        assert!(!out.text.contains("int x;") && out.text.contains("int y;"));
        assert_eq!(d.len(), 1);
        assert!(
            d[0].message.contains("cannot be evaluated"),
            "{}",
            d[0].message
        );
    }
}
