//! The walk through the host code up to a launch, resumable: the launches
//! of a file, in order, are reached by one walk, so that following the
//! host code of a file with thousands of launches takes time in
//! proportion to the file, not to the file times the launches.
//!
//! The walk follows the statements of file scope and of the blocks that
//! hold the launch; other blocks are skipped (blocks under a condition or
//! a loop only make what they assign unknown). A block entered for one
//! launch but not holding the next is left by going back to the state
//! saved where it opened, and skipping it.

use std::collections::HashMap;

use super::super::lex::{tokenize, TokKind};
use super::{Evaluator, Value};

/// The tokens of a file's text, read once.
pub(crate) struct HostTokens {
    texts: Vec<String>,
    kinds: Vec<TokKind>,
    /// Each token's file offset.
    starts: Vec<usize>,
    /// For each `{`: the index of its `}` (`None`: it never closes).
    close: HashMap<usize, Option<usize>>,
    /// Names declared (after another word that is not `return`): the
    /// offset of the first declaration.
    declared: HashMap<String, usize>,
}

impl HostTokens {
    /// The tokens of `src`.
    pub(crate) fn new(src: &str) -> HostTokens {
        let toks = tokenize(src);
        let mut close: HashMap<usize, Option<usize>> = HashMap::new();
        let mut stack = Vec::new();
        for (i, t) in toks.iter().enumerate() {
            if t.is(src, "{") {
                stack.push(i);
            } else if t.is(src, "}") {
                if let Some(o) = stack.pop() {
                    close.insert(o, Some(i));
                }
            }
        }
        for o in stack {
            close.insert(o, None);
        }
        let mut declared = HashMap::new();
        for w in toks.windows(2) {
            if w[0].kind == TokKind::Ident && !w[0].is(src, "return") {
                declared
                    .entry(w[1].text(src).to_string())
                    .or_insert(w[1].start);
            }
        }
        HostTokens {
            texts: toks.iter().map(|t| t.text(src).to_string()).collect(),
            kinds: toks.iter().map(|t| t.kind).collect(),
            starts: toks.iter().map(|t| t.start).collect(),
            close,
            declared,
        }
    }

    /// The index of the first token at or after file offset `offset`.
    pub(crate) fn index_at(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s < offset)
    }

    /// Whether `name` is declared (follows a word other than `return`)
    /// before file offset `offset`.
    pub(crate) fn declared_before(&self, name: &str, offset: usize) -> bool {
        self.declared.get(name).is_some_and(|&at| at < offset)
    }
}

/// What the walk holds at a point: the evaluator's variables and the
/// statement being read.
struct Saved {
    followed: Followed,
    stmt: Vec<String>,
    parens: i32,
}

/// What an evaluator has followed of the host code: its variables.
#[derive(Clone, Default)]
pub(crate) struct Followed {
    pub(crate) vars: HashMap<String, Option<Value>>,
    pub(crate) bytes: HashMap<String, Option<u64>>,
    pub(crate) inputs: Vec<(String, i128)>,
}

/// A walk through the host code, stopped before some token.
#[derive(Default)]
pub(crate) struct Walk {
    /// The token the walk was last taken to.
    target: usize,
    /// The next token to read.
    i: usize,
    /// The statement read so far.
    stmt: Vec<String>,
    /// Open parentheses in `stmt`: a `;` inside (`for (…; …; …)`) does
    /// not end the statement.
    parens: i32,
    /// The blocks entered, innermost last: where each opens and closes
    /// (`usize::MAX`: never), and the walk's state before it.
    entered: Vec<(usize, usize, Saved)>,
}

impl Walk {
    /// The token the walk was last taken to (it goes on only from there).
    pub(crate) fn target(&self) -> usize {
        self.target
    }

    /// Walks `ev` through `toks` on to the token `target`, at or after
    /// [`Walk::target`].
    pub(crate) fn to(&mut self, toks: &HostTokens, ev: &mut Evaluator, target: usize) {
        self.target = target;
        let mut left = None;
        while self.entered.last().is_some_and(|&(_, c, _)| c < target) {
            left = self.entered.pop();
        }
        if let Some((open, _, saved)) = left {
            ev.followed = saved.followed;
            self.stmt = saved.stmt;
            self.parens = saved.parens;
            self.i = open;
        }
        let texts = &toks.texts;
        while self.i < target.min(texts.len()) {
            let i = self.i;
            let t = &texts[i];
            if toks.kinds[i] == TokKind::Directive {
                self.i += 1;
                continue;
            }
            match t.as_str() {
                "{" => self.block(toks, ev, i, target),
                ";" if self.parens <= 0 => {
                    ev.statement(&self.stmt);
                    self.end_statement();
                }
                "}" => self.end_statement(),
                _ => {
                    self.parens += (t == "(") as i32 - (t == ")") as i32;
                    self.stmt.push(t.clone());
                    self.i += 1;
                }
            }
        }
    }

    fn end_statement(&mut self) {
        self.stmt.clear();
        self.parens = 0;
        self.i += 1;
    }

    /// The block opening at token `i`: entered when it holds `target`,
    /// else skipped.
    fn block(&mut self, toks: &HostTokens, ev: &mut Evaluator, i: usize, target: usize) {
        let texts = &toks.texts;
        let guarded = self.stmt.iter().any(|w| {
            matches!(
                w.as_str(),
                "if" | "else" | "for" | "while" | "do" | "switch" | "case"
            )
        });
        match toks.close.get(&i).copied().flatten() {
            Some(c) if c < target => {
                if guarded || self.stmt.is_empty() {
                    ev.forget_assigned(&texts[i..c]);
                    ev.forget_assigned(&self.stmt);
                }
                // `struct S {…} s;`, `int a[] = {…};`: the rest of the
                // statement follows; a function body ends it.
                let ends = self.stmt.last().is_some_and(|w| w == ")" || w == "const");
                if ends || guarded || self.stmt.is_empty() {
                    self.stmt.clear();
                    self.parens = 0;
                } else {
                    self.stmt.push("{".into());
                    self.stmt.push("}".into());
                }
                self.i = c + 1;
            }
            // A block that holds the launch: enter it. A loop or
            // condition around the launch makes what its header assigns
            // unknown.
            close => {
                let saved = Saved {
                    followed: ev.followed.clone(),
                    stmt: self.stmt.clone(),
                    parens: self.parens,
                };
                self.entered.push((i, close.unwrap_or(usize::MAX), saved));
                if guarded {
                    ev.forget_assigned(&self.stmt);
                }
                self.end_statement();
            }
        }
    }
}
