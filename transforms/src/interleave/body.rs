//! The independence proof of a chunk loop's body: each iteration touches
//! only its own element of each array and keeps nothing for the next
//! (the conditions are listed in [`super`]'s documentation).

use std::collections::BTreeSet;

use copper::cuda::ast::{BaseType, Expr, ExprKind, Function, Init, Stmt, StmtKind, UnOp};

use super::{element, thread_locals, Chunked};
use crate::ast_util::{self, expr, ident, replace_expr};
use crate::Refusal;

/// A loop body proved independent.
pub(super) struct Checked {
    /// The body's statements with the element index replaced by `e`.
    pub body: Vec<Stmt>,
    /// The pairs (accessed, written) of distinct pointer parameters.
    pub pairs: Vec<(String, String)>,
    /// What was proved, for people.
    pub proof: String,
}

/// `body` (the loop of `c` in `f`) with `idx * C + k` replaced by `e`,
/// once proved independent; or why it is not.
pub(super) fn independent(
    f: &Function,
    c: &Chunked,
    body: &Stmt,
    e: &str,
) -> Result<Checked, Refusal> {
    let el = element(c);
    let print = copper::cuda::print::expression;
    // For messages: an expression as the user wrote it.
    let shown = |x: &Expr| {
        let mut x = x.clone();
        replace_expr(&mut x, &ident(e), &el);
        print(&x)
    };
    let mut body = body.clone();
    ast_util::visit_stmt_roots_mut(&mut body, &mut |x| replace_expr(x, &el, &ident(e)));

    let outer: BTreeSet<String> = f
        .params
        .iter()
        .map(|p| p.name.clone())
        .chain(top_level_names(f))
        .chain([c.counter.clone(), c.idx.clone()])
        .collect();
    let (locals, aliases) = locals_of(&body, e, &outer)?;
    let pointers: BTreeSet<&str> = f
        .params
        .iter()
        .filter(|p| p.ty.pointers.len() == 1 && p.dims.is_empty())
        .map(|p| p.name.as_str())
        .collect();
    let tainted = thread_locals(f);
    let is_e = |x: &Expr| matches!(&x.kind, ExprKind::Ident(n) if n == e);
    let is_elem = |x: &Expr| matches!(&x.kind, ExprKind::Ident(n) if n == e || aliases.contains(n));

    let mut why: Option<String> = None;
    let (mut uses, mut allowed) = (0usize, 0usize);
    let (mut accessed, mut written) = (BTreeSet::new(), BTreeSet::new());
    ast_util::visit_stmts(&body, &mut |s| {
        if matches!(
            s.kind,
            StmtKind::Break | StmtKind::Continue | StmtKind::Return(_)
        ) {
            why.get_or_insert_with(|| {
                Refusal::Jumps {
                    what: "the loop body may",
                }
                .to_string()
            });
        }
        if let StmtKind::Decl(ds) = &s.kind {
            allowed += ds
                .iter()
                .filter(|d| aliases.contains(&d.name))
                .filter(|d| matches!(&d.init, Some(Init::Expr(x)) if is_e(x)))
                .count();
        }
    });
    ast_util::visit_stmt_exprs(&body, &mut |x| match &x.kind {
        ExprKind::Ident(n) if n == e => uses += 1,
        ExprKind::Ident(n) if *n == c.idx || *n == c.counter => {
            why.get_or_insert(format!(
                "`{n}` is used other than in the element index `{}`, so the work depends on which thread takes which element",
                print(&el)
            ));
        }
        ExprKind::Ident(n) if tainted.contains(n) => {
            why.get_or_insert(format!("it uses the thread's position (`{n}`)"));
        }
        ExprKind::Binary(op, a, b) if op.is_comparison() => {
            allowed += usize::from(is_e(a)) + usize::from(is_e(b));
        }
        ExprKind::Index(a, i) => {
            let array = match &super::uncast(a).kind {
                ExprKind::Ident(p) if pointers.contains(p.as_str()) => Some(p.clone()),
                _ => None,
            };
            allowed += usize::from(is_e(i));
            match array {
                Some(p) if is_elem(i) => {
                    accessed.insert(p);
                }
                _ => {
                    why.get_or_insert(format!(
                        "`{}` is not element `{}` of a pointer parameter, so iterations may share memory",
                        shown(x),
                        print(&el)
                    ));
                }
            }
        }
        ExprKind::Unary(UnOp::Deref | UnOp::AddrOf, _) | ExprKind::Member { arrow: true, .. } => {
            why.get_or_insert(format!("`{}` reaches memory through a pointer", shown(x)));
        }
        ExprKind::Call(name, _)
            if !ast_util::is_pure(&expr(ExprKind::Call(name.clone(), Vec::new()))) =>
        {
            why.get_or_insert(format!("it calls `{name}`, which may have effects"));
        }
        ExprKind::Assign(_, target, _)
        | ExprKind::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, target) => {
            match assigned(target) {
                Target::Element(p) => {
                    written.insert(p.to_string());
                }
                Target::Local(n) if locals.contains(n) && !aliases.contains(n) => {}
                Target::Local(n) => {
                    why.get_or_insert(format!(
                        "`{n}` is assigned in the loop, so a value may pass from one element to the next"
                    ));
                }
                Target::Other => {
                    why.get_or_insert(format!("`{}` is assigned", shown(target)));
                }
            }
        }
        _ => {}
    });
    if let Some(why) = why {
        return Err(why.into());
    }
    if uses != allowed {
        return Err(format!(
            "the element index `{}` is used as a value (only subscripts, comparisons and `int` copies are kept exact when it is computed in 64 bits)",
            print(&el)
        )
        .into());
    }
    let pairs = accessed
        .iter()
        .flat_map(|a| written.iter().map(move |w| (a.clone(), w.clone())))
        .filter(|(a, w)| a != w)
        .collect();
    let arrays: Vec<String> = accessed.iter().map(|a| format!("`{a}`")).collect();
    let proof = format!(
        "every access is element `{}` of {}, and every variable the loop assigns is declared in it",
        print(&el),
        match arrays.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => "no array".into(),
        }
    );
    Ok(Checked {
        body: ast_util::branch_stmts(&body),
        pairs,
        proof,
    })
}

