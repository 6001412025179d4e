//! Tests of the symbolic values: atoms and their facts, unsigned wrap
//! that needs a proof, updates, and per-lane facts from conditions.

use super::*;
use crate::cuda::parse::parse_source;
use crate::ir::lower::lower_kernel;
use crate::source::SourceFile;

fn kernel(src: &str) -> Kernel {
    let f = parse_source(SourceFile::new("t.cu", src));
    lower_kernel(&f, "k").unwrap()
}

fn launch(block: Option<crate::launch::Dims>) -> LaunchFacts {
    LaunchFacts {
        block,
        grid: None,
        warp: 32,
    }
}

/// The value of every assignment to `name`, in order.
/// The texts of the maxima and minima the symbols name, in order.
fn named_extremes(s: &Symbols) -> Vec<&str> {
    (s.atoms.iter())
        .filter(|a| matches!(a.shape, AtomShape::Extreme { named: true, .. }))
        .map(|a| a.text.as_str())
        .collect()
}

fn values<'k>(k: &'k Kernel, name: &str) -> Vec<&'k Expr> {
    let v = k.vars.iter().position(|x| x.name == name).unwrap();
    let mut out = Vec::new();
    crate::ir::visit_stmts(&k.body, &mut |s| {
        if let crate::ir::Stmt::Assign { var, value, .. } = s {
            if *var == v {
                out.push(value);
            }
        }
    });
    out
}

#[test]
fn atoms_and_their_facts() {
    let k = kernel(
        "__global__ void k(int *a, int n, int m) { int q = n / 16; int p = n * m; int r = n % 4; a[0] = q + p + r; }",
    );
    let s = Symbols::new(&k, launch(crate::launch::block([64, 1, 1]).ok()));
    let texts: Vec<&str> = s.atoms.iter().map(|a| a.text.as_str()).collect();
    assert_eq!(texts, vec!["n/16", "n*m", "n%4"]);
    let c = s.launch_constraints();
    let q = LinExpr::var(s.atom(0));
    let n = LinExpr::var(s.var(k.vars.iter().position(|v| v.name == "n").unwrap()));
    // 16·q within 15 of n.
    assert!(c.entails_ge0(&n.add(&LinExpr::int(15)).sub(&q.scale(Rational::int(16)))));
    assert!(c.entails_ge0(&q.scale(Rational::int(16)).sub(&n).add(&LinExpr::int(15))));
    // The remainder is within ±3.
    let r = LinExpr::var(s.atom(2));
    assert_eq!(
        c.bounds(&r),
        (Some(Rational::int(-3)), Some(Rational::int(3)))
    );
    // Entry bounds of n/16 over the inputs: (n ± 15)/16.
    let up = s.entry_bound(&k, s.atom(0), true).unwrap();
    assert_eq!(up.to_string(), "1/16·n + 15/16");
    // blockDim is a constant for a fixed block.
    assert_eq!(s.builtin_lin(Builtin::BlockDim(0)), LinExpr::int(64));
}

#[test]
fn unsigned_wrap_needs_a_proof() {
    let k = kernel(
        "__global__ void k(int *a, unsigned int n, unsigned int i) { unsigned int d = n - i; int e = (int)n - 1; a[0] = d + e; }",
    );
    let s = Symbols::new(&k, launch(None));
    let d = values(&k, "d")[0];
    assert_eq!(s.linearize(d, Some(&Constraints::top())), None);
    let mut ctx = Constraints::top();
    let (n, i) = (
        LinExpr::var(s.var(k.vars.iter().position(|v| v.name == "n").unwrap())),
        LinExpr::var(s.var(k.vars.iter().position(|v| v.name == "i").unwrap())),
    );
    ctx.add_ge0(n.sub(&i));
    assert_eq!(s.linearize(d, Some(&ctx)), Some(n.sub(&i)));
    // A signed difference is linear anyway (no overflow assumed).
    assert!(s.linearize(values(&k, "e")[0], None).is_some());
}

