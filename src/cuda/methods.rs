//! A struct's `__device__` member function read as a device function: its
//! object is a first parameter `this`, a reference to the struct (`const`
//! for a `const` member function), and the members it names bare (`x`,
//! `this->x`, `f(…)`) are read through it (`this.x`, `this.f(…)`).

use std::collections::HashSet;
use std::ops::Range;

use super::ast::{BaseType, Expr, ExprKind, Function, Meta, NodeId, Param, StmtKind, Type, UnOp};
use super::extract::matching;
use super::lex::tokenize;
use super::visit::{children_mut, visit_stmt_roots_mut, visit_stmts};
use crate::source::Span;

/// The name a member function's object has.
pub const THIS: &str = "this";

/// What follows a member function's parameter list (`const`): left out
/// of the C text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trailing {
    /// Byte range in the function's text.
    pub range: Range<usize>,
    /// A `const` member function.
    pub is_const: bool,
}

/// The words between the `)` closing the parameter list of the function
/// `text` (whose name is at byte `name_at`) and its body's `{`, if any.
pub fn trailing(text: &str, name_at: usize) -> Option<Trailing> {
    let toks = tokenize(text);
    let open = toks
        .iter()
        .position(|t| t.start >= name_at && t.is(text, "("))?;
    let close = matching(text, &toks, open)?;
    let brace = (close + 1..toks.len()).find(|&k| toks[k].is(text, "{"))?;
    if brace == close + 1 {
        return None;
    }
    Some(Trailing {
        range: toks[close + 1].start..toks[brace - 1].end,
        is_const: toks[close + 1..brace].iter().any(|t| t.is(text, "const")),
    })
}

/// The struct a member function belongs to, as its body reads it.
pub struct Member<'a> {
    /// The struct's name.
    pub owner: &'a str,
    /// A `const` member function (its object is read-only).
    pub is_const: bool,
    /// The struct's data members.
    pub fields: &'a HashSet<String>,
    /// The struct's member functions.
    pub methods: &'a HashSet<String>,
}

/// Makes `f`, a member function of `m.owner`, a device function of its
/// object: `this` (node id `id`) is its first parameter and its body reads
/// members through it. A local or parameter named like a member is
/// refused (at its declaration), as copper would not tell them apart.
pub fn bind_this(f: &mut Function, m: &Member, id: u64) -> Result<(), (usize, String)> {
    let mut hiding: Option<(Span, String)> = None;
    for p in &f.params {
        if m.fields.contains(&p.name) {
            hiding.get_or_insert((p.meta.span, p.name.clone()));
        }
    }
    for s in &f.body {
        visit_stmts(s, &mut |s| {
            if let StmtKind::Decl(ds) = &s.kind {
                for d in ds.iter().filter(|d| m.fields.contains(&d.name)) {
                    hiding.get_or_insert((d.meta.span, d.name.clone()));
                }
            }
        });
    }
    if let Some((span, name)) = hiding {
        return Err((
            span.start,
            format!(
                "`{name}` in a member function of `{}` is also a member of it; rename it (copper reads a member function's members bare)",
                m.owner
            ),
        ));
    }
    let mut ty = Type::scalar(BaseType::Named(m.owner.to_string()));
    ty.is_const = m.is_const;
    ty.is_ref = true;
    let mut meta = Meta::synthetic(NodeId(id));
    meta.span = Span::new(f.meta.span.start, f.meta.span.start);
    f.params.insert(
        0,
        Param {
            meta,
            ty,
            name: THIS.to_string(),
            dims: Vec::new(),
            default: None,
        },
    );
    for s in &mut f.body {
        visit_stmt_roots_mut(s, &mut |e| through_this(e, m));
    }
    Ok(())
}

/// Whether `e` is `this`.
fn is_this(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Ident(n) if n == THIS)
}

/// `this` at a place.
fn this_at(meta: &Meta) -> Box<Expr> {
    Box::new(Expr {
        meta: meta.clone(),
        kind: ExprKind::Ident(THIS.to_string()),
    })
}

/// Rewrites `e` and its subexpressions to read members through `this`
/// (a reference: `this->x` is `this.x`, `*this` is `this`).
fn through_this(e: &mut Expr, m: &Member) {
    let meta = e.meta.clone();
    let replaced = match &mut e.kind {
        ExprKind::Ident(n) if m.fields.contains(n) => Some(ExprKind::Member {
            base: this_at(&meta),
            field: n.clone(),
            arrow: false,
        }),
        ExprKind::Unary(UnOp::Deref, x) if is_this(x) => Some(ExprKind::Ident(THIS.to_string())),
        ExprKind::Member { base, arrow, .. } | ExprKind::Method { base, arrow, .. }
            if is_this(base) =>
        {
            *arrow = false;
            None
        }
        ExprKind::Call(n, args) if m.methods.contains(n) => Some(ExprKind::Method {
            base: this_at(&meta),
            name: n.clone(),
            arrow: false,
            args: std::mem::take(args),
        }),
        _ => None,
    };
    if let Some(k) = replaced {
        e.kind = k;
    }
    for c in children_mut(e) {
        through_this(c, m);
    }
}
