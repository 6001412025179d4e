//! Builds the text handed to `lang-c` for one function: a CUDA prelude, the
//! file-scope declarations the function uses, and the function itself with
//! CUDA qualifiers blanked out (same length, recorded on the side), comments
//! and directives blanked, and macros expanded. A [`SourceMap`] maps every
//! byte of that text back to the user's file.

use std::cell::Cell;

use super::ast::CastStyle;
use super::coop_groups::{CoopGroups, Group};
use super::lex::{tokenize, TokKind, Token, CUDA_QUALIFIERS};
use super::limits::{Exceeded, Limits, MAX_FILE_EXPANSION, MAX_NESTING, MAX_STATEMENT_TOKENS};
use super::macros::{token_texts, MacroTable};
use crate::source::Span;

mod shared_accessor;
mod unsupported;
pub use shared_accessor::DYNAMIC_SHARED;
pub(crate) use unsupported::angle_close;
use unsupported::{is_cast_type, is_reference, unsupported_punct, unsupported_word};

/// Typedef names CUDA provides, declared for the parser.
pub const BUILTIN_TYPEDEFS: &[&str] = &[
    "bool",
    "size_t",
    "ptrdiff_t",
    "uint",
    "ushort",
    "uchar",
    "ulong",
    "int8_t",
    "uint8_t",
    "int16_t",
    "uint16_t",
    "int32_t",
    "uint32_t",
    "int64_t",
    "uint64_t",
    "dim3",
    "cudaTextureObject_t",
    "cudaSurfaceObject_t",
    "clock_t",
    "half",
    "__half",
    "nv_bfloat16",
    "__nv_bfloat16",
    "half2",
    "__half2",
    "nv_bfloat162",
    "__nv_bfloat162",
];

/// Scalar names that have CUDA vector types `name1` … `name4`.
const VECTOR_BASES: &[&str] = &[
    "char",
    "uchar",
    "short",
    "ushort",
    "int",
    "uint",
    "long",
    "ulong",
    "longlong",
    "ulonglong",
    "float",
    "double",
];

/// What `auto` becomes in the unit text: a typedef name of the same length
/// declared by the prelude, which the converter reads back as `auto`.
pub const AUTO_STAND_IN: &str = "__at";

/// The prelude: typedefs for every CUDA builtin type name.
pub fn prelude() -> String {
    let mut p = format!("typedef int {AUTO_STAND_IN}; ");
    for t in BUILTIN_TYPEDEFS {
        p.push_str(&format!("typedef int {t}; "));
    }
    for b in VECTOR_BASES {
        for n in 1..=4 {
            p.push_str(&format!("typedef int {b}{n}; "));
        }
    }
    p.push('\n');
    p
}

/// Whether `name` is a CUDA builtin typedef or vector type name.
pub fn is_builtin_type_name(name: &str) -> bool {
    BUILTIN_TYPEDEFS.contains(&name)
        || VECTOR_BASES.iter().any(|b| {
            name.strip_prefix(b)
                .is_some_and(|n| matches!(n, "1" | "2" | "3" | "4"))
        })
}

/// One piece of the unit text and where it came from.
#[derive(Clone, Debug)]
struct Segment {
    out: Span,
    /// `None` for the prelude.
    file: Option<Span>,
    /// A macro expansion: every byte maps to the invocation.
    expanded: bool,
}

/// Maps byte offsets of the unit text back to the user's file.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    segs: Vec<Segment>,
}

impl SourceMap {
    /// The file offset of unit offset `o`, if it comes from the file.
    pub fn to_file(&self, o: usize) -> Option<usize> {
        let i = self.segs.partition_point(|s| s.out.end <= o);
        let seg = self.segs.get(i).or_else(|| self.segs.last())?;
        let file = seg.file?;
        if seg.expanded {
            return Some(if o >= seg.out.end {
                file.end
            } else {
                file.start
            });
        }
        Some((file.start + o.saturating_sub(seg.out.start)).min(file.end))
    }

