//! The constructs outside copper's kernel subset: C++ keywords, texture
//! and surface functions, lambdas, references, scope resolution, dynamic
//! parallelism; and the token tests that tell them from C (functional
//! casts, angle brackets).

use super::{Names, UnitError, VECTOR_BASES};
use crate::cuda::lex::{TokKind, Token};

/// C++ keywords that have no meaning in copper's C subset.
pub(super) const CXX_KEYWORDS: &[&str] = &[
    "new",
    "delete",
    "class",
    "namespace",
    "operator",
    "throw",
    "try",
    "catch",
    "virtual",
    "typename",
    "using",
    "nullptr",
    "decltype",
];

/// The texture fetches and surface reads and writes of the CUDA runtime
/// that copper does not model (`tex1Dfetch`, `tex2D` and `tex3D` on
/// texture objects and the 1-D and 2-D surface reads and writes are, see
/// `ir::lower::textures` and `ir::lower::surfaces`).
pub(super) const TEXTURE_FUNCTIONS: &[&str] = &[
    "tex1D",
    "tex1DLod",
    "tex2DLod",
    "tex3DLod",
    "tex1DGrad",
    "tex2DGrad",
    "tex3DGrad",
    "tex1DLayered",
    "tex2DLayered",
    "tex2Dgather",
    "texCubemap",
    "texCubemapLayered",
    "surf3Dread",
    "surf3Dwrite",
    "surf1DLayeredread",
    "surf1DLayeredwrite",
    "surf2DLayeredread",
    "surf2DLayeredwrite",
    "surfCubemapread",
    "surfCubemapwrite",
];

pub(super) fn unsupported_word(word: &str) -> Option<String> {
    Some(match word {
        "template" => "templates".into(),
        "goto" => "`goto` statements".into(),
        "asm" | "__asm__" | "__asm" => "inline assembly statements".into(),
        "dynamic_cast" => "`dynamic_cast`s".into(),
        "static_cast" | "reinterpret_cast" | "const_cast" => {
            "C++ casts without `<type>(expression)`".into()
        }
        w if CXX_KEYWORDS.contains(&w) => format!("C++ `{w}` expressions and declarations"),
        "cooperative_groups" | "coalesced_group" | "coalesced_threads" => {
            format!("cooperative groups (`{word}`)")
        }
        w if TEXTURE_FUNCTIONS.contains(&w) => format!("textures and surfaces (`{w}`)"),
        _ => return None,
    })
}

/// Rejects punctuation that means a C++ or CUDA construct outside the subset.
pub(super) fn unsupported_punct(
    piece: &str,
    toks: &[Token],
    i: usize,
    at: usize,
    names: &Names,
) -> Result<(), UnitError> {
    let err = |what: &str| {
        Err(UnitError {
            offset: at,
            code: "unsupported",
            message: format!("{what} are not supported in kernels"),
        })
    };
    let text = toks[i].text(piece);
    let prev = i.checked_sub(1).map(|p| toks[p]);
    match text {
        "<<<" => err("kernel launches inside a kernel (dynamic parallelism)"),
        "::" => err("C++ scope resolution (`::`)"),
        "&&" if is_reference(piece, toks, i, names) => err("C++ rvalue references"),
        "[" => {
            let indexing = prev
                .is_some_and(|p| p.kind == TokKind::Ident || matches!(p.text(piece), "]" | ")"));
            let Some(close) = crate::cuda::extract::matching(piece, toks, i) else {
                return Ok(());
            };
            let then_call = toks
                .get(close + 1)
                .is_some_and(|n| matches!(n.text(piece), "(" | "{"));
            if !indexing && then_call {
                err("lambda expressions")
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

/// Whether the `&`/`&&` at token `i` declares a reference: it follows a
/// type (or a `*` of one) and precedes a name, `)`, `,` or the `>` of a
/// cast's type.
pub(super) fn is_reference(piece: &str, toks: &[Token], i: usize, names: &Names) -> bool {
    let is_type_at = |p: usize| {
        let s = toks[p].text(piece);
        (toks[p].kind == TokKind::Ident
            && ((names.is_type)(s) || is_type_keyword(s) || s == "auto"))
            || is_instance_end(piece, toks, p, names)
    };
    // `T &x`, or `T *&p` (a reference to a pointer); `x * &a` multiplies.
    let after_type = i
        .checked_sub(1)
        .is_some_and(|p| is_type_at(p) || (toks[p].is(piece, "*") && p > 0 && is_type_at(p - 1)));
    let before_name = toks
        .get(i + 1)
        .is_some_and(|n| n.kind == TokKind::Ident || matches!(n.text(piece), ")" | "," | ">"));
    after_type && before_name
}

/// Whether token `p` is the `>` closing an instance of a template struct
/// (`Pair<T>` in `const Pair<T> &m`).
fn is_instance_end(piece: &str, toks: &[Token], p: usize, names: &Names) -> bool {
    if !toks[p].is(piece, ">") {
        return false;
    }
    let mut depth = 0usize;
    for open in (0..=p).rev() {
        match toks[open].text(piece) {
            ">" => depth += 1,
            "<" => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            let Some(name) = open.checked_sub(1).map(|n| toks[n].text(piece)) else {
                return false;
            };
            let args = &piece[toks[open].end..toks[p].start];
            return (names.instance)(name, args).is_some_and(|r| r.is_ok());
        }
    }
    false
}

/// Whether `name(` can be a functional cast: a one-word scalar type, or a
/// type name that is not a CUDA vector type (whose `T(…)` would be a
/// constructor).
pub(super) fn is_cast_type(name: &str, names: &Names) -> bool {
    let keyword = matches!(
        name,
        "int" | "float" | "double" | "char" | "short" | "long" | "unsigned" | "signed" | "bool"
    );
    let vector = VECTOR_BASES.iter().any(|b| {
        name.strip_prefix(b)
            .is_some_and(|n| matches!(n, "1" | "2" | "3" | "4"))
    }) || matches!(
        name,
        "dim3" | "half2" | "__half2" | "nv_bfloat162" | "__nv_bfloat162"
    );
    keyword || ((names.is_type)(name) && !vector)
}

/// Index of the `>` closing the `<` at token `open` (template arguments or
/// a cast's type), if it closes before a `;`, `{` or `}`.
pub(crate) fn angle_close(piece: &str, toks: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0i32;
    let mut j = open;
    while j < toks.len() {
        match toks[j].text(piece) {
            "<" => depth += 1,
            ">" => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            "(" | "[" => j = crate::cuda::extract::matching(piece, toks, j)?,
            ";" | "{" | "}" | ">>" | ">>>" => return None,
            _ => {}
        }
        j += 1;
    }
    None
}

fn is_type_keyword(s: &str) -> bool {
    matches!(
        s,
        "int"
            | "float"
            | "double"
            | "char"
            | "short"
            | "long"
            | "unsigned"
            | "signed"
            | "bool"
            | "void"
            | "const"
            | "volatile"
    )
}
