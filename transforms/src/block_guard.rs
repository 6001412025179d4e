//! A rewrite written for one block shape, made correct for every other:
//! the rewritten body runs under a test of the block shape it was written
//! for, and any other block runs the original body. copper guards a
//! rewrite this way when it only assumed the block (the file launches
//! nothing and no parameter file or `--block` gives one): a guess may
//! steer the search, but the code it writes must stay right for the
//! launch the user really makes.
//!
//! The test reads only `blockDim`, so every thread of a block takes the
//! same side, and barriers inside either side stay block-wide; on the
//! analyzed block the bound engine decides the test and analyzes the fast
//! side alone.

use copper::cuda::ast::{BinOp, Expr, ExprKind, Function, Meta, Space, Stmt, StmtKind};
use copper::cuda::visit::{children_mut, visit_stmt_roots_mut, visit_stmts_mut};
use copper::launch::Dims;
use copper::launch::MAX_STATIC_SHARED_BYTES;
use copper::source::Span;

use crate::ast_util::{self, bin, expr, ident, if_else, int, FileConstants};
use crate::shared_budget::{declares_shared, static_shared_bytes};

/// One size of the block the fast side of a guarded rewrite is written
/// for, as the test reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dim {
    /// This many threads.
    Size(u64),
    /// As many threads as the value of the template's value parameter of
    /// this name (`blockSize` in `reduce6`): each instantiation is written
    /// for its own.
    Parameter(String),
}

impl std::fmt::Display for Dim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dim::Size(n) => write!(f, "{n}"),
            Dim::Parameter(p) => write!(f, "`{p}`"),
        }
    }
}

/// The block `[x, y, z]` as three sizes.
pub fn sizes(block: Dims) -> [Dim; 3] {
    block.to_array().map(Dim::Size)
}

/// `fast` (a function of the text `fast_text`) with its body under `if
/// (blockDim.x == X && blockDim.y == Y && blockDim.z == Z)` (X, Y, Z those
/// of `block`), and
/// `original`'s body (of `original_text`) as the other side; the result's
/// places are in `original_text`: code of the fast body that the edit
/// changed is marked new, so that the edit prints it. The static
/// `__shared__` arrays both bodies declare alike are declared once,
/// before the test; `Err` says why the two sides' other arrays may not
/// fit in shared memory together.
pub fn guarded(
    original: &Function,
    original_text: &str,
    fast: &Function,
    fast_text: &str,
    block: &[Dim; 3],
    constants: &FileConstants,
) -> Result<Function, String> {
    let fast = rebased(fast, fast_text, original_text);
    let test = ["x", "y", "z"]
        .iter()
        .zip(block.iter().map(|d| match d {
            Dim::Size(n) => int(*n),
            Dim::Parameter(p) => ident(p),
        }))
        .map(|(d, n)| {
            let dim = expr(ExprKind::Member {
                base: Box::new(ident("blockDim")),
                field: d.to_string(),
                arrow: false,
            });
            bin(BinOp::Eq, dim, n)
        })
        .reduce(|a, b| bin(BinOp::And, a, b))
        .expect("three dimensions");
    let (mut fast_body, mut slow_body) = (fast.body.clone(), original.body.clone());
    let mut body = shared_by_both(&mut fast_body, &mut slow_body);
    let both_declare = declares_shared(&fast_body, false) && declares_shared(&slow_body, false);
    body.push(if_else(test, fast_body, slow_body));
    let g = Function {
        body,
        ..fast.clone()
    };
    // Each side's own static arrays take shared memory whichever side
    // runs: together they must fit.
    match static_shared_bytes(&g, constants) {
        Some(bytes) if bytes <= MAX_STATIC_SHARED_BYTES => Ok(g),
        Some(bytes) => Err(format!(
            "the static `__shared__` arrays of both sides take {bytes} bytes together, more than {MAX_STATIC_SHARED_BYTES}"
        )),
        None if !both_declare => Ok(g),
        None => Err(
            "both sides declare `__shared__` arrays with sizes copper cannot read as constants, so together they may not fit".into(),
        ),
    }
}

