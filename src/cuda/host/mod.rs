//! A small evaluator over the host code before a launch: the file-scope
//! declarations and the straight-line statements of the function holding
//! `kernel<<<grid, block>>>(args)`, so that `dim3 grid((n + 15) / 16)`,
//! `int threads = 256;`, `const int N = 1 << 20;` and
//! `cudaMalloc(&d_a, n * sizeof(float))` give the launch's shape, its
//! integer arguments and the bytes behind its pointer arguments.
//!
//! Only integer declarations, assignments and `cudaMalloc` calls are
//! evaluated. What is assigned under a condition or in a loop, passed by
//! address to another function, or computed from what copper cannot
//! evaluate becomes unknown, and everything depending on it stays unknown:
//! the evaluator gives up on a value, never guesses it.

use std::cell::RefCell;
use std::collections::HashMap;

use super::extract::LaunchSite;
use super::lex::tokenize;
use super::macros::{token_texts, MacroTable};

mod expr;
mod sizes;
mod walk;

use expr::Parser;
pub(crate) use expr::BINARY_LEVELS;
pub use sizes::{struct_sizes, StructSizes};
use walk::{Followed, HostTokens, Walk};

/// A value of host code copper can follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// An integer.
    Int(i128),
    /// A `dim3`.
    Dim3([i128; 3]),
}

impl Value {
    /// As a launch dimension (an integer `n` is `n × 1 × 1`); `None` unless
    /// every dimension is positive.
    pub fn dims(self) -> Option<[u64; 3]> {
        let d = match self {
            Value::Int(n) => [n, 1, 1],
            Value::Dim3(d) => d,
        };
        d.iter()
            .all(|&x| x > 0 && x <= u32::MAX as i128)
            .then(|| d.map(|x| x as u64))
    }
}

/// One argument of a launch, as the host code before it determines it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostArg {
    /// The argument as written.
    pub text: String,
    /// Its integer value, when known.
    pub value: Option<i128>,
    /// For a pointer argument: the bytes `cudaMalloc` gave it, when known.
    pub bytes: Option<u64>,
}

/// The host code's view of one launch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostLaunch {
    /// Grid shape, when known.
    pub grid: Option<[u64; 3]>,
    /// Block shape, when known.
    pub block: Option<[u64; 3]>,
    /// Bytes of dynamic shared memory (the third `<<<…>>>` argument; 0
    /// when there is none), when known.
    pub shared_bytes: Option<u64>,
    /// The call's arguments.
    pub args: Vec<HostArg>,
    /// Host variables whose values the launch uses, as evaluated (for
    /// [`evaluate`]'s `overrides`): those declared with a value that needs
    /// no other variable.
    pub inputs: Vec<(String, i128)>,
}

/// Most walks through the host code kept (one per set of overrides).
const MAX_WALKS: usize = 16;

/// The walks [`HostCode`] keeps, each stopped at the last launch it
/// evaluated, by the overrides it was made with (sorted).
type Walks = HashMap<Vec<(String, i128)>, (Walk, Followed)>;

/// The host code of a file, read once for all its launches.
pub struct HostCode<'s> {
    src: &'s str,
    toks: HostTokens,
    /// Walks to go on from, so that the launches of a file evaluated in
    /// order take one walk through it (per set of overrides), not one each.
    walks: RefCell<Walks>,
}

