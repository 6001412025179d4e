//! Expansion of object-like and simple function-like `#define`s.
//!
//! Works on token texts: arguments are substituted, `#` stringizes and `##`
//! pastes, and the result is rescanned with the macro's own name hidden, as
//! the C preprocessor does. Expansion depth and size are bounded: one
//! invocation expands to at most a statement's worth of tokens
//! ([`MAX_STATEMENT_TOKENS`]), and expansion stops as soon as it is past
//! that, so a macro that doubles at each level costs no more.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::lex::tokenize;
use super::limits::MAX_STATEMENT_TOKENS;
use crate::source::Span;

/// A `#define`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MacroDef {
    /// Macro name.
    pub name: String,
    /// Parameter names of a function-like macro (a variadic macro's last
    /// one is `__VA_ARGS__`, or its name in `args...`).
    pub params: Option<Vec<String>>,
    /// Whether the last parameter takes the remaining arguments (`...`).
    pub variadic: bool,
    /// Replacement list as tokens.
    pub body: Vec<String>,
    /// The directive line.
    pub span: Span,
    /// Defined inside `#ifndef NAME` (a default): it does not replace an
    /// earlier definition, such as a `-D` on the command line.
    pub default_only: bool,
}

/// Most nested expansions before copper gives up.
const MAX_DEPTH: usize = 64;
/// Most tokens one invocation may expand to.
const MAX_TOKENS: usize = MAX_STATEMENT_TOKENS;

/// Why an expansion failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MacroError {
    /// Macros expanded inside one another more than [`MAX_DEPTH`] deep.
    #[error("expansion of macro `{0}` nests macros more than {MAX_DEPTH} deep")]
    TooDeep(String),
    /// The expansion of the macro invoked is over [`MAX_TOKENS`] tokens.
    #[error("macro `{0}` expands to more than {MAX_TOKENS} tokens")]
    TooLarge(String),
    /// A function-like macro invoked with the wrong number of arguments.
    #[error("macro `{name}` takes {expected} argument(s) but {got} were given")]
    Arity {
        /// Macro name.
        name: String,
        /// Parameters it takes.
        expected: usize,
        /// Arguments given.
        got: usize,
    },
}

/// A `#define` (`Some`) or `#undef` (`None`) of a name, with its number
/// in the translation unit's order.
type Event = (usize, Option<Arc<MacroDef>>);

/// Every `#define` and `#undef` of a translation unit, numbered in order
/// and kept by name: the macro tables of all its points share one
/// history (a table is a number into it), so that a file with thousands
/// of macros and of kernels holds each definition once.
#[derive(Clone, Debug, Default)]
pub struct MacroHistory {
    /// For each name, its events in order: the event's number and the
    /// definition (`None`: an `#undef`).
    by_name: HashMap<String, Vec<Event>>,
    /// Events recorded.
    len: usize,
}

impl MacroHistory {
    /// Records a `#define`.
    pub fn define(&mut self, def: MacroDef) {
        let name = def.name.clone();
        self.push(name, Some(Arc::new(def)));
    }

    /// Records an `#undef`.
    pub fn undefine(&mut self, name: &str) {
        self.push(name.to_string(), None);
    }

    fn push(&mut self, name: String, def: Option<Arc<MacroDef>>) {
        self.by_name.entry(name).or_default().push((self.len, def));
        self.len += 1;
    }

    /// How many events were recorded.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The definition of `name` after the first `version` events.
    fn get(&self, name: &str, version: usize) -> Option<&Arc<MacroDef>> {
        let events = self.by_name.get(name)?;
        let before = events.partition_point(|&(n, _)| n < version);
        events.get(before.checked_sub(1)?)?.1.as_ref()
    }

    /// The last definition of each name, `#undef`s ignored: what a name
    /// may expand to somewhere.
    pub fn union(&self) -> MacroTable {
        let local = self
            .by_name
            .iter()
            .filter_map(|(name, events)| {
                let last = events.iter().rev().find_map(|(_, d)| d.clone())?;
                Some((name.clone(), Some(last)))
            })
            .collect();
        MacroTable {
            local,
            ..MacroTable::default()
        }
    }
}

/// The macros visible to a kernel (the last definition of a name wins):
/// a point of a shared [`MacroHistory`], and changes made on top.
#[derive(Clone, Debug, Default)]
pub struct MacroTable {
    /// The translation unit's definitions.
    history: Arc<MacroHistory>,
    /// The first `version` events of `history` are in force.
    version: usize,
    /// Definitions (`None`: `#undef`s) made on top, by name.
    local: HashMap<String, Option<Arc<MacroDef>>>,
}

