//! Finds kernels, device functions, macros, type declarations, device globals
//! and launch sites in a whole `.cu` file without parsing host code.

use super::ast::FnKind;
use super::enums::{enum_declaration, EnumItem};
use super::lex::{tokenize, tokenize_macro_body, TokKind, Token};
use super::qualifier_macros::QualifierMacros;
use super::template_names::{instance_name, split_args as split_template_args};
use crate::source::Span;

/// A `__global__`/`__device__` function definition found in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionItem {
    /// Function name.
    pub name: String,
    /// Kernel, device or host-device.
    pub kind: FnKind,
    /// From the first token of the declaration to the closing brace.
    pub span: Span,
    /// Offset of the name (where diagnostics about the function point).
    pub name_offset: usize,
    /// `template <…>` before the function, if any.
    pub template: Option<Span>,
    /// The namespaces it is declared in (`a::b`; empty at file scope).
    pub namespace: String,
    /// The file ends inside the function (truncated, or a `}` missing):
    /// its span runs to the end of the file.
    pub unterminated: bool,
    /// The struct it is a member function of (`Vec3` for `Vec3::dot`,
    /// whose [`FunctionItem::namespace`] ends in `Vec3`), if any.
    pub owner: Option<String>,
}

pub use super::macros::MacroDef;
pub use members::UnsupportedMember;

mod members;
mod shared_accessor;
mod type_decls;
use type_decls::type_declaration;

/// A file-scope `typedef` or `struct` declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeDeclItem {
    /// Names it declares (typedef names, struct tag).
    pub names: Vec<String>,
    /// Through the final `;`.
    pub span: Span,
    /// The function-like members of a struct (member functions,
    /// constructors, operators), which its C text leaves out.
    pub members: Vec<Span>,
}

/// A file-scope `__constant__`, `__device__`, `__managed__` or
/// `extern __shared__` variable declaration, or a file-scope `const` /
/// `constexpr` scalar constant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalItem {
    /// Names it declares.
    pub names: Vec<String>,
    /// A `const`/`constexpr` constant without a CUDA qualifier (it may be
    /// host code copper cannot read: that is no error unless a kernel uses it).
    pub constant: bool,
    /// Through the final `;`.
    pub span: Span,
}

/// A launch `name<<<grid, block, …>>>(…)` in host code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchSite {
    /// Kernel launched.
    pub kernel: String,
    /// Text of the grid argument.
    pub grid: String,
    /// Text of the block argument.
    pub block: String,
    /// Where the launch is.
    pub span: Span,
}

/// A `#pragma` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PragmaItem {
    /// The text after `#pragma`, trimmed.
    pub text: String,
    /// The directive line.
    pub span: Span,
}

/// Everything copper takes from one file.
#[derive(Clone, Debug, Default)]
pub struct Extracted {
    /// Kernels and device functions, in file order.
    pub functions: Vec<FunctionItem>,
    /// Macros, in file order (a later definition wins).
    pub macros: Vec<MacroDef>,
    /// `#undef` directive lines (an excerpt keeps them where they are).
    pub undefs: Vec<Span>,
    /// File-scope typedefs and structs.
    pub types: Vec<TypeDeclItem>,
    /// Device-side globals.
    pub globals: Vec<GlobalItem>,
    /// Kernel launches.
    pub launches: Vec<LaunchSite>,
    /// Explicit instantiations (`template __global__ void k<float>(…);`),
    /// as the instance names they ask for (`k<float>`), in file order.
    pub instantiations: Vec<String>,
    /// Pragmas (those inside functions are kept as statements).
    pub pragmas: Vec<PragmaItem>,
    /// `#include` directive lines.
    pub includes: Vec<Span>,
    /// File-scope enumerations.
    pub enums: Vec<EnumItem>,
    /// The heads (`namespace N {`, `extern "C" {`) and closing braces of
    /// the scopes declarations are read through: an excerpt keeps them so
    /// its functions stay in their namespaces.
    pub scope_marks: Vec<Span>,
    /// Members of structs copper does not read (constructors, operators,
    /// virtual functions), in file order.
    pub unsupported_members: Vec<UnsupportedMember>,
    /// Template structs standing for the launch's dynamic shared memory
    /// (the samples' `SharedMemory<T>`), by name, in file order.
    pub shared_accessors: Vec<String>,
    /// Other file-scope template structs (`template <typename T> struct
    /// Pair {…};`, read by [`super::template_structs`]), through their `;`.
    pub template_structs: Vec<Span>,
}