impl<'s> HostCode<'s> {
    /// The host code of the file text `src`.
    pub fn new(src: &'s str) -> HostCode<'s> {
        HostCode {
            src,
            toks: HostTokens::new(src),
            walks: RefCell::default(),
        }
    }

    /// Evaluates the launch at `site`, with the host variables of
    /// `overrides` declared with those values instead of their
    /// initializers; `sizes` are the file's structs' (for `sizeof`).
    /// The walk to it goes on from that to an earlier launch with the same
    /// overrides (what that followed was read with its own macros).
    pub fn evaluate(
        &self,
        site: &LaunchSite,
        macros: &MacroTable,
        sizes: &StructSizes,
        overrides: &HashMap<String, i128>,
    ) -> HostLaunch {
        let mut key: Vec<(String, i128)> = overrides.iter().map(|(k, v)| (k.clone(), *v)).collect();
        key.sort();
        let target = self.toks.index_at(site.span.start);
        let mut walks = self.walks.borrow_mut();
        let (mut walk, followed) = match walks.remove(&key) {
            Some((walk, followed)) if walk.target() <= target => (walk, followed),
            _ => (Walk::default(), Followed::default()),
        };
        let mut ev = Evaluator::new(macros, sizes, overrides);
        ev.followed = followed;
        walk.to(&self.toks, &mut ev, target);
        let launch = self.launch(&ev, site);
        if walks.len() < MAX_WALKS {
            walks.insert(key, (walk, ev.followed));
        }
        launch
    }

    /// Whether `name` is declared before file offset `offset`.
    pub fn declared_before(&self, name: &str, offset: usize) -> bool {
        self.toks.declared_before(name, offset)
    }

    /// The launch at `site`, `ev` having followed the host code to it.
    fn launch(&self, ev: &Evaluator, site: &LaunchSite) -> HostLaunch {
        let src = self.src;
        let (start, end) = (site.span.start, site.span.end);
        let grid = ev.eval_text(&site.grid).and_then(Value::dims);
        let block = ev.eval_text(&site.block).and_then(Value::dims);
        let config = token_texts(&src[start.min(end)..end.min(src.len())]);
        let config = match config.iter().position(|t| t == "<<<") {
            Some(p) if config.last().is_some_and(|t| t == ">>>") => {
                &config[p + 1..config.len() - 1]
            }
            _ => &[][..],
        };
        let shared_bytes = match split_top(config, ",").get(2) {
            None => Some(0),
            Some(e) => match ev.eval_tokens(e) {
                Some(Value::Int(b)) => u64::try_from(b).ok(),
                _ => None,
            },
        };
        let args = call_args(src, end)
            .into_iter()
            .map(|text| {
                let toks = token_texts(&text);
                let value = match ev.eval_tokens(&toks) {
                    Some(Value::Int(v)) => Some(v),
                    _ => None,
                };
                let bytes =
                    pointer_name(&toks).and_then(|n| ev.followed.bytes.get(n).copied().flatten());
                HostArg { text, value, bytes }
            })
            .collect();
        HostLaunch {
            grid,
            block,
            shared_bytes,
            args,
            inputs: ev.followed.inputs.clone(),
        }
    }
}

/// The arguments of the call `(…)` right after offset `end`.
pub(crate) fn call_args(src: &str, end: usize) -> Vec<String> {
    let rest = &src[end.min(src.len())..];
    // Read from a piece that doubles until the call closes in it, so that
    // a call costs its own length, not the rest of the file's.
    let mut len = 256;
    loop {
        let mut cut = len.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        match call_args_in(&rest[..cut], cut == rest.len()) {
            Some(args) => return args,
            None if cut == rest.len() => return Vec::new(),
            None => len *= 2,
        }
    }
}

/// The arguments of the call `(…)` at the start of `rest`; `None` when it
/// does not close in `rest` (whose last token may be cut unless `whole`).
fn call_args_in(rest: &str, whole: bool) -> Option<Vec<String>> {
    let toks = tokenize(rest);
    let Some(first) = toks.first() else {
        // Nothing but a comment or space yet.
        return whole.then(Vec::new);
    };
    if !first.is(rest, "(") {
        return Some(Vec::new());
    }
    // A last token cut short does not count.
    let read = &toks[..toks.len() - usize::from(!whole)];
    let mut depth = 0;
    let mut args = Vec::new();
    let mut from = toks[0].end;
    for t in read {
        match t.text(rest) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => {
                depth -= 1;
                if depth == 0 {
                    let last = rest[from..t.start].trim();
                    if !last.is_empty() || !args.is_empty() {
                        args.push(last.to_string());
                    }
                    return Some(args);
                }
            }
            "," if depth == 1 => {
                args.push(rest[from..t.start].trim().to_string());
                from = t.end;
            }
            _ => {}
        }
    }
    None
}