#[test]
fn updates_relate_new_and_old_values() {
    let k = kernel(
        "__global__ void k(int *a, unsigned int s, int x, int y) { s = s >> 1; x = min(x, y); a[0] = s + x; }",
    );
    let sy = Symbols::new(&k, launch(None));
    let sv = k.vars.iter().position(|v| v.name == "s").unwrap();
    let Update::Relation(facts) = sy.update(sv, values(&k, "s")[0], &Constraints::top()) else {
        panic!("a shift is a relation")
    };
    // 2·NEW ≤ s ≤ 2·NEW + 1, NEW ≥ 0: with s ≥ 1, NEW − s ≤ −1.
    let mut c = Constraints::top();
    for f in facts {
        c.add_ge0(f);
    }
    let s_lin = LinExpr::var(sy.var(sv));
    c.add_ge0(s_lin.sub(&LinExpr::int(1)));
    assert_eq!(
        int_bounds(&c, &LinExpr::var(NEW).sub(&s_lin)).1,
        Some(Rational::int(-1))
    );
    let xv = k.vars.iter().position(|v| v.name == "x").unwrap();
    let Update::Relation(facts) = sy.update(xv, values(&k, "x")[0], &Constraints::top()) else {
        panic!("min is a relation")
    };
    assert!(facts.contains(&LinExpr::var(sy.var(xv)).sub(&LinExpr::var(NEW))));
}

#[test]
fn conditions_give_per_lane_facts() {
    let k = kernel(
        "__global__ void k(int *a, int n, int f) { int i = threadIdx.x; if (i < n && !(i >= 8) && !f) { a[i] = 0; } }",
    );
    let s = Symbols::new(&k, launch(crate::launch::block([64, 1, 1]).ok()));
    let mut cond = None;
    crate::ir::visit_stmts(&k.body, &mut |st| {
        if let crate::ir::Stmt::If { cond: c, .. } = st {
            cond = Some(c);
        }
    });
    let facts = s.cond_facts(cond.unwrap(), None, false);
    let text: Vec<String> = facts
        .iter()
        .map(|f| f.to_string_with(|x| s.name(&k, x)))
        .collect();
    assert_eq!(text, vec!["n - i - 1", "-i + 7", "f", "-f"]);
    // Negated, a conjunction says nothing.
    assert!(s.cond_facts(cond.unwrap(), None, true).is_empty());
}

#[test]
fn maxima_and_minima_over_inputs_are_atoms_with_their_facts() {
    let k = kernel(
        "__global__ void k(int *a, int n, int m) { int cp = n; \
         a[0] = max(n, m) + min(500, cp) + max(n * m, 8) + min(n * m, 500); }",
    );
    let s = Symbols::new(&k, launch(None));
    let texts: Vec<&str> = s.atoms.iter().map(|a| a.text.as_str()).collect();
    // Named by the inputs they read (the copy `cp` read as `n`), a
    // maximum over a product too (found after the product).
    assert_eq!(
        texts,
        vec![
            "max(n,m)",
            "min(500,n)",
            "n*m",
            "min(n*m,500)",
            "max(n*m,8)"
        ]
    );
    let var = |name: &str| LinExpr::var(s.var(k.vars.iter().position(|v| v.name == name).unwrap()));
    let atom = |i: usize| LinExpr::var(s.atom(i));
    let c = s.launch_constraints();
    // The maximum is at least either operand, the minimum at most.
    assert!(c.entails_ge0(&atom(0).sub(&var("n"))));
    assert!(c.entails_ge0(&atom(0).sub(&var("m"))));
    assert!(c.entails_ge0(&var("n").sub(&atom(1))));
    assert!(c.entails_ge0(&LinExpr::int(500).sub(&atom(1))));
    // Nothing more: n may be below m, so the maximum need not be n.
    assert!(!c.entails_ge0(&var("n").sub(&atom(0))));
    // Over inputs alone, a bound names the atom itself, exactly.
    for upper in [true, false] {
        assert_eq!(
            s.entry_bound(&k, s.atom(0), upper).unwrap().to_string(),
            "max(n,m)"
        );
    }
    // Over a product as well.
    for (i, text) in [(3, "min(n*m,500)"), (4, "max(n*m,8)")] {
        assert_eq!(
            s.entry_bound(&k, s.atom(i), true).unwrap().to_string(),
            text
        );
    }
}