/// Which kind of brace is open.
#[derive(Clone, PartialEq, Eq)]
enum Scope {
    /// `namespace … {` or `extern "C" {`: declarations inside count as file
    /// scope. Holds the namespace's name (empty for `extern "C"` and
    /// anonymous namespaces).
    Transparent(String),
    /// Anything else (class body, host function body, initializer).
    Opaque,
}

impl Extracted {
    /// Whether the struct `owner` declares a constructor.
    pub fn has_constructor(&self, owner: &str) -> bool {
        (self.unsupported_members.iter()).any(|m| m.constructor && m.owner == owner)
    }

    /// Moves every span and offset by `by` (for text included at `by`).
    pub fn shift(&mut self, by: usize) {
        let sh = |s: &mut Span| *s = Span::new(s.start + by, s.end + by);
        for f in &mut self.functions {
            sh(&mut f.span);
            f.name_offset += by;
            if let Some(t) = &mut f.template {
                sh(t);
            }
        }
        self.macros.iter_mut().for_each(|m| sh(&mut m.span));
        self.undefs.iter_mut().for_each(sh);
        for t in &mut self.types {
            sh(&mut t.span);
            t.members.iter_mut().for_each(sh);
        }
        (self.unsupported_members.iter_mut()).for_each(|m| m.offset += by);
        self.globals.iter_mut().for_each(|g| sh(&mut g.span));
        self.launches.iter_mut().for_each(|l| sh(&mut l.span));
        self.pragmas.iter_mut().for_each(|p| sh(&mut p.span));
        self.includes.iter_mut().for_each(sh);
        self.scope_marks.iter_mut().for_each(sh);
        self.enums.iter_mut().for_each(|e| sh(&mut e.span));
        self.template_structs.iter_mut().for_each(sh);
    }
}

/// Scans `src` and returns its CUDA items.
pub fn extract(src: &str) -> Extracted {
    extract_with(src, &QualifierMacros::default())
}