/// The variable an argument names (`d_a`, `(float *)d_a`).
fn pointer_name(toks: &[String]) -> Option<&str> {
    let last = toks.last()?;
    let ident = last.starts_with(|c: char| c.is_alphabetic() || c == '_');
    let before_ok = toks.len() == 1 || toks[toks.len() - 2] == ")";
    (ident && before_ok).then_some(last.as_str())
}

/// Integer and `dim3` type words of host declarations.
const TYPE_WORDS: &[&str] = &[
    "const",
    "constexpr",
    "static",
    "unsigned",
    "signed",
    "int",
    "long",
    "short",
    "char",
    "size_t",
    "int32_t",
    "int64_t",
    "uint32_t",
    "uint64_t",
    "auto",
    "dim3",
    "bool",
];

/// The value of an integer constant expression (`BS * 2`, `1 << 8`,
/// `DIV_UP(N, 32)`: macros expanded, no variables); `None` when it is not
/// one.
pub(crate) fn constant(toks: &[String], macros: &MacroTable) -> Option<i128> {
    let overrides = HashMap::new();
    let sizes = StructSizes::new();
    let ev = Evaluator::new(macros, &sizes, &overrides);
    match ev.eval_tokens(toks)? {
        Value::Int(v) => Some(v),
        Value::Dim3(_) => None,
    }
}

struct Evaluator<'a> {
    macros: &'a MacroTable,
    /// `sizeof` of the file's structs.
    sizes: &'a StructSizes,
    /// The variables followed so far.
    followed: Followed,
    overrides: &'a HashMap<String, i128>,
}