impl MacroTable {
    /// A table from definitions in file order.
    /// A definition made inside `#ifndef NAME` does not replace an
    /// earlier one (a `-D` on the command line, a header's).
    pub fn new(defs: &[MacroDef]) -> MacroTable {
        let mut table = MacroTable::default();
        for d in defs {
            if !(d.default_only && table.get(&d.name).is_some()) {
                table.define(d.clone());
            }
        }
        table
    }

    /// The macros in force after the first `version` events of `history`.
    pub fn at(history: &Arc<MacroHistory>, version: usize) -> MacroTable {
        MacroTable {
            history: history.clone(),
            version,
            local: HashMap::new(),
        }
    }

    /// Adds (or replaces) a definition, as a `#define` read in order does.
    pub fn define(&mut self, def: MacroDef) {
        self.local.insert(def.name.clone(), Some(Arc::new(def)));
    }

    /// Removes a definition (`#undef`).
    pub fn undefine(&mut self, name: &str) {
        self.local.insert(name.to_string(), None);
    }

    /// Every definition in force (in no particular order).
    pub(crate) fn visible(&self) -> impl Iterator<Item = &MacroDef> + '_ {
        let from_history = (self.history.by_name.keys())
            .filter(|name| !self.local.contains_key(*name))
            .filter_map(|name| self.history.get(name, self.version));
        (self.local.values().flatten())
            .chain(from_history)
            .map(|d| &**d)
    }

    /// Expands every macro invocation in a token list, fully rescanned.
    pub fn expand_tokens(&self, toks: &[String]) -> Result<Vec<String>, MacroError> {
        self.rescan(toks, &mut HashSet::new(), 0)
    }

    /// The definition of `name`, if it is a macro.
    pub fn get(&self, name: &str) -> Option<&MacroDef> {
        match self.local.get(name) {
            Some(local) => local.as_deref(),
            None => self.history.get(name, self.version).map(|d| &**d),
        }
    }

    /// Expands the invocation of `def` with `args` (already split, each a
    /// token list) into a token list, fully rescanned.
    pub fn expand(&self, def: &MacroDef, args: &[Vec<String>]) -> Result<Vec<String>, MacroError> {
        let mut hidden = HashSet::new();
        self.expand_invocation(def, args, &mut hidden, 0)
            .map_err(|e| match e {
                // Named as the user invoked it, not by the inner macro
                // whose expansion went past the limit.
                MacroError::TooLarge(_) => MacroError::TooLarge(def.name.clone()),
                MacroError::TooDeep(_) => MacroError::TooDeep(def.name.clone()),
                e => e,
            })
    }

    fn expand_invocation(
        &self,
        def: &MacroDef,
        args: &[Vec<String>],
        hidden: &mut HashSet<String>,
        depth: usize,
    ) -> Result<Vec<String>, MacroError> {
        if depth > MAX_DEPTH {
            return Err(MacroError::TooDeep(def.name.clone()));
        }
        let substituted = match &def.params {
            None => def.body.clone(),
            Some(params) => {
                let given = if params.is_empty() && args.len() == 1 && args[0].is_empty() {
                    0
                } else {
                    args.len()
                };
                let fixed = params.len().saturating_sub(1);
                if def.variadic && given >= fixed {
                    let mut grouped: Vec<Vec<String>> = args[..fixed].to_vec();
                    let mut rest = Vec::new();
                    for (k, a) in args[fixed.min(args.len())..].iter().enumerate() {
                        if k > 0 {
                            rest.push(",".to_string());
                        }
                        rest.extend(a.iter().cloned());
                    }
                    grouped.push(rest);
                    let out = self.substitute(def, params, &grouped, hidden, depth)?;
                    hidden.insert(def.name.clone());
                    let out = self.rescan(&out, hidden, depth + 1);
                    hidden.remove(&def.name);
                    return out;
                }
                if given != params.len() {
                    return Err(MacroError::Arity {
                        name: def.name.clone(),
                        expected: params.len(),
                        got: given,
                    });
                }
                self.substitute(def, params, args, hidden, depth)?
            }
        };
        hidden.insert(def.name.clone());
        let out = self.rescan(&substituted, hidden, depth + 1);
        hidden.remove(&def.name);
        out
    }

    /// Replaces parameters by (pre-expanded) arguments, handling `#` and `##`.
    fn substitute(
        &self,
        def: &MacroDef,
        params: &[String],
        args: &[Vec<String>],
        hidden: &mut HashSet<String>,
        depth: usize,
    ) -> Result<Vec<String>, MacroError> {
        let param_index = |t: &str| params.iter().position(|p| p == t);
        let mut out: Vec<String> = Vec::new();
        let body = &def.body;
        let mut i = 0;
        while i < body.len() {
            let t = &body[i];
            if t == "#" {
                if let Some(p) = body.get(i + 1).and_then(|n| param_index(n)) {
                    out.push(format!(
                        "\"{}\"",
                        args[p].join(" ").replace('\\', "\\\\").replace('"', "\\\"")
                    ));
                    i += 2;
                    continue;
                }
            }
            if t == "##" && !out.is_empty() {
                if let Some(next) = body.get(i + 1) {
                    let rhs = match param_index(next) {
                        Some(p) => args[p].clone(),
                        None => vec![next.clone()],
                    };
                    let lhs = out.pop().unwrap_or_default();
                    if def.variadic && lhs == "," && param_index(next) == Some(params.len() - 1) {
                        // GNU `, ## __VA_ARGS__`: the comma goes when
                        // there are no variable arguments, and is not
                        // pasted to them when there are.
                        if !rhs.is_empty() {
                            out.push(lhs);
                            out.extend(rhs);
                        }
                        i += 2;
                        continue;
                    }
                    let mut rhs = rhs.into_iter();
                    out.push(format!("{lhs}{}", rhs.next().unwrap_or_default()));
                    out.extend(rhs);
                    i += 2;
                    continue;
                }
            }
            match param_index(t) {
                Some(p) => {
                    let pasted = body.get(i + 1).is_some_and(|n| n == "##");
                    if pasted {
                        out.extend(args[p].iter().cloned());
                    } else {
                        out.extend(self.rescan(&args[p], hidden, depth + 1)?);
                    }
                }
                None => out.push(t.clone()),
            }
            if out.len() > MAX_TOKENS {
                return Err(MacroError::TooLarge(def.name.clone()));
            }
            i += 1;
        }
        Ok(out)
    }

    /// Expands every macro invocation in `toks`.
    fn rescan(
        &self,
        toks: &[String],
        hidden: &mut HashSet<String>,
        depth: usize,
    ) -> Result<Vec<String>, MacroError> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < toks.len() {
            let t = &toks[i];
            let def = self.get(t).filter(|_| !hidden.contains(t));
            match def {
                Some(def) if def.params.is_none() => {
                    out.extend(self.expand_invocation(def, &[], hidden, depth)?);
                    i += 1;
                }
                Some(def) if toks.get(i + 1).is_some_and(|n| n == "(") => {
                    let (args, next) = split_token_args(toks, i + 1);
                    out.extend(self.expand_invocation(def, &args, hidden, depth)?);
                    i = next;
                }
                _ => {
                    out.push(t.clone());
                    i += 1;
                }
            }
            // Only what expansions add counts (a long `#if` line is no
            // expansion): past the limit, `t` is the macro just expanded.
            if out.len() > toks.len() + MAX_TOKENS {
                return Err(MacroError::TooLarge(t.clone()));
            }
        }
        Ok(out)
    }
}