/// What an assignment writes.
enum Target<'a> {
    /// An element of array `p` (`p[i]`, `p[i].x`).
    Element(&'a str),
    /// A variable (`s`, `v.x`).
    Local(&'a str),
    /// Anything else.
    Other,
}

fn assigned(target: &Expr) -> Target<'_> {
    match &target.kind {
        ExprKind::Member {
            base, arrow: false, ..
        } => assigned(base),
        ExprKind::Index(a, _) => match &super::uncast(a).kind {
            ExprKind::Ident(p) => Target::Element(p),
            _ => Target::Other,
        },
        ExprKind::Ident(n) => Target::Local(n),
        _ => Target::Other,
    }
}

/// The names declared at the kernel's top level.
fn top_level_names(f: &Function) -> Vec<String> {
    f.body
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Decl(ds) => Some(ds.iter().map(|d| d.name.clone())),
            _ => None,
        })
        .flatten()
        .collect()
}

/// The locals `body` declares, and among them the `int` copies of the
/// element index (`int i = e;`); an error for a declaration the proof
/// does not cover (an array, a `static` or non-local one, or one hiding a
/// name of `outer`).
fn locals_of(
    body: &Stmt,
    e: &str,
    outer: &BTreeSet<String>,
) -> Result<(BTreeSet<String>, BTreeSet<String>), Refusal> {
    let (mut locals, mut aliases) = (BTreeSet::new(), BTreeSet::new());
    let mut why = None;
    ast_util::visit_stmts(body, &mut |s| {
        let StmtKind::Decl(ds) = &s.kind else {
            return;
        };
        for d in ds {
            if !d.is_plain_local() {
                why.get_or_insert(format!(
                    "the loop declares `{}`, which is not a plain local scalar",
                    d.name
                ));
            }
            if outer.contains(&d.name) || !locals.insert(d.name.clone()) {
                why.get_or_insert(format!("the loop declares `{}` again", d.name));
            }
            let copy = matches!(&d.init, Some(Init::Expr(x)) if matches!(&x.kind, ExprKind::Ident(n) if n == e));
            if copy && d.ty.base == BaseType::Int {
                aliases.insert(d.name.clone());
            }
        }
    });
    why.map_or(Ok((locals, aliases)), |w| Err(w.into()))
}