impl<'a> Evaluator<'a> {
    fn new(
        macros: &'a MacroTable,
        sizes: &'a StructSizes,
        overrides: &'a HashMap<String, i128>,
    ) -> Evaluator<'a> {
        Evaluator {
            macros,
            sizes,
            followed: Followed::default(),
            overrides,
        }
    }

    /// Makes unknown every variable `toks` may change.
    fn forget_assigned(&mut self, toks: &[String]) {
        for (j, w) in toks.iter().enumerate() {
            let next = toks.get(j + 1).map(String::as_str).unwrap_or("");
            let prev = j.checked_sub(1).map_or("", |p| toks[p].as_str());
            let assigned = matches!(
                next,
                "=" | "+="
                    | "-="
                    | "*="
                    | "/="
                    | "%="
                    | "<<="
                    | ">>="
                    | "&="
                    | "|="
                    | "^="
                    | "++"
                    | "--"
            ) || matches!(prev, "&" | "++" | "--" | ">>");
            if assigned {
                // `grid.x = …` changes `grid`.
                let w = if prev == "." && j >= 2 {
                    &toks[j - 2]
                } else {
                    w
                };
                if let Some(v) = self.followed.vars.get_mut(w) {
                    *v = None;
                }
                if let Some(b) = self.followed.bytes.get_mut(w) {
                    *b = None;
                }
            }
        }
    }

    /// One statement (without its `;`).
    fn statement(&mut self, toks: &[String]) {
        if toks.is_empty() {
            return;
        }
        if is_keyword(&toks[0]) {
            self.forget_assigned(toks);
            return;
        }
        if let Some(p) = toks
            .iter()
            .position(|w| w == "cudaMalloc" || w == "cudaMallocManaged")
        {
            self.malloc(&toks[p + 1..]);
            return;
        }
        let mut k = 0;
        while toks
            .get(k)
            .is_some_and(|w| TYPE_WORDS.contains(&w.as_str()))
        {
            k += 1;
        }
        let is_dim3 = toks[..k].iter().any(|w| w == "dim3");
        if k > 0 && toks.get(k).is_some_and(|w| w != "(") {
            self.declaration(&toks[k..], is_dim3);
            return;
        }
        // Other declarations (`float *d_a;`, `float alpha = 2.0f;`): the
        // names become unknown (they may shadow an integer).
        if k == 0 && toks.len() >= 2 && is_ident(&toks[0]) && !is_keyword(&toks[0]) {
            let declared = toks[1..]
                .iter()
                .find(|w| *w != "*" && *w != "&")
                .filter(|w| is_ident(w));
            if let Some(name) = declared.filter(|_| toks[1] != "=" && !toks[1].ends_with('=')) {
                self.followed.vars.insert(name.clone(), None);
                self.followed.bytes.insert(name.clone(), None);
                return;
            }
        }
        match toks {
            [name, dot, field, op, rest @ ..] if dot == "." && op == "=" => {
                let k = ["x", "y", "z"].iter().position(|f| f == field);
                let v = self.eval_tokens(rest);
                if let Some(slot) = self.followed.vars.get_mut(name) {
                    *slot = match (*slot, k, v) {
                        (Some(Value::Dim3(mut d)), Some(k), Some(Value::Int(x))) => {
                            d[k] = x;
                            Some(Value::Dim3(d))
                        }
                        _ => None,
                    };
                }
            }
            [name, op, rest @ ..] if is_ident(name) && op == "=" => {
                let v = self.eval_tokens(rest);
                if self.followed.vars.contains_key(name) {
                    self.followed.vars.insert(name.clone(), v);
                }
            }
            _ => self.forget_assigned(toks),
        }
    }

    /// `name = e, name(e, …), name{…}` after the type words.
    fn declaration(&mut self, toks: &[String], is_dim3: bool) {
        for decl in split_top(toks, ",") {
            let Some(name) = decl.iter().find(|w| is_ident(w)).cloned() else {
                continue;
            };
            let pos = decl.iter().position(|w| *w == name).unwrap_or(0);
            let init = &decl[pos + 1..];
            if decl[..pos].iter().any(|w| w == "*") {
                self.followed.bytes.insert(name.clone(), None);
                self.followed.vars.insert(name, None);
                continue;
            }
            let value = match init.first().map(String::as_str) {
                Some("=") => self.eval_tokens(&init[1..]),
                Some("(") | Some("{") if init.len() >= 2 => {
                    let inner = &init[1..init.len() - 1];
                    if is_dim3 {
                        self.dim3(inner)
                    } else {
                        self.eval_tokens(inner)
                    }
                }
                None if is_dim3 => Some(Value::Dim3([1, 1, 1])),
                _ => None,
            };
            let value = match (value, is_dim3) {
                (Some(Value::Int(n)), true) => Some(Value::Dim3([n, 1, 1])),
                (v, _) => v,
            };
            let value = match (self.overrides.get(&name), value) {
                (Some(&o), Some(Value::Int(_))) => Some(Value::Int(o)),
                (_, v) => v,
            };
            if let Some(Value::Int(v)) = value {
                // A value that needs no other variable: an input the caller
                // may replace to scale the launch down.
                if init.iter().all(|w| !self.followed.vars.contains_key(w)) {
                    self.followed.inputs.retain(|(n, _)| *n != name);
                    self.followed.inputs.push((name.clone(), v));
                }
            }
            self.followed.bytes.remove(&name);
            self.followed.vars.insert(name, value);
        }
    }

    /// `(&d_a, bytes)` or `((void **)&d_a, bytes)`.
    fn malloc(&mut self, toks: &[String]) {
        let Some(inner) = toks
            .first()
            .filter(|o| *o == "(")
            .map(|_| &toks[1..])
            .and_then(|t| {
                t.iter()
                    .scan(1i32, |d, w| {
                        *d += (w == "(") as i32 - (w == ")") as i32;
                        Some(*d)
                    })
                    .position(|d| d == 0)
                    .map(|c| &t[..c])
            })
        else {
            return;
        };
        let parts = split_top(inner, ",");
        let [target, size, ..] = parts.as_slice() else {
            return;
        };
        let Some(amp) = target.iter().position(|w| w == "&") else {
            return;
        };
        let Some(name) = target.get(amp + 1).filter(|w| is_ident(w)) else {
            return;
        };
        let bytes = match self.eval_tokens(size) {
            Some(Value::Int(b)) if b >= 0 => u64::try_from(b).ok(),
            _ => None,
        };
        self.followed.bytes.insert(name.clone(), bytes);
    }

    fn dim3(&self, inner: &[String]) -> Option<Value> {
        let parts = split_top(inner, ",");
        if parts.is_empty() || parts.len() > 3 {
            return None;
        }
        let mut d = [1i128; 3];
        for (k, p) in parts.iter().enumerate() {
            let Value::Int(v) = self.eval_tokens(p)? else {
                return None;
            };
            d[k] = v;
        }
        Some(Value::Dim3(d))
    }

    fn eval_text(&self, text: &str) -> Option<Value> {
        self.eval_tokens(&token_texts(text))
    }

    fn eval_tokens(&self, toks: &[String]) -> Option<Value> {
        let mut p = Parser {
            ev: self,
            toks,
            pos: 0,
            depth: 0,
            nest: 0,
        };
        let v = p.ternary()?;
        (p.pos == toks.len()).then_some(v)
    }
}

