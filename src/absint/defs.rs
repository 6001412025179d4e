//! Where a kernel assigns its variables: statement positions, dominance,
//! and the locals assigned once whose every read sees that assignment.
//!
//! A local `m` assigned exactly once, `m = e`, holds `e`'s value wherever
//! it is read *if* the assignment runs before every read on every path:
//! each read lies after the assignment in the same statement list (or in a
//! list nested there). Where `e` reads only values fixed for the whole
//! launch (parameters the kernel never assigns, launch dimensions,
//! `blockIdx`), every execution of the assignment stores the same value,
//! even one inside a loop, so every read of `m` is `e`'s value.

use std::collections::{BTreeSet, HashMap};

use crate::ir::{Expr, ExprKind, Kernel, Stmt, VarId, VarKind};

/// Where a statement is: the step into each enclosing statement list
/// (index, which list), then its index in its own list.
pub type Position = (Vec<(u32, u8)>, u32);

/// Whether a statement at `def` runs before one at `at` whenever `at` runs.
pub fn dominates(def: &Position, at: &Position) -> bool {
    let (dp, di) = def;
    let (ap, ai) = at;
    if !ap.starts_with(dp) {
        return false;
    }
    match ap.get(dp.len()) {
        Some((i, _)) => i > di,
        None => ai > di,
    }
}

/// The statement lists directly inside `s`, in [`Position`] order.
pub fn sublists(s: &Stmt) -> Vec<&[Stmt]> {
    match s {
        Stmt::If { then, els, .. } => vec![then, els],
        Stmt::Loop { body, step, .. } => vec![body, step],
        Stmt::Scope { body, .. } => vec![body],
        _ => vec![],
    }
}

/// The expressions a statement evaluates itself (not those of the
/// statement lists inside it).
fn own_exprs(s: &Stmt) -> Vec<&Expr> {
    match s {
        Stmt::Assign { value, .. } => vec![value],
        Stmt::Store { access, value, .. } => vec![&access.index, value],
        Stmt::Atomic {
            access,
            value,
            compare,
            ..
        } => {
            let mut v = vec![&access.index, value];
            v.extend(compare);
            v
        }
        Stmt::If { cond, .. }
        | Stmt::Loop {
            cond: Some(cond), ..
        } => vec![cond],
        _ => vec![],
    }
}

/// The assignments of a kernel: the last value assigned to each variable
/// and where, and how many statements write it.
pub struct Defs<'k> {
    defs: HashMap<VarId, (&'k Expr, Position)>,
    assigned: HashMap<VarId, usize>,
}

impl<'k> Defs<'k> {
    /// The assignments of `body`.
    pub fn of(body: &'k [Stmt]) -> Defs<'k> {
        let mut d = Defs {
            defs: HashMap::new(),
            assigned: HashMap::new(),
        };
        d.collect(body, &mut Vec::new());
        d
    }

    fn collect(&mut self, stmts: &'k [Stmt], path: &mut Vec<(u32, u8)>) {
        for (i, s) in stmts.iter().enumerate() {
            match s {
                Stmt::Assign { var, value, .. } => {
                    *self.assigned.entry(*var).or_default() += 1;
                    self.defs.insert(*var, (value, (path.clone(), i as u32)));
                }
                // Never a single plain assignment.
                Stmt::Atomic {
                    result: Some(r), ..
                } => *self.assigned.entry(*r).or_default() += 2,
                _ => {}
            }
            for (b, list) in sublists(s).into_iter().enumerate() {
                path.push((i as u32, b as u8));
                self.collect(list, path);
                path.pop();
            }
        }
    }

    /// Whether some statement writes `v`.
    pub fn is_assigned(&self, v: VarId) -> bool {
        self.assigned.contains_key(&v)
    }

    /// The value and position of `v`'s only assignment, when exactly one
    /// statement writes it and that is a plain assignment.
    pub fn single(&self, v: VarId) -> Option<(&'k Expr, &Position)> {
        if self.assigned.get(&v) != Some(&1) {
            return None;
        }
        self.defs.get(&v).map(|(e, p)| (*e, p))
    }
}

/// The locals of `k` assigned once, by a plain assignment that runs before
/// every read of them (see the module's documentation), with the value
/// assigned.
pub fn read_after_single_def(k: &Kernel) -> HashMap<VarId, &Expr> {
    let defs = Defs::of(&k.body);
    let mut candidates: HashMap<VarId, (&Expr, &Position)> = HashMap::new();
    for (v, var) in k.vars.iter().enumerate() {
        if var.kind == VarKind::Local {
            if let Some(d) = defs.single(v) {
                candidates.insert(v, d);
            }
        }
    }
    let mut broken = BTreeSet::new();
    reads(&k.body, &mut Vec::new(), &mut |v, at| {
        if candidates
            .get(&v)
            .is_some_and(|(_, def)| !dominates(def, at))
        {
            broken.insert(v);
        }
    });
    candidates
        .into_iter()
        .filter(|(v, _)| !broken.contains(v))
        .map(|(v, (e, _))| (v, e))
        .collect()
}

/// Calls `f` with every variable read in `stmts` and the position of the
/// statement reading it.
fn reads(stmts: &[Stmt], path: &mut Vec<(u32, u8)>, f: &mut impl FnMut(VarId, &Position)) {
    for (i, s) in stmts.iter().enumerate() {
        let at = (path.clone(), i as u32);
        for e in own_exprs(s) {
            e.visit(&mut |x| {
                if let ExprKind::Var(v) = x.kind {
                    f(v, &at);
                }
            });
        }
        for (b, list) in sublists(s).into_iter().enumerate() {
            path.push((i as u32, b as u8));
            reads(list, path, f);
            path.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::parse::parse_source;
    use crate::ir::lower::lower_kernel;
    use crate::source::SourceFile;

    /// The names of the locals `read_after_single_def` keeps in kernel `k`.
    fn kept(src: &str) -> Vec<String> {
        let parsed = parse_source(SourceFile::new("t.cu", src));
        let k = lower_kernel(&parsed, "k").expect("the kernel lowers");
        let mut names: Vec<String> = read_after_single_def(&k)
            .keys()
            .map(|v| k.vars[*v].name.clone())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn copies_read_after_their_assignment_are_kept() {
        let src = "__global__ void k(float *y, int n) {\n\
                   int m = n; const int q = m / 4;\n\
                   for (int i = 0; i < q; i++) { int t = m; y[i] = t; }\n}";
        let names = kept(src);
        for v in ["m", "q", "t"] {
            assert!(names.iter().any(|n| n == v), "{v} missing from {names:?}");
        }
        assert!(!names.iter().any(|n| n == "i"), "{names:?}");
    }

    #[test]
    fn reassigned_or_read_before_assignment_is_not() {
        // Reassigned in a branch; assigned in a branch and read after it;
        // assigned after a read in a loop.
        let src = "__global__ void k(float *y, int n) {\n\
                   int a = n; if (n > 3) { a = 2; }\n\
                   int b; if (n > 5) { b = n; } y[0] = b;\n\
                   int c; for (int i = 0; i < 3; i++) { y[i] = c; c = n; }\n\
                   y[1] = a;\n}";
        let names = kept(src);
        for v in ["a", "b", "c"] {
            assert!(!names.iter().any(|n| n == v), "{v} kept: {names:?}");
        }
    }
}