#[test]
fn extremes_over_sums_multiples_and_quotients_of_inputs_are_named() {
    let k = kernel(
        "__global__ void k(int *a, int n, int m) { int h = max(n / 4, 10); \
         a[0] = h + max(n + 3, 64) + min(2 * n, m - 1) + max(n - 1, 0); \
         a[1] = max(n >> 1, 3) + max(n << 2, 8) + min(n * m, 7); }",
    );
    let s = Symbols::new(&k, launch(None));
    let named = named_extremes(&s);
    // The maximum over the quotient (or the right shift, or the product)
    // comes in a second pass, after it; a left shift by a constant is
    // linear.
    assert_eq!(
        named,
        [
            "max(n+3,64)",
            "min(2*n,m-1)",
            "max(n-1,0)",
            "max(n<<2,8)",
            "max(n/4,10)",
            "max(n>>1,3)",
            "min(n*m,7)"
        ]
    );
    // Unsigned: a quotient or a right shift never wraps and is named; a
    // sum or a product may wrap, and its maximum is no atom.
    let u = kernel(
        "__global__ void k(unsigned *a, unsigned n) { \
         a[0] = max(n / 4, 10u) + max(n >> 1, 3u) + max(n + 3, 10u) + max(2 * n, 5u); }",
    );
    let su = Symbols::new(&u, launch(None));
    let named_u = named_extremes(&su);
    assert_eq!(named_u, ["max(n/4,10)", "max(n>>1,3)"]);
    assert!(!su.atoms.iter().any(|a| a.text.starts_with("max(n+3")));
    // A sum, product or left shift too small to wrap (`n / 3 + 1` is at
    // most 2^32 / 3) is named; `n / 2 + n / 2 + 2` reaches 2^32 and wraps.
    let small = kernel(
        "__global__ void k(unsigned *a, unsigned n) { \
         a[0] = max(n / 3 + 1, 100u) + max((n >> 2) << 1, 5u) + max(3 * (n / 4), 1u) \
         + max(n / 2 + n / 2 + 2, 1u); }",
    );
    let ss = Symbols::new(&small, launch(None));
    let named_small = named_extremes(&ss);
    assert_eq!(
        named_small,
        ["max((n/3)+1,100)", "max((n>>2)<<1,5)", "max(3*(n/4),1)"]
    );
    // The quotient inside is an atom of its own, with 4·q ≤ n + 3: the
    // maximum is at least it and at least 10.
    let q = s.atoms.iter().position(|a| a.text == "n/4").unwrap();
    let h = s
        .atoms
        .iter()
        .position(|a| a.text == "max(n/4,10)")
        .unwrap();
    let c = s.launch_constraints();
    let (q, h) = (LinExpr::var(s.atom(q)), LinExpr::var(s.atom(h)));
    assert!(c.entails_ge0(&h.sub(&q)));
    assert!(c.entails_ge0(&h.sub(&LinExpr::int(10))));
    assert!(!c.entails_ge0(&q.sub(&h)));
}

#[test]
fn a_maximum_over_a_counter_is_bounded_by_its_operands_bounds() {
    // Disjunctions with a counter: `n <= max(16, i)` and `min(i, 40) <=
    // n`, known only through the bounds of `i` where they are evaluated.
    let k = kernel(
        "__global__ void k(int *a, int n) { for (int i = 0; i < n; i++) { \
         if (n <= max(16, i)) { a[i] = 0; } if (min(i, 40) <= n) { a[i] = 1; } } }",
    );
    let s = Symbols::new(&k, launch(crate::launch::block([64, 1, 1]).ok()));
    let mut conds = Vec::new();
    crate::ir::visit_stmts(&k.body, &mut |st| {
        if let crate::ir::Stmt::If { cond, .. } = st {
            conds.push(cond.clone());
        }
    });
    let i = LinExpr::var(s.var(k.vars.iter().position(|v| v.name == "i").unwrap()));
    let text = |c: &Expr, ctx: Option<&Constraints>| -> Vec<String> {
        s.cond_facts(c, ctx, false)
            .iter()
            .map(|f| f.to_string_with(|x| s.name(&k, x)))
            .collect()
    };
    // Without the counter's bounds: nothing.
    assert!(text(&conds[0], None).is_empty());
    assert!(text(&conds[1], None).is_empty());
    // With `i >= 0`: the maximum is at most `16 + i − min(16, 0)`, the
    // minimum at least `min(0, 40)`.
    let mut ctx = s.launch_constraints();
    ctx.add_ge0(i.clone());
    assert_eq!(text(&conds[0], Some(&ctx)), ["i - n + 16"]);
    assert_eq!(text(&conds[1], Some(&ctx)), ["n"]);
    // With `i <= 30` too: the maximum at most 30, the minimum at least
    // `i + 40 − max(30, 40)`.
    ctx.add_ge0(LinExpr::int(30).sub(&i));
    assert_eq!(text(&conds[0], Some(&ctx)), ["i - n + 16", "-n + 30"]);
    assert_eq!(text(&conds[1], Some(&ctx)), ["n - i", "n"]);
}