    /// The file span of a unit span ([`Span::SYNTHETIC`] if it is not in
    /// the file).
    pub fn span_to_file(&self, start: usize, end: usize) -> Span {
        match (
            self.to_file(start),
            self.to_file(end.saturating_sub(1).max(start)),
        ) {
            (Some(s), Some(e)) => {
                let e_seg_end = self.to_file(end).unwrap_or(e);
                Span::new(s, e_seg_end.max(e + usize::from(end > start)).max(s))
            }
            _ => Span::SYNTHETIC,
        }
    }
}

/// A CUDA qualifier removed from the text, with its file offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QualMark {
    /// File offset of the qualifier.
    pub offset: usize,
    /// The qualifier as written, arguments included (`__launch_bounds__(256)`).
    pub text: String,
}

/// A macro invocation in the file and the unit range of its expansion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MacroUse {
    /// Unit range of the expansion.
    pub out: Span,
    /// The invocation as the user wrote it.
    pub invocation: String,
}

/// The struct an instance of a template struct is read as
/// ([`Names::instance`]).
pub type InstanceOf<'a> = dyn Fn(&str, &str) -> Option<Result<String, String>> + 'a;

/// The names a unit's text is read with.
pub struct Names<'a> {
    /// Whether a name is a type (typedefs, structs, template type
    /// parameters): for references and functional casts.
    pub is_type: &'a dyn Fn(&str) -> bool,
    /// Whether a name is a function template (`f<…>(…)` is a call).
    pub is_template: &'a dyn Fn(&str) -> bool,
    /// Whether a name is a dynamic shared memory accessor
    /// (`SharedMemory<T>()`: [`DYNAMIC_SHARED`]).
    pub is_shared_accessor: &'a dyn Fn(&str) -> bool,
    /// The struct an instance of a template struct is read as, given the
    /// template's name and the arguments as written (`Pair`, `float`):
    /// `None` for a name that is no template struct, `Err` with the
    /// reason for an instance copper did not make
    /// ([`super::template_structs::Instances::ident`]).
    pub instance: &'a InstanceOf<'a>,
}

/// The tokens of a piece of the file being appended, and what reading
/// its C++ constructs needs.
#[derive(Clone, Copy)]
struct Tokens<'a> {
    /// The piece's text.
    piece: &'a str,
    /// Its tokens.
    toks: &'a [Token],
    /// The file offset of its first byte.
    base: usize,
    /// The type and template names visible in it.
    names: &'a Names<'a>,
}

/// Why a piece of text cannot be handed to the parser.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitError {
    /// File offset of the problem.
    pub offset: usize,
    /// Diagnostic code (`unsupported`, `too-deep`, `macro`).
    pub code: &'static str,
    /// The message.
    pub message: String,
}

/// The parser input for one function and its side tables.
#[derive(Clone, Debug, Default)]
pub struct Unit {
    /// Text for `lang-c`.
    pub text: String,
    /// Unit offsets to file offsets.
    pub map: SourceMap,
    /// CUDA qualifiers removed from the text.
    pub quals: Vec<QualMark>,
    /// `#pragma` lines inside the function: file offset and text.
    pub pragmas: Vec<(usize, String)>,
    /// Macro invocations expanded in the text.
    pub macro_uses: Vec<MacroUse>,
    /// C++ casts written as C casts in the text: the unit offset of the
    /// cast's `(` and how the user wrote it.
    pub casts: Vec<(usize, CastStyle)>,
    /// Unit offsets of reference declarators (`&`), written as `*`.
    pub refs: Vec<usize>,
    /// Qualified names (`N::f`): the unit offset of the name and the
    /// qualifier before it (`N::`), blanked in the text.
    pub scopes: Vec<(usize, String)>,
    /// Explicit template arguments at a call (`f<float, 4>(…)`): the unit
    /// offset of the name and the arguments as written (`float, 4`),
    /// blanked in the text.
    pub template_args: Vec<(usize, String)>,
    /// The cooperative groups declared so far.
    coop: CoopGroups,
}

impl Unit {
    /// An empty unit for a function whose group parameters (by name) are
    /// of the kinds its callers pass (see [`super::coop_params`]).
    pub(crate) fn with_group_params(params: &[(String, Group)]) -> Unit {
        Unit {
            coop: CoopGroups::with_params(params),
            ..Unit::default()
        }
    }

