//! Live variables: which variables a statement's successors may still read.
//! The linear facts forget the others, which keeps their constraint systems
//! small (a finished loop's counter says nothing about the rest).

use std::collections::{BTreeSet, HashMap};

use super::deps::key;
use crate::ir::{Expr, ExprKind, Kernel, Stmt, VarId};

/// The variables live after each statement (keyed by [`key`]) of a
/// jump-free kernel.
pub fn live_after(k: &Kernel) -> HashMap<usize, BTreeSet<VarId>> {
    let mut out = HashMap::new();
    stmts(&k.body, BTreeSet::new(), &mut out);
    out
}

fn reads(e: &Expr, live: &mut BTreeSet<VarId>) {
    e.visit(&mut |x| {
        if let ExprKind::Var(v) = x.kind {
            live.insert(v);
        }
    });
}

/// The variables live before `ss` given those live after.
fn stmts(
    ss: &[Stmt],
    mut live: BTreeSet<VarId>,
    out: &mut HashMap<usize, BTreeSet<VarId>>,
) -> BTreeSet<VarId> {
    for s in ss.iter().rev() {
        live = stmt(s, live, out);
    }
    live
}

fn stmt(
    s: &Stmt,
    after: BTreeSet<VarId>,
    out: &mut HashMap<usize, BTreeSet<VarId>>,
) -> BTreeSet<VarId> {
    out.entry(key(s)).or_default().extend(after.iter().copied());
    let mut live = after;
    match s {
        Stmt::Assign { var, value, .. } => {
            live.remove(var);
            reads(value, &mut live);
        }
        Stmt::Store { access, value, .. } => {
            reads(&access.index, &mut live);
            reads(value, &mut live);
        }
        Stmt::Atomic {
            access,
            value,
            compare,
            result,
            ..
        } => {
            if let Some(r) = result {
                live.remove(r);
            }
            reads(&access.index, &mut live);
            reads(value, &mut live);
            if let Some(c) = compare {
                reads(c, &mut live);
            }
        }
        Stmt::If {
            cond, then, els, ..
        } => {
            let t = stmts(then, live.clone(), out);
            let e = stmts(els, live, out);
            live = &t | &e;
            reads(cond, &mut live);
        }
        Stmt::Loop {
            cond, body, step, ..
        } => {
            // The head: live after the loop, read by the test, or live at
            // the start of the body; iterate to a fixpoint.
            let mut head = live;
            loop {
                let mut next = head.clone();
                if let Some(c) = cond {
                    reads(c, &mut next);
                }
                let after_body = stmts(step, next.clone(), out);
                next.extend(stmts(body, after_body, out));
                if next == head {
                    break;
                }
                head = next;
            }
            live = head;
        }
        Stmt::Scope { body, .. } => live = stmts(body, live, out),
        Stmt::Jump { .. } | Stmt::Return { .. } | Stmt::Sync { .. } => {}
    }
    live
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::parse::parse_source;
    use crate::ir::lower::lower_kernel;
    use crate::source::SourceFile;

    #[test]
    fn loop_counters_die_after_their_loop() {
        let f = parse_source(SourceFile::new(
            "t.cu",
            "__global__ void k(int *a, int n) { int s = 0;\n\
             for (int i = 0; i < n; i++) { s += i; }\n\
             for (int j = 0; j < n; j++) { s += j; }\n\
             a[0] = s; }",
        ));
        let k = lower_kernel(&f, "k").unwrap();
        let live = live_after(&k);
        let name = |v: &VarId| k.vars[*v].name.clone();
        let names = |s: &Stmt| -> Vec<String> { live[&key(s)].iter().map(name).collect() };
        // After the first loop: s and n are live, i is not.
        let first_loop = k
            .body
            .iter()
            .find(|s| matches!(s, Stmt::Loop { .. }))
            .unwrap();
        let after = names(first_loop);
        assert!(after.contains(&"s".to_string()) && after.contains(&"n".to_string()));
        assert!(!after.contains(&"i".to_string()));
        // Inside it, i is live (the step reads it).
        let Stmt::Loop { body, .. } = first_loop else {
            unreachable!()
        };
        assert!(names(&body[0]).contains(&"i".to_string()));
    }
}