/// Splits the parenthesized argument list starting at `toks[open] == "("`;
/// returns the arguments and the index after the closing parenthesis.
fn split_token_args(toks: &[String], open: usize) -> (Vec<Vec<String>>, usize) {
    let mut args = vec![Vec::new()];
    let mut depth = 0;
    let mut i = open;
    while i < toks.len() {
        let t = toks[i].as_str();
        match t {
            "(" | "[" | "{" => {
                depth += 1;
                if depth > 1 {
                    if let Some(a) = args.last_mut() {
                        a.push(t.to_string());
                    }
                }
            }
            ")" | "]" | "}" => {
                depth -= 1;
                if depth == 0 {
                    return (args, i + 1);
                }
                if let Some(a) = args.last_mut() {
                    a.push(t.to_string());
                }
            }
            "," if depth == 1 => args.push(Vec::new()),
            _ => {
                if let Some(a) = args.last_mut() {
                    a.push(t.to_string());
                }
            }
        }
        i += 1;
    }
    (args, i)
}

/// Token texts of a piece of source.
pub fn token_texts(src: &str) -> Vec<String> {
    tokenize(src)
        .iter()
        .map(|t| t.text(src).to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::extract::extract;

    fn expand(defs: &str, name: &str, args: &[&str]) -> Result<String, MacroError> {
        let ex = extract(defs);
        let table = MacroTable::new(&ex.macros);
        let def = table.get(name).unwrap().clone();
        let args: Vec<Vec<String>> = args.iter().map(|a| token_texts(a)).collect();
        table.expand(&def, &args).map(|t| t.join(" "))
    }

    #[test]
    fn object_and_function_like() {
        let defs = "#define N 16\n#define IDX(r,c) ((r)*N+(c))\n";
        assert_eq!(expand(defs, "N", &[]).unwrap(), "16");
        assert_eq!(
            expand(defs, "IDX", &["i + 1", "j"]).unwrap(),
            "( ( i + 1 ) * 16 + ( j ) )"
        );
    }

    #[test]
    fn self_reference_and_paste_and_stringize() {
        let defs = "#define X X + 1\n#define CAT(a,b) a##b\n#define S(a) #a\n";
        assert_eq!(expand(defs, "X", &[]).unwrap(), "X + 1");
        assert_eq!(expand(defs, "CAT", &["foo", "bar"]).unwrap(), "foobar");
        assert_eq!(expand(defs, "S", &["a + b"]).unwrap(), "\"a + b\"");
    }

    #[test]
    fn variadic_macros() {
        let defs = "#define LOG(...) printf(__VA_ARGS__)\n#define P(fmt, args...) f(fmt, ## args)\n#define Q(a, ...) g(a, ## __VA_ARGS__)\n";
        assert_eq!(
            expand(defs, "LOG", &["\"%d\"", "x + 1"]).unwrap(),
            "printf ( \"%d\" , x + 1 )"
        );
        assert_eq!(expand(defs, "LOG", &[""]).unwrap(), "printf ( )");
        assert_eq!(
            expand(defs, "P", &["s", "1", "2"]).unwrap(),
            "f ( s , 1 , 2 )"
        );
        assert_eq!(expand(defs, "Q", &["a"]).unwrap(), "g ( a )");
        assert!(matches!(
            expand(defs, "Q", &[]),
            Err(MacroError::Arity { .. })
        ));
    }

    #[test]
    fn defaults_do_not_replace_earlier_definitions() {
        let ex = extract("#define N 8\n#ifndef N\n#define N 4\n#endif\n#ifndef M\n#define M 2\n#else\n#define M 3\n#endif\n");
        let t = MacroTable::new(&ex.macros);
        assert_eq!(t.get("N").unwrap().body, ["8"]);
        assert_eq!(t.get("M").unwrap().body, ["3"]);
        let ex = extract("#if !defined(K)\n#define K 5\n#endif\n");
        assert!(ex.macros[0].default_only);
    }

    #[test]
    fn mutual_recursion_is_bounded_and_arity_checked() {
        let defs = "#define A B\n#define B A\n#define F(x,y) x\n";
        assert_eq!(expand(defs, "A", &[]).unwrap(), "A");
        assert!(matches!(
            expand(defs, "F", &["1"]),
            Err(MacroError::Arity { .. })
        ));
        let mut big = String::new();
        for i in 0..40 {
            big.push_str(&format!("#define M{i} M{} M{}\n", i + 1, i + 1));
        }
        assert_eq!(
            expand(&big, "M0", &[]),
            Err(MacroError::TooLarge("M0".into()))
        );
        let deep: String = (0..100)
            .map(|i| format!("#define D{i} D{}\n", i + 1))
            .collect();
        assert_eq!(
            expand(&deep, "D0", &[]),
            Err(MacroError::TooDeep("D0".into()))
        );
    }

    #[test]
    fn a_doubling_macro_stops_at_the_statement_limit_at_once() {
        // `A14` is 2^14 copies of `x`; `A40` would be 2^40. Expansion stops
        // once past the limit, after work in proportion to the limit.
        let mut defs = "#define A0 x\n".to_string();
        for i in 1..=40 {
            defs.push_str(&format!("#define A{i} (A{} + A{})\n", i - 1, i - 1));
        }
        for top in ["A14", "A40"] {
            assert_eq!(
                expand(&defs, top, &[]),
                Err(MacroError::TooLarge(top.into()))
            );
        }
        assert!(expand(&defs, "A9", &[]).is_ok());
    }
}