    /// Appends text that is not from the file (the prelude).
    pub fn push_synthetic(&mut self, text: &str) {
        let start = self.text.len();
        self.text.push_str(text);
        self.map.segs.push(Segment {
            out: Span::new(start, self.text.len()),
            file: None,
            expanded: false,
        });
    }

    /// Appends `piece`, the file text starting at offset `start` (past
    /// [`crate::source::INCLUDED_BASE`] for a header), masked and
    /// macro-expanded. `type_names` are the typedef names visible (for
    /// reference detection). Nesting and statement length are checked
    /// after expansion (see [`super::limits`]); `expansion_left` is what
    /// is left of the file's [`MAX_FILE_EXPANSION`] tokens, and shrinks
    /// by what this piece's macros expand to.
    pub fn push_file(
        &mut self,
        piece: &str,
        start: usize,
        macros: &MacroTable,
        names: &Names,
        expansion_left: &Cell<usize>,
    ) -> Result<(), UnitError> {
        let span = Span::new(start, start + piece.len());
        let toks = tokenize(piece);
        let mut limits = Limits::default();
        // Tokens before this one have been counted.
        let mut counted = 0;
        let tokens = Tokens {
            piece,
            toks: &toks,
            base: span.start,
            names,
        };
        let mut cursor = 0;
        let mut i = 0;
        // Tokens to write otherwise, the next one last: the `>` closing a
        // C++ cast's type (as `)`) and the `)` closing its operand (as
        // `))`, closing the parenthesis the cast opened with).
        let mut cast_closes: Vec<(usize, &'static str)> = Vec::new();
        // Cooperative-groups tokens written otherwise: (from, to, text).
        let mut coop_later: Vec<(usize, usize, String)> = Vec::new();
        // The file's macros as changed by the `#define`s and `#undef`s
        // read so far inside this function, in order.
        let mut local: Option<MacroTable> = None;
        while i < toks.len() {
            count_tokens(&mut limits, piece, &toks[counted..=i], span.start)?;
            counted = i + 1;
            let t = toks[i];
            self.push_blank(piece, cursor, t.start, span.start);
            cursor = t.end;
            let text = t.text(piece);
            let at = span.start + t.start;
            if let Some(&(_, with)) = cast_closes.last().filter(|c| c.0 == i) {
                cast_closes.pop();
                self.push_replaced(with, at, span.start + t.end);
                i += 1;
                continue;
            }
            if let Some(k) = coop_later.iter().position(|l| l.0 == i) {
                let (_, to, with) = coop_later.remove(k);
                self.push_replaced(&with, at, span.start + toks[to].end);
                cursor = toks[to].end;
                i = to + 1;
                continue;
            }
            if t.kind == TokKind::Ident {
                let coop = self
                    .coop
                    .at(piece, &toks, i)
                    .map_err(|(o, message)| UnitError {
                        offset: span.start + o,
                        code: "unsupported",
                        message,
                    })?;
                if let Some(d) = coop.filter(|d| d.next > i && d.next <= toks.len()) {
                    let end = toks[d.next - 1].end;
                    self.push_replaced(&d.head, at, span.start + end);
                    coop_later.extend(d.later);
                    cursor = end;
                    i = d.next;
                    continue;
                }
                if let Some(next) = self.cxx_word(tokens, i, &mut cast_closes)? {
                    cursor = toks[next - 1].end;
                    i = next;
                    continue;
                }
            }
            if t.kind == TokKind::Directive {
                let body = text[1..].trim_start();
                if body
                    .strip_prefix("include")
                    .is_some_and(|r| r.starts_with([' ', '\t', '"', '<']))
                {
                    return Err(UnitError {
                        offset: at,
                        code: "unsupported",
                        message: "`#include` inside a function is not supported: its statements \
                                  would be missing from the analysis; move them into the \
                                  function or a `__device__` function"
                            .into(),
                    });
                }
                if let Some(def) = super::extract::define_of(text, at) {
                    local.get_or_insert_with(|| macros.clone()).define(def);
                } else if let Some(name) = body.strip_prefix("undef") {
                    local
                        .get_or_insert_with(|| macros.clone())
                        .undefine(name.trim());
                }
                if let Some(p) = body.strip_prefix("pragma") {
                    let p = p.replace("\\\r\n", " ").replace("\\\n", " ");
                    self.pragmas.push((at, p.trim().to_string()));
                }
                self.push_blank(piece, t.start, t.end, span.start);
                i += 1;
                continue;
            }
            if t.kind == TokKind::Punct {
                if let Some(next) = self.cxx_punct(tokens, i)? {
                    cursor = toks[next - 1].end;
                    i = next;
                    continue;
                }
            }
            if t.kind != TokKind::Ident {
                self.push_copy(piece, t.start, t.end, span.start);
                i += 1;
                continue;
            }
            if let Some(what) = unsupported_word(text) {
                return Err(UnitError {
                    offset: at,
                    code: "unsupported",
                    message: format!("{what} are not supported in kernels"),
                });
            }
            if CUDA_QUALIFIERS.contains(&text) {
                let mut end = i;
                if toks.get(i + 1).is_some_and(|n| n.is(piece, "(")) {
                    end = super::extract::matching(piece, &toks, i + 1).unwrap_or(i);
                }
                let qual_end = toks[end].end;
                self.quals.push(QualMark {
                    offset: at,
                    text: collapse_ws(&piece[t.start..qual_end]),
                });
                self.push_blank(piece, t.start, qual_end, span.start);
                cursor = qual_end;
                i = end + 1;
                continue;
            }
            if text == "__restrict__" {
                self.push_replaced("__restrict  ", span.start + t.start, span.start + t.end);
                i += 1;
                continue;
            }
            let macros = local.as_ref().unwrap_or(macros);
            if let Some(def) = macros.get(text) {
                let next_is_paren = toks.get(i + 1).is_some_and(|n| n.is(piece, "("));
                if def.params.is_none() || next_is_paren {
                    let (args, end_tok) = if def.params.is_some() {
                        let close =
                            super::extract::matching(piece, &toks, i + 1).ok_or_else(|| {
                                UnitError {
                                    offset: at,
                                    code: "macro",
                                    message: format!("unterminated invocation of macro `{text}`"),
                                }
                            })?;
                        let args = super::extract::split_args(piece, &toks, i + 2, close)
                            .into_iter()
                            .map(|(a, b)| {
                                if a < b {
                                    token_texts(&piece[toks[a].start..toks[b - 1].end])
                                } else {
                                    Vec::new()
                                }
                            })
                            .collect::<Vec<_>>();
                        (args, close)
                    } else {
                        (Vec::new(), i)
                    };
                    let expansion = macros.expand(def, &args).map_err(|e| UnitError {
                        offset: at,
                        code: "macro",
                        message: e.to_string(),
                    })?;
                    count_expansion(&mut limits, &expansion, text, at, expansion_left)?;
                    counted = end_tok + 1;
                    let end = toks[end_tok].end;
                    let (quals, rest) = leading_qualifiers(&expansion);
                    // `GLOBAL`, `LB(256)`: qualifiers, recorded as such
                    // (also those `KERNEL(foo)` begins with).
                    self.quals
                        .extend(quals.into_iter().map(|text| QualMark { offset: at, text }));
                    if rest > 0 && rest == expansion.len() {
                        self.push_blank(piece, t.start, end, span.start);
                        cursor = end;
                        i = end_tok + 1;
                        continue;
                    }
                    let out_start = self.text.len();
                    self.push_expansion(
                        &expansion[rest..].join(" "),
                        span.start + t.start,
                        span.start + end,
                    );
                    self.macro_uses.push(MacroUse {
                        out: Span::new(out_start, self.text.len()),
                        invocation: collapse_ws(&piece[t.start..end]),
                    });
                    cursor = end;
                    i = end_tok + 1;
                    continue;
                }
            }
            self.push_copy(piece, t.start, t.end, span.start);
            i += 1;
        }
        count_tokens(
            &mut limits,
            piece,
            &toks[counted.min(toks.len())..],
            span.start,
        )?;
        self.push_blank(piece, cursor, piece.len(), span.start);
        self.push_synthetic("\n");
        Ok(())
    }

    /// Rewrites a C++ construct starting at identifier `i` into C that
    /// `lang-c` reads, recording what it was; returns the index of the
    /// next token to read, or `None` if `i` starts no such construct.
    fn cxx_word(
        &mut self,
        tokens: Tokens,
        i: usize,
        cast_closes: &mut Vec<(usize, &'static str)>,
    ) -> Result<Option<usize>, UnitError> {
        let Tokens {
            piece,
            toks,
            base,
            names,
        } = tokens;
        let t = toks[i];
        let text = t.text(piece);
        let at = base + t.start;
        let next = toks.get(i + 1).map(|n| n.text(piece));
        let prev = i.checked_sub(1).map(|p| toks[p]);
        match text {
            "template" if next == Some("<") => {
                // The head of a function template, read by `extract`.
                let Some(close) = angle_close(piece, toks, i + 1) else {
                    return Ok(None);
                };
                self.push_blank(piece, t.start, toks[close].end, base);
                return Ok(Some(close + 1));
            }
            "constexpr" => {
                self.quals.push(QualMark {
                    offset: at,
                    text: text.to_string(),
                });
                self.push_blank(piece, t.start, t.end, base);
                return Ok(Some(i + 1));
            }
            "extern" if toks.get(i + 1).is_some_and(|n| n.kind == TokKind::Str) => {
                // `extern "C" __global__ void k(…)`: a linkage, kept as a
                // qualifier for printing.
                let lit = toks[i + 1];
                self.quals.push(QualMark {
                    offset: at,
                    text: format!("extern {}", lit.text(piece)),
                });
                self.push_blank(piece, t.start, lit.end, base);
                return Ok(Some(i + 2));
            }
            "static_assert" if next == Some("(") => {
                // Checked by the compiler, nothing at run time: blanked
                // with its `;`.
                let Some(close) = super::extract::matching(piece, toks, i + 1) else {
                    return Ok(None);
                };
                let end =
                    close + usize::from(toks.get(close + 1).is_some_and(|n| n.is(piece, ";")));
                self.push_blank(piece, t.start, toks[end].end, base);
                return Ok(Some(end + 1));
            }
            "auto" => {
                self.push_replaced(AUTO_STAND_IN, at, base + t.end);
                return Ok(Some(i + 1));
            }
            "static_cast" | "reinterpret_cast" | "const_cast" if next == Some("<") => {
                let style = match text {
                    "static_cast" => CastStyle::Static,
                    "reinterpret_cast" => CastStyle::Reinterpret,
                    _ => CastStyle::Const,
                };
                let close = angle_close(piece, toks, i + 1)
                    .filter(|&c| toks.get(c + 1).is_some_and(|n| n.is(piece, "(")))
                    .ok_or_else(|| UnitError {
                        offset: at,
                        code: "syntax",
                        message: format!("`{text}<…>` must be followed by `(expression)`"),
                    })?;
                // `reinterpret_cast<T *>(p)[i]` indexes the cast pointer:
                // written `((T *)(p))[i]`, the whole cast in parentheses.
                let Some(operand_close) = super::extract::matching(piece, toks, close + 1) else {
                    return Ok(None);
                };
                self.casts.push((self.text.len() + 1, style));
                let open_end = toks[i + 1].end;
                let blank = format!("(({}", " ".repeat(open_end - t.start - 2));
                self.push_replaced(&blank, at, base + open_end);
                cast_closes.push((operand_close, "))"));
                cast_closes.push((close, ")"));
                return Ok(Some(i + 2));
            }
            _ => {}
        }
        if next == Some("::") && toks.get(i + 2).is_some_and(|n| n.kind == TokKind::Ident) {
            return Ok(Some(self.qualified_name(tokens, i)));
        }
        if next == Some("<") && (names.is_shared_accessor)(text) {
            if let Some(next) = self.shared_accessor(tokens, i) {
                return Ok(Some(next));
            }
        }
        if next == Some("<") && !matches!(prev.map(|p| p.text(piece)), Some("." | "->")) {
            if let Some(close) = angle_close(piece, toks, i + 1) {
                let args = &piece[toks[i + 1].end..toks[close].start];
                match (names.instance)(text, args) {
                    Some(Ok(ident)) => {
                        self.push_replaced(&ident, at, base + toks[close].end);
                        return Ok(Some(close + 1));
                    }
                    Some(Err(message)) => {
                        return Err(UnitError {
                            offset: at,
                            code: "unsupported",
                            message,
                        })
                    }
                    None => {}
                }
            }
        }
        if next == Some("<") && (names.is_template)(text) {
            let Some(close) = angle_close(piece, toks, i + 1) else {
                return Ok(None);
            };
            let args = collapse_ws(&piece[toks[i + 1].end..toks[close].start]);
            self.template_args.push((self.text.len(), args));
            self.push_copy(piece, t.start, t.end, base);
            self.push_blank(piece, t.end, toks[close].end, base);
            return Ok(Some(close + 1));
        }
        let after_value = prev.is_some_and(|p| {
            let s = p.text(piece);
            (p.kind == TokKind::Ident && s != "return" && s != "case")
                || matches!(s, "." | "->" | "::")
        });
        if next == Some("(") && !after_value && is_cast_type(text, names) {
            let close = super::extract::matching(piece, toks, i + 1);
            let one_arg =
                close.is_some_and(|c| super::extract::split_args(piece, toks, i + 2, c).len() == 1);
            if one_arg {
                // `float(x)` is read as `(float)(x)`.
                self.casts.push((self.text.len(), CastStyle::Functional));
                self.push_replaced(&format!("({text})"), at, base + t.end);
                return Ok(Some(i + 1));
            }
        }
        Ok(None)
    }

    /// Rewrites C++ punctuation at token `i` (a reference declarator, a
    /// leading `::`) or rejects what is outside the subset; returns the
    /// index of the next token when it wrote the token itself.
    fn cxx_punct(&mut self, tokens: Tokens, i: usize) -> Result<Option<usize>, UnitError> {
        let toks = tokens.toks;
        let t = toks[i];
        let at = tokens.base + t.start;
        let next_ident = toks.get(i + 1).is_some_and(|n| n.kind == TokKind::Ident);
        let prev_is_name = i
            .checked_sub(1)
            .is_some_and(|p| toks[p].kind == TokKind::Ident);
        match t.text(tokens.piece) {
            "::" if next_ident && !prev_is_name => {
                return Ok(Some(self.qualified_name(tokens, i)));
            }
            "&" if is_reference(tokens.piece, toks, i, tokens.names) => {
                self.refs.push(self.text.len());
                self.push_replaced("*", at, tokens.base + t.end);
                return Ok(Some(i + 1));
            }
            _ => {}
        }
        unsupported_punct(tokens.piece, toks, i, at, tokens.names)?;
        Ok(None)
    }

    /// `N::M::name` or `::name` from token `i`: the qualifier is blanked
    /// and recorded at the name, whose index is returned.
    fn qualified_name(&mut self, tokens: Tokens, i: usize) -> usize {
        let Tokens {
            piece, toks, base, ..
        } = tokens;
        let mut j = if toks[i].is(piece, "::") { i + 1 } else { i };
        while toks.get(j + 1).is_some_and(|n| n.is(piece, "::"))
            && toks.get(j + 2).is_some_and(|n| n.kind == TokKind::Ident)
        {
            j += 2;
        }
        let prefix: String = piece[toks[i].start..toks[j].start]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        self.push_blank(piece, toks[i].start, toks[j].start, base);
        self.scopes.push((self.text.len(), prefix));
        j
    }

    fn push_copy(&mut self, piece: &str, from: usize, to: usize, base: usize) {
        self.push_mapped(&piece[from..to], base + from, base + to, false);
    }

    /// Whitespace of the same byte length as `piece[from..to]`, newlines kept.
    fn push_blank(&mut self, piece: &str, from: usize, to: usize, base: usize) {
        if from >= to {
            return;
        }
        let blank: String = piece.as_bytes()[from..to]
            .iter()
            .map(|&b| if b == b'\n' { '\n' } else { ' ' })
            .collect();
        self.push_mapped(&blank, base + from, base + to, false);
    }

    fn push_replaced(&mut self, text: &str, file_start: usize, file_end: usize) {
        self.push_mapped(text, file_start, file_end, false);
    }

    fn push_expansion(&mut self, text: &str, file_start: usize, file_end: usize) {
        self.push_mapped(text, file_start, file_end, true);
    }

    fn push_mapped(&mut self, text: &str, file_start: usize, file_end: usize, expanded: bool) {
        let start = self.text.len();
        self.text.push_str(text);
        let out = Span::new(start, self.text.len());
        let file = Span::new(file_start, file_end);
        if let Some(last) = self.map.segs.last_mut() {
            // Only copies of equal length merge: offsets inside a
            // replaced piece (`int(` read as `(int)(`) do not map one to one.
            let contiguous = !expanded
                && !last.expanded
                && last.file.is_some_and(|f| {
                    f.end == file_start && f.end - f.start == last.out.end - last.out.start
                })
                && last.out.end == start
                && text.len() == file_end - file_start;
            if contiguous {
                last.out.end = out.end;
                last.file = Some(Span::new(
                    last.file.map_or(file_start, |f| f.start),
                    file_end,
                ));
                return;
            }
        }
        self.map.segs.push(Segment {
            out,
            file: Some(file),
            expanded,
        });
    }
}

/// Replaces runs of whitespace by one space.
/// The CUDA qualifiers a macro expansion begins with (`__global__`,
/// `__launch_bounds__(256, 2)`), each as one text, and the index of the
/// first token after them.
fn leading_qualifiers(expansion: &[String]) -> (Vec<String>, usize) {
    let mut quals = Vec::new();
    let mut i = 0;
    while i < expansion.len() {
        let word = expansion[i].as_str();
        if !CUDA_QUALIFIERS.contains(&word) {
            break;
        }
        let mut text = word.to_string();
        i += 1;
        if expansion.get(i).is_some_and(|t| t == "(") {
            let mut depth = 0usize;
            while let Some(t) = expansion.get(i) {
                depth = match t.as_str() {
                    "(" => depth + 1,
                    ")" => depth.saturating_sub(1),
                    _ => depth,
                };
                text.push_str(t);
                if t == "," {
                    text.push(' ');
                }
                i += 1;
                if depth == 0 {
                    break;
                }
            }
        }
        quals.push(text);
    }
    (quals, i)
}

fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Counts the tokens `toks` of `piece` (at file offset `base`) written
/// as they are; directives are not parsed and do not count.
fn count_tokens(
    limits: &mut Limits,
    piece: &str,
    toks: &[Token],
    base: usize,
) -> Result<(), UnitError> {
    for t in toks.iter().filter(|t| t.kind != TokKind::Directive) {
        limits
            .feed(t.text(piece))
            .map_err(|e| exceeded(e, base + t.start, None))?;
    }
    Ok(())
}

/// Counts the expansion of macro `name`, invoked at file offset `at`,
/// against the limits and what is left of the file's expansions.
fn count_expansion(
    limits: &mut Limits,
    expansion: &[String],
    name: &str,
    at: usize,
    expansion_left: &Cell<usize>,
) -> Result<(), UnitError> {
    let Some(left) = expansion_left.get().checked_sub(expansion.len()) else {
        return Err(UnitError {
            offset: at,
            code: "too-large",
            message: format!(
                "macro expansions in this file are over {MAX_FILE_EXPANSION} tokens; \
                 macro `{name}` is not expanded"
            ),
        });
    };
    expansion_left.set(left);
    for t in expansion {
        limits.feed(t).map_err(|e| exceeded(e, at, Some(name)))?;
    }
    Ok(())
}

/// The error for a limit passed at file offset `at`, inside the
/// expansion of macro `name` if there is one.
fn exceeded(e: Exceeded, at: usize, name: Option<&str>) -> UnitError {
    let within = name
        .map(|n| format!(" (in the expansion of macro `{n}`)"))
        .unwrap_or_default();
    match e {
        Exceeded::Nesting => UnitError {
            offset: at,
            code: "too-deep",
            message: format!("nesting deeper than {MAX_NESTING}{within}"),
        },
        Exceeded::Statement => UnitError {
            offset: at,
            code: "too-large",
            message: format!("statement longer than {MAX_STATEMENT_TOKENS} tokens{within}"),
        },
    }
}

#[cfg(test)]
mod tests;