/// The static `__shared__` declarations at the top level of both bodies
/// and written alike, taken out of both to be declared once before the
/// test: a `__shared__` array is one per block wherever it is declared,
/// so declaring it once changes nothing but the shared memory the kernel
/// asks for (declared in both sides, it would be taken twice). One whose
/// name a statement before it reads (an outer variable it shadows) stays.
fn shared_by_both(fast: &mut Vec<Stmt>, slow: &mut Vec<Stmt>) -> Vec<Stmt> {
    let mut hoisted = Vec::new();
    let mut at = 0;
    while at < slow.len() {
        let s = &slow[at];
        let shared = matches!(&s.kind, StmtKind::Decl(ds)
            if !ds.is_empty() && ds.iter().all(|d| d.space == Space::Shared && !d.is_extern && d.init.is_none()));
        let twin = fast.iter().position(|x| ast_util::equiv_stmt(x, s));
        let unread_before = |body: &[Stmt], upto: usize| {
            let names = ast_util::names_in_stmts(&body[..upto]);
            match &s.kind {
                StmtKind::Decl(ds) => ds.iter().all(|d| !names.contains(&d.name)),
                _ => false,
            }
        };
        match twin {
            Some(t) if shared && unread_before(slow, at) && unread_before(fast, t) => {
                fast.remove(t);
                hoisted.push(slow.remove(at));
            }
            _ => at += 1,
        }
    }
    hoisted
}

/// `f`, a function of the text `from`, with its places moved to the text
/// `to` (the file `from` was edited from): a place in the text the two
/// share at their start stays, one in the text they share at their end
/// moves by the difference of their lengths (a header's, past both, stays),
/// and one in between (the
/// edited code) is no place of `to`: it is marked synthetic, so that the
/// edit of `to` prints it instead of taking it for the code of `to` that
/// stands there (a literal `32` where `to` invokes the macro `WARP`).
fn rebased(f: &Function, from: &str, to: &str) -> Function {
    let (a, b) = (from.as_bytes(), to.as_bytes());
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let room = a.len().min(b.len()) - prefix;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    let place = |m: &mut Meta| {
        let span = m.span;
        // Included text (a header's) is at the same places in both.
        if span.is_synthetic() || span.end <= prefix || span.start >= a.len() {
            return;
        }
        m.span = match span.start >= a.len() - suffix {
            true => Span::new(span.start - a.len() + b.len(), span.end - a.len() + b.len()),
            false => Span::SYNTHETIC,
        };
    };
    fn exprs(e: &mut Expr, place: &impl Fn(&mut Meta)) {
        place(&mut e.meta);
        for c in children_mut(e) {
            exprs(c, place);
        }
    }
    let mut out = f.clone();
    for s in &mut out.body {
        visit_stmts_mut(s, &mut |x| {
            place(&mut x.meta);
            if let StmtKind::Decl(ds) = &mut x.kind {
                ds.iter_mut().for_each(|d| place(&mut d.meta));
            }
        });
        visit_stmt_roots_mut(s, &mut |e| exprs(e, &place));
    }
    out
}

/// The sentence that says what a guarded rewrite assumes.
pub fn describe(block: &[Dim; 3]) -> String {
    let [x, y, z] = block;
    let whose = match block.iter().any(|d| matches!(d, Dim::Parameter(_))) {
        true => "the block each instantiation of the template is written for",
        false => "the block copper assumed",
    };
    format!(
        "the rewritten code runs only on blocks of {x}×{y}×{z}, {whose}; any other block runs the original code"
    )
}

#[cfg(test)]
mod tests {
    use super::{guarded, sizes, FileConstants};
    use copper::cuda::ast::StmtKind;
    use copper::cuda::edit::function_text;
    use copper::cuda::parse::parse_source;
    use copper::cuda::print;
    use copper::source::SourceFile;

    /// The fast body runs under the block test, the original body in the
    /// other branch, and the result prints as CUDA that parses back.
    #[test]
    fn the_original_body_runs_on_every_other_block() {
        let src = "__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n__global__ void f(float *a) { a[threadIdx.x + threadIdx.y * 16] = 1.0f; }\n";
        let file = parse_source(SourceFile::new("k.cu", src));
        let (k, f) = (file.function("k").unwrap(), file.function("f").unwrap());
        let g = guarded(
            k,
            src,
            &copper::cuda::ast::Function {
                name: "k".into(),
                ..f.clone()
            },
            src,
            &sizes(copper::launch::block([16, 16, 1]).unwrap()),
            &FileConstants::default(),
        )
        .expect("no shared memory");
        let text = print::function(&g);
        assert!(
            text.contains("if (blockDim.x == 16 && blockDim.y == 16 && blockDim.z == 1) {"),
            "{text}"
        );
        let then_at = text.find("threadIdx.y * 16").unwrap();
        let else_at = text.find("} else {").unwrap();
        assert!(then_at < else_at, "{text}");
        assert!(text[else_at..].contains("a[threadIdx.x] = 1.0f;"), "{text}");
        let back = parse_source(SourceFile::new("g.cu", &text));
        assert!(back.function("k").is_some(), "{text}");
    }