/// Scans `src` and returns its CUDA items, reading the macros of
/// `qualifiers` as the CUDA qualifiers they stand for.
pub fn extract_with(src: &str, qualifiers: &QualifierMacros) -> Extracted {
    let toks = tokenize(src);
    let mut out = Extracted::default();
    let mut conditions: Vec<Option<String>> = Vec::new();
    let mut scopes: Vec<Scope> = Vec::new();
    let mut decl_start = 0;
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i];
        if t.kind == TokKind::Directive {
            directive(src, t, &mut conditions, &mut out);
            decl_start = i + 1;
            i += 1;
            continue;
        }
        let text = t.text(src);
        let file_scope = scopes.iter().all(|s| matches!(s, Scope::Transparent(_)));
        match text {
            ";" => decl_start = i + 1,
            "{" => {
                let head = &toks[decl_start..i];
                let kind = if is_transparent(src, head) {
                    let name = head
                        .iter()
                        .skip_while(|t| !t.is(src, "namespace"))
                        .skip(1)
                        .map(|t| t.text(src))
                        .collect::<String>();
                    let head_start = head.first().map_or(t.start, |h| h.start);
                    out.scope_marks.push(Span::new(head_start, t.end));
                    Scope::Transparent(name)
                } else {
                    Scope::Opaque
                };
                scopes.push(kind);
                decl_start = i + 1;
            }
            "}" => {
                if let Some(Scope::Transparent(_)) = scopes.pop() {
                    out.scope_marks.push(Span::new(t.start, t.end));
                }
                decl_start = i + 1;
            }
            _ if file_scope && !qualifiers.of(text).is_empty() => {
                let namespace = namespace_of(&scopes);
                let decl = Declaration {
                    start: decl_start,
                    namespace: &namespace,
                    qualifiers,
                };
                if let Some(next) = cuda_declaration(src, &toks, &decl, &mut out) {
                    i = next;
                    decl_start = next;
                    continue;
                }
            }
            "typedef" | "struct" if file_scope && i == decl_start => {
                let namespace = namespace_of(&scopes);
                let decl = Declaration {
                    start: i,
                    namespace: &namespace,
                    qualifiers,
                };
                if let Some(next) = type_declaration(src, &toks, &decl, &mut out) {
                    i = next;
                    decl_start = next;
                    continue;
                }
            }
            "enum" if file_scope && i == decl_start => {
                if let Some((item, next)) = enum_declaration(src, &toks, i) {
                    out.enums.push(item);
                    i = next;
                    decl_start = next;
                    continue;
                }
            }
            "using" if file_scope && i == decl_start => {
                if let Some(next) = alias_declaration(src, &toks, i, &mut out) {
                    i = next;
                    decl_start = next;
                    continue;
                }
            }
            "const" | "constexpr" | "static" if file_scope && i == decl_start => {
                if let Some(next) = constant_declaration(src, &toks, i, &mut out) {
                    i = next;
                    decl_start = next;
                    continue;
                }
            }
            "template" if file_scope && i == decl_start => {
                if let Some(next) =
                    shared_accessor::template_struct(src, &toks, i, qualifiers, &mut out)
                {
                    i = next;
                    decl_start = next;
                    continue;
                }
                if let Some(next) = shared_accessor::template_struct_end(src, &toks, i) {
                    out.template_structs
                        .push(Span::new(t.start, toks[next - 1].end));
                    i = next;
                    decl_start = next;
                    continue;
                }
                // `template __global__ void ns::k<float>(float *, int);`: an
                // explicit instantiation (`template <…>` heads a template).
                if toks.get(i + 1).is_some_and(|n| !n.is(src, "<")) {
                    let end = skip_to_semicolon(src, &toks, i + 1);
                    let paren = (i + 1..end).find(|&k| toks[k].is(src, "("));
                    if let Some((name, args)) = paren.and_then(|p| specialized_name(src, &toks, p))
                    {
                        out.instantiations
                            .push(instance_name(toks[name].text(src), &args));
                    }
                    i = end + 1;
                    decl_start = i;
                    continue;
                }
            }
            "<<<" if i > 0 && (toks[i - 1].kind == TokKind::Ident || toks[i - 1].is(src, ">")) => {
                launch(src, &toks, i, &mut out);
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// `a::b` for the namespaces open in `scopes`.
fn namespace_of(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .filter_map(|s| match s {
            Scope::Transparent(n) if !n.is_empty() => Some(n.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("::")
}

/// A file-scope `const int N = 64;` / `constexpr float S = 2.0f;` (no
/// pointers, references or CUDA qualifiers) starting at token `i`: recorded
/// as a global. Returns the index after it.
fn constant_declaration(src: &str, toks: &[Token], i: usize, out: &mut Extracted) -> Option<usize> {
    let end = skip_to_semicolon(src, toks, i);
    let body = toks.get(i..end)?;
    let eq = body.iter().position(|t| t.is(src, "="))?;
    let constant = body[..eq]
        .iter()
        .any(|t| t.is(src, "const") || t.is(src, "constexpr"));
    let simple = body[..eq].iter().all(|t| {
        !matches!(t.text(src), "(" | "*" | "&" | "<" | "::" | "{")
            && !super::lex::CUDA_QUALIFIERS.contains(&t.text(src))
    });
    if !constant || !simple {
        return None;
    }
    out.globals.push(GlobalItem {
        names: declared_names(src, body),
        constant: true,
        span: Span::new(toks[i].start, toks[end.min(toks.len() - 1)].end),
    });
    Some(end + 1)
}

/// Whether the tokens before a `{` open a namespace or `extern "C"` block.
fn is_transparent(src: &str, head: &[Token]) -> bool {
    match head {
        [first, ..] if first.is(src, "namespace") || first.is(src, "inline") => {
            head.iter().all(|t| !t.is(src, "(") && !t.is(src, "="))
        }
        [ext, lit] => ext.is(src, "extern") && lit.kind == TokKind::Str,
        _ => false,
    }
}

/// Records a directive. `conditions` is the stack of open conditionals,
/// each `Some(NAME)` for an `#ifndef NAME` (or `#if !defined(NAME)`) whose
/// first branch is being read.
fn directive(src: &str, t: Token, conditions: &mut Vec<Option<String>>, out: &mut Extracted) {
    let text = t.text(src);
    let body = text[1..].trim_start();
    let word = body
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("");
    let arg = body[word.len()..].trim();
    match word {
        "ifndef" => conditions.push(Some(arg.split_whitespace().next().unwrap_or("").into())),
        "if" => {
            let name = arg.strip_prefix("!defined").map(|r| {
                r.trim()
                    .trim_start_matches('(')
                    .trim_end_matches(')')
                    .trim()
            });
            conditions.push(name.map(str::to_string));
        }
        "ifdef" => conditions.push(None),
        "else" | "elif" => {
            if let Some(top) = conditions.last_mut() {
                *top = None;
            }
        }
        "endif" => {
            conditions.pop();
        }
        _ => {}
    }
    if let Some(rest) = body.strip_prefix("define") {
        if rest.starts_with(|c: char| c.is_whitespace()) {
            if let Some(mut m) = parse_define(rest, t) {
                m.default_only = conditions
                    .last()
                    .is_some_and(|c| c.as_deref() == Some(&m.name));
                out.macros.push(m);
            }
        }
    } else if word == "include" {
        out.includes.push(Span::new(t.start, t.end));
    } else if word == "undef" {
        out.undefs.push(Span::new(t.start, t.end));
    } else if let Some(rest) = body.strip_prefix("pragma") {
        out.pragmas.push(PragmaItem {
            text: rest
                .replace("\\\r\n", " ")
                .replace("\\\n", " ")
                .trim()
                .to_string(),
            span: Span::new(t.start, t.end),
        });
    }
}

/// The macro a directive defines, when it is a `#define` (`text` is the
/// whole directive, whose first byte is at `start`).
pub fn define_of(text: &str, start: usize) -> Option<MacroDef> {
    let rest = text
        .strip_prefix('#')?
        .trim_start()
        .strip_prefix("define")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let t = Token {
        kind: TokKind::Directive,
        start,
        end: start + text.len(),
    };
    parse_define(rest, t)
}

fn parse_define(rest: &str, t: Token) -> Option<MacroDef> {
    let rest = rest.trim_start_matches([' ', '\t']);
    let name_len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    if name_len == 0 {
        return None;
    }
    let name = rest[..name_len].to_string();
    let after = &rest[name_len..];
    let mut variadic = false;
    let (params, body_text) = if let Some(p) = after.strip_prefix('(') {
        let close = p.find(')')?;
        let mut params: Vec<String> = p[..close]
            .replace("\\\r\n", " ")
            .replace("\\\n", " ")
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        if let Some(last) = params.last_mut() {
            if let Some(named) = last.strip_suffix("...") {
                variadic = true;
                *last = match named.trim() {
                    "" => "__VA_ARGS__".to_string(),
                    n => n.to_string(),
                };
            }
        }
        (Some(params), &p[close + 1..])
    } else {
        (None, after)
    };
    let body_src = body_text.replace("\\\r\n", " ").replace("\\\n", " ");
    let body = tokenize_macro_body(&body_src)
        .iter()
        .map(|tk| tk.text(&body_src).to_string())
        .collect();
    Some(MacroDef {
        name,
        params,
        body,
        span: Span::new(t.start, t.end),
        variadic,
        default_only: false,
    })
}

/// Index of the token matching the opener at `open` (`(`/`[`/`{`/`<<<`).
pub(crate) fn matching(src: &str, toks: &[Token], open: usize) -> Option<usize> {
    let (o, c) = match toks[open].text(src) {
        "(" => ("(", ")"),
        "[" => ("[", "]"),
        "{" => ("{", "}"),
        "<<<" => ("<<<", ">>>"),
        _ => return None,
    };
    let mut depth = 0usize;
    for (j, t) in toks.iter().enumerate().skip(open) {
        let s = t.text(src);
        if s == o {
            depth += 1;
        } else if s == c {
            depth -= 1;
            if depth == 0 {
                return Some(j);
            }
        }
    }
    None
}

/// Where a declaration with a CUDA qualifier starts and how to read it.
struct Declaration<'a> {
    /// Its first token.
    start: usize,
    /// The namespaces it is in.
    namespace: &'a str,
    /// Macros standing for qualifiers.
    qualifiers: &'a QualifierMacros,
}

/// A declaration containing a CUDA qualifier, starting at token
/// `decl.start`. Records a function or a global and returns the index
/// after it.
fn cuda_declaration(
    src: &str,
    toks: &[Token],
    decl: &Declaration,
    out: &mut Extracted,
) -> Option<usize> {
    let (start, namespace) = (decl.start, decl.namespace);
    let mut template = None;
    let mut first = start;
    if toks.get(first).is_some_and(|t| t.is(src, "template")) {
        let lt = first + 1;
        let mut depth = 0i32;
        let mut j = lt;
        while j < toks.len() {
            match toks[j].text(src) {
                "<" => depth += 1,
                ">" => depth -= 1,
                ">>" => depth -= 2,
                _ => {}
            }
            j += 1;
            if depth <= 0 {
                break;
            }
        }
        template = Some(Span::new(
            toks[first].start,
            toks[j.min(toks.len()) - 1].end,
        ));
        first = j;
    }
    let mut is_global = false;
    let mut is_device = false;
    let mut is_host = false;
    let mut is_var_space = false;
    let mut name_tok: Option<usize> = None;
    let mut j = first;
    while j < toks.len() {
        let s = toks[j].text(src);
        for q in decl.qualifiers.of(s) {
            match *q {
                "__global__" => is_global = true,
                "__device__" => is_device = true,
                "__host__" => is_host = true,
                _ => is_var_space = true,
            }
        }
        let qualified = is_global || is_device || is_host || is_var_space;
        // `KERNEL(foo)(float *a) {…}` with `#define KERNEL(n) __global__
        // void n`: the function is named by the macro's argument.
        if let Some(named) = macro_named(src, toks, j, decl.qualifiers) {
            name_tok = Some(named.name);
            j = named.close + 1;
            continue;
        }
        match s {
            _ if !decl.qualifiers.of(s).is_empty() => {}
            // An attribute macro before the qualifiers (`LB(256)
            // __global__ void k(…)`): skipped.
            "(" if !qualified => {
                j = matching(src, toks, j)?;
                name_tok = None;
            }
            "__launch_bounds__" | "__attribute__" | "__declspec" | "alignas" | "__align__"
                if toks.get(j + 1).is_some_and(|t| t.is(src, "(")) =>
            {
                j = matching(src, toks, j + 1)?;
            }
            "(" => {
                let (name, spec_args) = match specialized_name(src, toks, j) {
                    Some((n, a)) => (n, Some(a)),
                    None => (name_tok?, None),
                };
                // `template <> __global__ void k<float>(…)`: an explicit
                // specialization is the kernel `k<float>`, no template.
                let explicit = template.is_some() && first >= 2 && toks[first - 2].is(src, "<");
                let (template, name_text) = match spec_args {
                    Some(args) if explicit => (None, instance_name(toks[name].text(src), &args)),
                    _ => (template, toks[name].text(src).to_string()),
                };
                let is_function = (is_global || is_device) && !is_var_space;
                let head_end = matching(src, toks, j).and_then(|close| {
                    let mut k = close + 1;
                    while k < toks.len() && !matches!(toks[k].text(src), "{" | ";" | "=") {
                        if toks[k].is(src, "(") {
                            k = matching(src, toks, k)?;
                        }
                        k += 1;
                    }
                    (k < toks.len()).then_some(k)
                });
                // A function cut short (a truncated file, a missing `}`)
                // runs to the end of the file and is marked: reading it
                // reports a syntax error instead of losing the kernel.
                let unterminated = toks.len() - 1;
                let end = match head_end {
                    // A function copper does not read (`__host__` only):
                    // its body is skipped, not what follows it.
                    Some(k) if toks[k].is(src, "{") && !is_function => {
                        return Some(matching(src, toks, k).map_or(toks.len(), |m| m + 1));
                    }
                    Some(k) if !toks[k].is(src, "{") || !is_function => {
                        return Some(skip_to_semicolon(src, toks, k));
                    }
                    Some(k) => matching(src, toks, k),
                    None if is_function => None,
                    None => return None,
                };
                let kind = if is_global {
                    FnKind::Global
                } else if is_host {
                    FnKind::HostDevice
                } else {
                    FnKind::Device
                };
                out.functions.push(FunctionItem {
                    name: name_text,
                    kind,
                    span: Span::new(toks[start].start, toks[end.unwrap_or(unterminated)].end),
                    name_offset: toks[name].start,
                    template,
                    namespace: namespace.to_string(),
                    unterminated: end.is_none(),
                    owner: None,
                });
                return Some(end.unwrap_or(unterminated) + 1);
            }
            ";" | "=" | "[" | "{" => {
                let end = skip_to_semicolon(src, toks, j);
                if (is_device || is_var_space) && !is_global && template.is_none() {
                    let names = declared_names(src, &toks[first..end]);
                    out.globals.push(GlobalItem {
                        names,
                        constant: false,
                        span: Span::new(toks[start].start, toks[end.min(toks.len() - 1)].end),
                    });
                }
                return Some(end + 1);
            }
            _ if toks[j].kind == TokKind::Ident => name_tok = Some(j),
            _ => {}
        }
        j += 1;
    }
    None
}

/// The function a qualifier macro with arguments declares, at token `at`.
pub(crate) struct MacroNamed {
    /// The token of the argument naming the function.
    pub name: usize,
    /// The `)` closing the macro's arguments.
    pub close: usize,
}

/// When token `at` is a function-like qualifier macro invoked with a plain
/// name where its expansion names the function (`KERNEL(foo)`), that name.
pub(crate) fn macro_named(
    src: &str,
    toks: &[Token],
    at: usize,
    qualifiers: &QualifierMacros,
) -> Option<MacroNamed> {
    let param = qualifiers.name_param(toks[at].text(src))?;
    toks.get(at + 1).filter(|t| t.is(src, "("))?;
    let close = matching(src, toks, at + 1)?;
    let (a, b) = *split_args(src, toks, at + 2, close).get(param)?;
    (b == a + 1 && toks[a].kind == TokKind::Ident).then_some(MacroNamed { name: a, close })
}

/// The name and template arguments of `name<args>(` with `(` at token
/// `paren`, if the `(` follows such a list.
fn specialized_name(src: &str, toks: &[Token], paren: usize) -> Option<(usize, Vec<String>)> {
    let close = paren.checked_sub(1)?;
    if !toks[close].is(src, ">") {
        return None;
    }
    let mut depth = 0i32;
    let mut open = close;
    loop {
        match toks[open].text(src) {
            ">" => depth += 1,
            "<" => depth -= 1,
            ";" | "{" | "}" | "(" | ")" => return None,
            _ => {}
        }
        if depth == 0 {
            break;
        }
        open = open.checked_sub(1)?;
    }
    let name = open.checked_sub(1)?;
    if toks[name].kind != TokKind::Ident || open + 1 >= close {
        return None;
    }
    let args = split_template_args(&src[toks[open + 1].start..toks[close].start]);
    Some((name, args))
}

/// Index of the `;` ending the declaration containing token `from`, skipping
/// nested brackets.
fn skip_to_semicolon(src: &str, toks: &[Token], mut from: usize) -> usize {
    while from < toks.len() {
        match toks[from].text(src) {
            ";" => return from,
            "(" | "[" | "{" => match matching(src, toks, from) {
                Some(m) => from = m,
                None => return toks.len(),
            },
            _ => {}
        }
        from += 1;
    }
    toks.len()
}

/// Names declared by a simple declaration: the identifier before each
/// top-level `,`, `=`, `[` or `;`.
fn declared_names(src: &str, toks: &[Token]) -> Vec<String> {
    let mut names = Vec::new();
    let mut last_ident: Option<&str> = None;
    let mut depth = 0i32;
    for t in toks {
        let s = t.text(src);
        match s {
            "(" | "[" | "{" => {
                if depth == 0 && s != "(" {
                    names.extend(last_ident.take().map(str::to_string));
                }
                depth += 1;
            }
            ")" | "]" | "}" => depth -= 1,
            "," | "=" | ";" if depth == 0 => names.extend(last_ident.take().map(str::to_string)),
            _ if depth == 0 && t.kind == TokKind::Ident => last_ident = Some(s),
            _ => {}
        }
    }
    names.extend(last_ident.map(str::to_string));
    names.dedup();
    names
}

/// A file-scope alias `using X = T;` starting at token `i` (read as
/// `typedef T X;`: [`using_alias`]); `None` for other `using`s
/// (`using namespace …;`, `using std::min;`) and aliases of templates
/// (an instance of one, `using FP = Pair<float>;`, is read).
fn alias_declaration(src: &str, toks: &[Token], i: usize, out: &mut Extracted) -> Option<usize> {
    let name = toks.get(i + 1).filter(|t| t.kind == TokKind::Ident)?;
    toks.get(i + 2).filter(|t| t.is(src, "="))?;
    let end = skip_to_semicolon(src, toks, i);
    let aliased = toks.get(i + 3..end)?;
    // `Pair<float>`: an instance of a template struct, as its first word.
    let instance = aliased.get(1).is_some_and(|t| t.is(src, "<"));
    if aliased.is_empty()
        || aliased.iter().any(|t| {
            matches!(t.text(src), "::" | "template" | "typename" | "(")
                || t.is(src, "<") && !instance
        })
    {
        return None;
    }
    out.types.push(TypeDeclItem {
        names: vec![name.text(src).to_string()],
        span: Span::new(toks[i].start, toks[end].end),
        members: Vec::new(),
    });
    Some(end + 1)
}

/// The name and the aliased type's byte range (within `text`) of an alias
/// declaration `using X = T;` that [`alias_declaration`] recorded.
pub fn using_alias(text: &str) -> Option<(&str, std::ops::Range<usize>)> {
    let rest = text.strip_prefix("using")?;
    let (name, ty) = rest.split_once('=')?;
    let name = name.trim();
    let start = text.len() - ty.len();
    let end = start + ty.trim_end().strip_suffix(';')?.trim_end().len();
    (!name.is_empty()).then_some((name, start..end))
}

/// Records `name<<<args>>>` with `<<<` at token `i`.
fn launch(src: &str, toks: &[Token], i: usize, out: &mut Extracted) {
    let Some(close) = matching(src, toks, i) else {
        return;
    };
    let args = split_args(src, toks, i + 1, close);
    if args.len() < 2 {
        return;
    }
    let text = |r: &(usize, usize)| {
        if r.0 >= r.1 {
            String::new()
        } else {
            src[toks[r.0].start..toks[r.1 - 1].end].to_string()
        }
    };
    // `reduce<256><<<…>>>`: the kernel is `reduce<256>`.
    let mut name_tok = i - 1;
    let mut template_args = String::new();
    if toks[name_tok].is(src, ">") {
        let mut depth = 0i32;
        let mut j = name_tok;
        loop {
            match toks[j].text(src) {
                ">" => depth += 1,
                "<" => depth -= 1,
                ";" | "{" | "}" => return,
                _ => {}
            }
            if depth == 0 || j == 0 {
                break;
            }
            j -= 1;
        }
        if depth != 0 || j == 0 || toks[j - 1].kind != TokKind::Ident {
            return;
        }
        template_args = format!(
            "<{}>",
            &src[toks[j + 1].start.min(toks[name_tok].start)..toks[name_tok].start]
        );
        name_tok = j - 1;
    }
    out.launches.push(LaunchSite {
        kernel: format!("{}{template_args}", toks[name_tok].text(src)),
        grid: text(&args[0]),
        block: text(&args[1]),
        span: Span::new(toks[i - 1].start, toks[close].end),
    });
}

/// Token ranges of the comma-separated arguments in `toks[from..to]`.
pub(crate) fn split_args(src: &str, toks: &[Token], from: usize, to: usize) -> Vec<(usize, usize)> {
    let mut args = Vec::new();
    let mut depth = 0i32;
    let mut start = from;
    for (j, t) in toks.iter().enumerate().take(to).skip(from) {
        match t.text(src) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            "," if depth == 0 => {
                args.push((start, j));
                start = j + 1;
            }
            _ => {}
        }
    }
    if start < to || !args.is_empty() {
        args.push((start, to));
    }
    args
}

#[cfg(test)]
mod tests;