fn is_ident(w: &str) -> bool {
    w.starts_with(|c: char| c.is_alphabetic() || c == '_')
}

fn is_keyword(w: &str) -> bool {
    matches!(
        w,
        "return"
            | "if"
            | "else"
            | "for"
            | "while"
            | "do"
            | "switch"
            | "case"
            | "delete"
            | "goto"
            | "break"
            | "continue"
            | "throw"
            | "new"
            | "using"
            | "typedef"
            | "namespace"
    )
}

/// `toks` split at top-level occurrences of `sep`.
fn split_top<'t>(toks: &'t [String], sep: &str) -> Vec<&'t [String]> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut from = 0;
    for (i, w) in toks.iter().enumerate() {
        match w.as_str() {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            _ if w == sep && depth == 0 => {
                out.push(&toks[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    if from < toks.len() {
        out.push(&toks[from..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::extract::extract;

    #[test]
    fn constants_are_integer_expressions_without_variables() {
        let macros = MacroTable::new(&[]);
        let c = |t: &str| constant(&token_texts(t), &macros);
        assert_eq!(c("1 << 8"), Some(256));
        assert_eq!(c("-1"), Some(-1));
        assert_eq!(c("(64 + 31) / 32 * 2"), Some(4));
        assert_eq!(c("n * 2"), None);
    }

    #[test]
    fn nesting_far_past_the_limit_is_no_value_not_a_crash() {
        let n = 100 * crate::cuda::limits::MAX_NESTING;
        let deep = [
            format!("{}1{}", "(".repeat(n), ")".repeat(n)),
            format!("{}1", "- ".repeat(n)),
            format!("{}1", "(int) ".repeat(n)),
            format!("{}1", "1 ? ".repeat(n)) + &" : 0".repeat(n),
        ];
        for e in deep {
            let got =
                crate::on_small_stack(move || constant(&token_texts(&e), &MacroTable::new(&[])));
            assert_eq!(got, None);
        }
        let shallow = format!("{}1{}", "(".repeat(50), ")".repeat(50));
        assert_eq!(
            constant(&token_texts(&shallow), &MacroTable::new(&[])),
            Some(1)
        );
    }

    fn launch(src: &str) -> HostLaunch {
        launch_with(src, &HashMap::new())
    }

    fn launch_with(src: &str, overrides: &HashMap<String, i128>) -> HostLaunch {
        let ex = extract(src);
        let m = MacroTable::new(&ex.macros);
        let l = ex.launches.last().expect("a launch");
        HostCode::new(src).evaluate(l, &m, &StructSizes::new(), overrides)
    }

    const MAIN: &str = "#define TILE 16\n#define DIV_UP(a, b) (((a) + (b) - 1) / (b))\n\
        const int M = 100;\n__global__ void k(float *a, float *b, int n, int m) {}\n\
        int main() {\n  int n = 1 << 10;\n  size_t bytes = n * M * sizeof(float);\n  float *d_a, *d_b;\n\
        CHECK(cudaMalloc(&d_a, bytes));\n  cudaMalloc((void **)&d_b, n * sizeof(float));\n\
        dim3 block(TILE, TILE);\n  dim3 grid(DIV_UP(n, block.x), (M + TILE - 1) / TILE);\n\
        k<<<grid, block>>>(d_a, d_b, n, M);\n}\n";

    #[test]
    fn computed_shapes_arguments_and_allocations() {
        let l = launch(MAIN);
        assert_eq!(l.grid, Some([64, 7, 1]));
        assert_eq!(l.block, Some([16, 16, 1]));
        let values: Vec<Option<i128>> = l.args.iter().map(|a| a.value).collect();
        assert_eq!(values, [None, None, Some(1024), Some(100)]);
        assert_eq!(l.args[0].bytes, Some(1024 * 100 * 4));
        assert_eq!(l.args[1].bytes, Some(1024 * 4));
        assert_eq!(l.shared_bytes, Some(0));
        assert_eq!(l.inputs, [("M".to_string(), 100), ("n".to_string(), 1024)]);
        // Scaled down: everything that depends on `n` follows.
        let small = launch_with(MAIN, &[("n".to_string(), 40)].into_iter().collect());
        assert_eq!(small.grid, Some([3, 7, 1]));
        assert_eq!(small.args[1].bytes, Some(160));
    }

    #[test]
    fn sizeof_a_type_macro_is_the_size_of_its_expansion() {
        let src = "#define REAL double\n#define VEC float4\n__global__ void k(REAL *a, VEC *b) {}\n\
                   int main() {\n REAL *d_a; VEC *d_b;\n cudaMalloc(&d_a, 100 * sizeof(REAL));\n\
                   cudaMalloc(&d_b, 10 * sizeof(VEC));\n k<<<1, 32, 32 * sizeof(REAL)>>>(d_a, d_b);\n}\n";
        let l = launch(src);
        assert_eq!(l.args[0].bytes, Some(800));
        assert_eq!(l.args[1].bytes, Some(160));
        assert_eq!(l.shared_bytes, Some(256));
    }

    #[test]
    fn threads_variable_and_ternary() {
        let src = "int main(int argc, char **argv) {\n int n = 1000; int threads = 256;\n\
                   int blocks = (n + threads - 1) / threads;\n k<<<blocks, threads>>>(x, n);\n}";
        let l = launch(src);
        assert_eq!((l.grid, l.block), (Some([4, 1, 1]), Some([256, 1, 1])));
        let src = src.replace("threads>>>", "threads, threads * sizeof(float)>>>");
        assert_eq!(launch(&src).shared_bytes, Some(1024));
    }

    #[test]
    fn conditional_and_unknown_values_give_up() {
        let unknown = [
            "int main(int argc, char **argv) { int n = atoi(argv[1]); k<<<n / 256, 256>>>(x, n); }",
            "int main() { int n = 1024; if (flag) n = 2048; k<<<n / 256, 256>>>(x, n); }",
            "int main() { int n = 1024; for (int i = 0; i < 3; i++) { n *= 2; } k<<<n / 256, 256>>>(x, n); }",
            "int main() { int n = 1024; scanf(\"%d\", &n); k<<<n / 256, 256>>>(x, n); }",
            "int main() { float f = 2.5f; k<<<f, 256>>>(x, 1); }",
        ];
        for src in unknown {
            let l = launch(src);
            assert_eq!(l.grid, None, "{src}");
            assert_eq!(l.block, Some([256, 1, 1]), "{src}");
        }
        // What another function declares does not leak in.
        let src = "void f() { int n = 5; }\nint main() { k<<<n, 32>>>(x); }";
        assert_eq!(launch(src).grid, None);
    }
}