    /// A `__shared__` array both sides declare alike is declared once,
    /// before the test (declared in each side it would take its bytes
    /// twice: 2 × 30 KiB does not launch); arrays each side declares
    /// apart must fit together.
    #[test]
    fn arrays_both_sides_declare_are_declared_once() {
        let src = "__global__ void k(float *a) {\n    int t = threadIdx.x;\n    __shared__ float s[7680];\n    s[t] = a[t];\n    __syncthreads();\n    a[t] = s[t + 1];\n}\n";
        let fast = src.replace("s[t + 1]", "s[t + 2]");
        let (o, f) = (
            parse_source(SourceFile::new("k.cu", src)),
            parse_source(SourceFile::new("k.cu", fast.as_str())),
        );
        let (of, ff) = (o.function("k").unwrap(), f.function("k").unwrap());
        let g = guarded(
            of,
            src,
            ff,
            &fast,
            &sizes(copper::launch::block([256, 1, 1]).unwrap()),
            &FileConstants::default(),
        )
        .expect("one array of 30 KiB");
        assert!(matches!(g.body[0].kind, StmtKind::Decl(_)), "{g:?}");
        let text = function_text(src, of, &g, &o.extracted.macros).unwrap();
        assert_eq!(text.matches("__shared__").count(), 1, "{text}");
        // Another array in the fast side: 30 + 30 KiB do not fit.
        let other = fast.replace("s[7680]", "z[7680]").replace("s[t", "z[t");
        let f = parse_source(SourceFile::new("k.cu", other.as_str()));
        let why = guarded(
            of,
            src,
            f.function("k").unwrap(),
            &other,
            &sizes(copper::launch::block([256, 1, 1]).unwrap()),
            &FileConstants::default(),
        )
        .unwrap_err();
        assert_eq!(
            why,
            "the static `__shared__` arrays of both sides take 61440 bytes together, more than 49152"
        );
        // A name read before the declaration may be an outer variable it
        // shadows: the array stays in each side.
        let shadow = src.replace(
            "int t = threadIdx.x;",
            "int t = threadIdx.x + (int)sizeof(s);",
        );
        let fast = shadow.replace("s[t + 1]", "s[t + 2]");
        let (o, f) = (
            parse_source(SourceFile::new("k.cu", shadow.as_str())),
            parse_source(SourceFile::new("k.cu", fast.as_str())),
        );
        let g = guarded(
            o.function("k").unwrap(),
            &shadow,
            f.function("k").unwrap(),
            &fast,
            &sizes(copper::launch::block([256, 1, 1]).unwrap()),
            &FileConstants::default(),
        );
        assert!(g.is_err(), "{g:?}");
    }

    /// The fast body, parsed from the edited text, keeps the places of
    /// the code the edit left (before it, and after it moved by the
    /// length the edit changed); the edited statement, where the original
    /// invokes the macro `WARP`, is new, so the guarded function is an
    /// edit of the original that prints the literal in the fast path and
    /// keeps `WARP` in the original's.
    #[test]
    fn the_fast_body_keeps_only_the_places_the_edit_left() {
        let original = "#define WARP 32\n__global__ void k(int *a) {\n    a[0] = 1;\n    if (threadIdx.x < WARP) a[1] = 2;\n    a[2] = 3;\n}\n";
        let edited = original.replace("< WARP) a[1] = 2", "< 32) a[1] = 4");
        let o = parse_source(SourceFile::new("k.cu", original));
        let e = parse_source(SourceFile::new("k.cu", edited.as_str()));
        let (of, ef) = (o.function("k").unwrap(), e.function("k").unwrap());
        let g = guarded(
            of,
            original,
            ef,
            &edited,
            &sizes(copper::launch::block([256, 1, 1]).unwrap()),
            &FileConstants::default(),
        )
        .expect("no shared memory");
        let StmtKind::If {
            then,
            els: Some(els),
            ..
        } = &g.body[0].kind
        else {
            panic!("no guard")
        };
        let (StmtKind::Block(fast), StmtKind::Block(slow)) = (&then.kind, &els.kind) else {
            panic!("no blocks")
        };
        assert_eq!(fast[0].meta.span, of.body[0].meta.span);
        assert!(fast[1].meta.span.is_synthetic());
        assert_eq!(fast[2].meta.span, of.body[2].meta.span);
        assert_eq!(slow[1].meta.span, of.body[1].meta.span);
        let text = function_text(original, of, &g, &o.extracted.macros).unwrap();
        assert!(text.contains("if (threadIdx.x < 32)"), "{text}");
        assert!(text.contains("a[1] = 4;"), "{text}");
        assert!(text.contains("if (threadIdx.x < WARP) a[1] = 2;"), "{text}");
    }
}
