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
        Stmt::Assign { .. } | Stmt::Store { .. } | Stmt::Atomic { .. } => {
            let (gen, kill) = stmt_gen_kill(s);
            live.retain(|v| !kill.contains(v));
            live.extend(gen);
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
            // The head: live after the loop, read by the test, or
            // upward-exposed in the body and step. Liveness is a gen/kill
            // problem, so that is already the fixpoint and one pass over
            // the body records every statement's set (iterating instead
            // would revisit a loop nest of depth d 2^d times).
            let mut head = live;
            if let Some(c) = cond {
                reads(c, &mut head);
            }
            let (body_gen, _) = gen_kill(body.iter().chain(step));
            head.extend(body_gen);
            let after_body = stmts(step, head.clone(), out);
            stmts(body, after_body, out);
            live = head;
        }
        Stmt::Scope { body, .. } => live = stmts(body, live, out),
        Stmt::Jump { .. } | Stmt::Return { .. } | Stmt::Sync { .. } => {}
    }
    live
}

/// The variables a statement sequence may read before writing them (gen)
/// and those it writes on every path (kill): live before the sequence is
/// `gen ∪ (live after ∖ kill)`.
fn gen_kill<'a>(
    ss: impl DoubleEndedIterator<Item = &'a Stmt>,
) -> (BTreeSet<VarId>, BTreeSet<VarId>) {
    let (mut gen, mut kill) = (BTreeSet::new(), BTreeSet::new());
    for s in ss.rev() {
        let (g, k) = stmt_gen_kill(s);
        gen.retain(|v| !k.contains(v));
        gen.extend(g);
        kill.extend(k);
    }
    (gen, kill)
}

fn stmt_gen_kill(s: &Stmt) -> (BTreeSet<VarId>, BTreeSet<VarId>) {
    let (mut gen, mut kill) = (BTreeSet::new(), BTreeSet::new());
    match s {
        Stmt::Assign { var, value, .. } => {
            kill.insert(*var);
            reads(value, &mut gen);
        }
        Stmt::Store { access, value, .. } => {
            reads(&access.index, &mut gen);
            reads(value, &mut gen);
        }
        Stmt::Atomic {
            access,
            value,
            compare,
            result,
            ..
        } => {
            reads(&access.index, &mut gen);
            reads(value, &mut gen);
            if let Some(c) = compare {
                reads(c, &mut gen);
            }
            if let Some(r) = result {
                kill.insert(*r);
            }
        }
        Stmt::If {
            cond, then, els, ..
        } => {
            let (gt, kt) = gen_kill(then.iter());
            let (ge, ke) = gen_kill(els.iter());
            gen = &gt | &ge;
            reads(cond, &mut gen);
            kill = &kt & &ke;
        }
        Stmt::Loop {
            cond, body, step, ..
        } => {
            // The body may run zero times: it kills nothing.
            gen = gen_kill(body.iter().chain(step)).0;
            if let Some(c) = cond {
                reads(c, &mut gen);
            }
        }
        Stmt::Scope { body, .. } => return gen_kill(body.iter()),
        Stmt::Jump { .. } | Stmt::Return { .. } | Stmt::Sync { .. } => {}
    }
    (gen, kill)
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

    #[test]
    fn deep_nests_are_analyzed_in_one_pass_with_the_fixpoint_sets() {
        // 40 nested loops: iterating each loop to a fixpoint would visit
        // the innermost body 2^40 times.
        let depth = 40;
        let mut body = "s += t;".to_string();
        for k in (0..depth).rev() {
            body = format!("for (int i{k} = 0; i{k} < n; i{k}++) {{ {body} }}");
        }
        let src = format!(
            "__global__ void k(int *a, int n) {{ int s = 0; int t = a[1];\n{body}\na[0] = s; t = 0; a[2] = t; }}"
        );
        let f = parse_source(SourceFile::new("t.cu", &src));
        let k = lower_kernel(&f, "k").unwrap();
        let live = live_after(&k);
        let name = |v: &VarId| k.vars[*v].name.clone();
        // Inside the innermost loop every enclosing counter is live (each
        // outer step reads its own), and so are `s`, `t` and `n`.
        let mut ss = &k.body;
        let mut innermost = None;
        while let Some(Stmt::Loop { body, .. }) = ss.iter().find(|s| matches!(s, Stmt::Loop { .. }))
        {
            innermost = Some(&body[0]);
            ss = body;
        }
        let names: Vec<String> = live[&key(innermost.unwrap())].iter().map(name).collect();
        for v in ["s", "t", "n", "i0", "i20", "i39"] {
            assert!(names.contains(&v.to_string()), "{v} not live in {names:?}");
        }
        // `t` is written before it is read after the nest: dead there.
        let outer = k
            .body
            .iter()
            .find(|s| matches!(s, Stmt::Loop { .. }))
            .unwrap();
        let after: Vec<String> = live[&key(outer)].iter().map(name).collect();
        assert!(
            after.contains(&"s".to_string()) && !after.contains(&"t".to_string()),
            "{after:?}"
        );
    }
}
