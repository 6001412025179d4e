//! The path from the kernel's entry to one access: assignments
//! substituted lane by lane, guards of the enclosing `if`s and loops, and
//! the access's index expression.

use crate::ir::{visit_exprs, visit_stmts, Expr, ExprKind, SiteId, Stmt, VarId};

use super::encode::{Enc, Lane};
use super::term::Term;
use crate::ir::sites::load_index;

/// Whether `s` holds site `site` (in its own expressions or nested).
fn holds(s: &Stmt, site: SiteId) -> bool {
    let s = std::slice::from_ref(s);
    let mut found = false;
    visit_exprs(s, &mut |e| {
        if let ExprKind::Load(a) = &e.kind {
            found |= a.site == site;
        }
    });
    visit_stmts(s, &mut |x| {
        if let Stmt::Store { access, .. } | Stmt::Atomic { access, .. } = x {
            found |= access.site == site;
        }
    });
    found
}

/// The variables `stmts` may assign.
fn assigned(stmts: &[Stmt]) -> Vec<VarId> {
    let mut out = Vec::new();
    visit_stmts(stmts, &mut |s| match s {
        Stmt::Assign { var, .. } => out.push(*var),
        Stmt::Atomic {
            result: Some(var), ..
        } => out.push(*var),
        _ => {}
    });
    out
}

/// The index expression of `site` in the statement that holds it.
fn own_index(s: &Stmt, site: SiteId) -> Option<&Expr> {
    let exprs: Vec<&Expr> = match s {
        Stmt::Store { access, .. } | Stmt::Atomic { access, .. } if access.site == site => {
            return Some(&access.index)
        }
        Stmt::Store { access, value, .. } => vec![&access.index, value],
        Stmt::Atomic { access, value, .. } => vec![&access.index, value],
        Stmt::Assign { value, .. } => vec![value],
        Stmt::If { cond, .. } => vec![cond],
        Stmt::Loop { cond: Some(c), .. } => vec![c],
        _ => vec![],
    };
    exprs.into_iter().find_map(|e| load_index(e, site))
}

/// Walks to the statement holding `site`, updating every lane, and
/// returns the index expression there.
pub(super) fn walk<'k>(
    enc: &mut Enc,
    stmts: &'k [Stmt],
    site: SiteId,
    lanes: &mut [Lane],
    tids: &[[Term; 3]],
) -> Option<&'k Expr> {
    for s in stmts {
        if !holds(s, site) {
            match s {
                Stmt::Assign { var, value, .. } => {
                    for (l, lane) in lanes.iter_mut().enumerate() {
                        let t = enc.expr(value, lane, l, &tids[l]);
                        lane.env.insert(*var, t);
                    }
                }
                _ => {
                    for v in assigned(std::slice::from_ref(s)) {
                        for lane in lanes.iter_mut() {
                            lane.env.remove(&v);
                        }
                    }
                }
            }
            continue;
        }
        return match s {
            Stmt::If { then, els, .. } if !then.iter().chain(els).any(|x| holds(x, site)) => {
                own_index(s, site)
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                let in_then = then.iter().any(|x| holds(x, site));
                for (l, lane) in lanes.iter_mut().enumerate() {
                    let c = enc.expr(cond, lane, l, &tids[l]);
                    let c = enc.truth(&c);
                    lane.guards.push(if in_then { c } else { Enc::not(&c) });
                }
                walk(enc, if in_then { then } else { els }, site, lanes, tids)
            }
            Stmt::Loop {
                cond,
                body,
                step,
                test_first,
                ..
            } => {
                for v in assigned(body).into_iter().chain(assigned(step)) {
                    for lane in lanes.iter_mut() {
                        lane.env.remove(&v);
                    }
                }
                let in_body = body.iter().any(|x| holds(x, site));
                if !in_body && !step.iter().any(|x| holds(x, site)) {
                    return own_index(s, site);
                }
                if let (true, true, Some(c)) = (in_body, *test_first, cond) {
                    for (l, lane) in lanes.iter_mut().enumerate() {
                        let g = enc.expr(c, lane, l, &tids[l]);
                        let g = enc.truth(&g);
                        lane.guards.push(g);
                    }
                }
                walk(enc, if in_body { body } else { step }, site, lanes, tids)
            }
            Stmt::Scope { body, .. } => walk(enc, body, site, lanes, tids),
            _ => own_index(s, site),
        };
    }
    None
}
