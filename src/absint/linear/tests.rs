//! Tests of the linear domain: arithmetic, entailment, feasibility,
//! bounds, projection, join, widening and tightening, and random systems
//! that must never be answered unsoundly.

use super::*;

const I: Sym = 0;
const N: Sym = 1;
const X: Sym = 2;
const Y: Sym = 3;

fn r(n: i128) -> Rational {
    Rational::int(n)
}

fn v(s: Sym) -> LinExpr {
    LinExpr::var(s)
}

fn k(n: i128) -> LinExpr {
    LinExpr::int(n)
}

/// `Σ cᵢ·sᵢ + c`.
fn lin(terms: &[(i128, Sym)], c: i128) -> LinExpr {
    terms
        .iter()
        .fold(k(c), |e, &(a, s)| e.add(&LinExpr::term(s, r(a))))
}

fn name(s: Sym) -> String {
    match s {
        I => "i".into(),
        N => "n".into(),
        X => "x".into(),
        Y => "y".into(),
        _ => format!("v{s}"),
    }
}

/// `0 ≤ i ≤ n − 1`.
fn loop_body() -> Constraints {
    let mut c = Constraints::top();
    c.add_ge0(v(I));
    c.add_ge0(lin(&[(1, N), (-1, I)], -1));
    c
}

#[test]
fn linexpr_arithmetic_and_display() {
    let e = v(N).sub(&v(I)).sub(&k(1));
    assert_eq!(e.to_string_with(name), "n - i - 1");
    assert_eq!(e.coeff(I), r(-1));
    assert_eq!(e.coeff(X), Rational::ZERO);
    assert!(!e.is_constant());
    assert_eq!(e.vars().collect::<Vec<_>>(), vec![I, N]);
    assert!(e.add(&v(I)).sub(&v(N)).is_constant());
    assert_eq!(e.add(&v(I)).coeffs.len(), 1, "no zero coefficients kept");
    assert_eq!(e.neg().to_string_with(name), "i - n + 1");
    assert_eq!(
        e.scale(Rational::new(1, 2)).to_string_with(name),
        "1/2*n - 1/2*i - 1/2"
    );
    assert_eq!(e.scale(Rational::ZERO), LinExpr::zero());
    assert_eq!(LinExpr::term(X, Rational::ZERO), LinExpr::zero());
    assert_eq!(format!("{}", LinExpr::zero()), "0");
    assert_eq!(format!("{}", lin(&[(2, X), (-3, Y)], 4)), "2*v2 - 3*v3 + 4");
    // i := 2x + 1 in n − i − 1 gives n − 2x − 2.
    let s = e.substitute(I, &lin(&[(2, X)], 1));
    assert_eq!(s.to_string_with(name), "n - 2*x - 2");
    assert_eq!(e.checked_substitute(I, &lin(&[(2, X)], 1)), Some(s));
    assert_eq!(e.substitute(Y, &k(7)), e);
    let env = |s: Sym| if s == N { r(10) } else { r(3) };
    assert_eq!(e.eval(env), r(6));
}

#[test]
fn normalization() {
    let mut c = Constraints::top();
    c.add_ge0(lin(&[(2, X)], -1));
    assert_eq!(
        c.facts(),
        &[lin(&[(1, X)], 0).sub(&LinExpr::constant(Rational::new(1, 2)))]
    );
    // A weaker parallel fact is dropped, a tighter one replaces it.
    c.add_ge0(lin(&[(4, X)], 0));
    assert_eq!(c.facts().len(), 1);
    assert_eq!(c.facts()[0].constant, Rational::new(-1, 2));
    c.add_ge0(lin(&[(3, X)], -6));
    assert_eq!(c.facts(), &[lin(&[(1, X)], -2)]);
    // Rational coefficients become coprime integers.
    c.add_ge0(
        v(Y).scale(Rational::new(2, 3))
            .sub(&v(X).scale(Rational::new(1, 3))),
    );
    assert_eq!(c.facts().len(), 2);
    assert!(c.facts().contains(&lin(&[(-1, X), (2, Y)], 0)));
    // Trivially true facts vanish; trivially false ones give bottom.
    c.add_ge0(k(0));
    c.add_ge0(k(3));
    assert_eq!(c.facts().len(), 2);
    assert!(!c.is_bottom());
    let mut d = c.clone();
    d.add_ge0(k(-1));
    assert!(d.is_bottom());
    assert!(d.facts().is_empty());
    d.add_ge0(v(X));
    assert!(d.is_bottom() && d.facts().is_empty());
    // Contradicting opposite facts give bottom at once.
    let mut e = Constraints::top();
    e.add_ge0(lin(&[(1, X)], -3));
    e.add_ge0(lin(&[(-1, X)], 2));
    assert!(e.is_bottom());
    // x ≥ 3 ∧ x ≤ 3 is fine.
    let mut e = Constraints::top();
    e.add_eq0(lin(&[(1, X)], -3));
    assert!(!e.is_bottom());
    assert_eq!(e.facts().len(), 2);
    assert_eq!(e.to_string_with(name), "{-x + 3 >= 0, x - 3 >= 0}");
    assert_eq!(Constraints::bottom().to_string(), "⊥");
    assert_eq!(Constraints::top().to_string(), "{}");
    assert!(Constraints::top().is_top());
    assert_eq!(Constraints::default(), Constraints::top());
}

#[test]
fn entailment() {
    let c = loop_body();
    assert!(c.entails_ge0(&lin(&[(1, N)], -1)));
    assert!(!c.entails_ge0(&lin(&[(1, N)], -2)));
    assert!(c.entails_ge0(&v(I)));
    assert!(c.entails_ge0(&lin(&[(1, N), (-1, I)], 0)));
    assert!(c.entails_ge0(&lin(&[(2, N), (-1, I)], -1)));
    assert!(!c.entails_ge0(&lin(&[(1, I)], -1)));
    assert!(c.entails_ge0(&k(0)));
    assert!(!c.entails_ge0(&k(-1)));
    assert!(!c.entails_ge0(&v(X)));
    assert!(c.entails_eq0(&k(0)));
    assert!(!c.entails_eq0(&v(I)));
    // Chains through several facts.
    let mut d = Constraints::top();
    d.add_ge0(lin(&[(1, X)], -1));
    d.add_ge0(lin(&[(1, Y), (-2, X)], 0));
    d.add_ge0(lin(&[(1, N), (-1, Y), (-1, I)], 0));
    d.add_ge0(v(I));
    assert!(d.entails_ge0(&lin(&[(1, N)], -2)));
    assert!(!d.entails_ge0(&lin(&[(1, N)], -3)));
    // Equalities.
    let mut e = Constraints::top();
    e.add_eq0(lin(&[(1, X), (-1, Y)], -1));
    e.add_ge0(v(Y));
    assert!(e.entails_ge0(&lin(&[(1, X)], -1)));
    assert!(e.entails_eq0(&lin(&[(2, X), (-2, Y)], -2)));
    // An empty set entails everything.
    let mut f = Constraints::top();
    f.add_ge0(lin(&[(1, X), (-1, Y)], -1));
    f.add_ge0(lin(&[(1, Y), (-1, I)], 0));
    f.add_ge0(lin(&[(1, I), (-1, X)], 0));
    assert!(!f.is_bottom());
    assert!(!f.is_feasible());
    assert!(f.entails_ge0(&k(-5)));
    assert!(f.entails_ge0(&lin(&[(-1, N)], -100)));
    assert!(Constraints::bottom().entails_ge0(&k(-1)));
    // Set inclusion.
    assert!(c.entails(&Constraints::top()));
    assert!(!Constraints::top().entails(&c));
    assert!(d.entails(&d));
    assert!(f.entails(&Constraints::bottom()));
    assert!(!c.entails(&Constraints::bottom()));
    assert!(Constraints::bottom().entails(&c));
}

#[test]
fn feasibility() {
    assert!(Constraints::top().is_feasible());
    assert!(!Constraints::bottom().is_feasible());
    assert!(loop_body().is_feasible());
    let mut c = Constraints::top();
    c.add_ge0(v(X));
    c.add_ge0(lin(&[(1, Y), (-1, X)], -1));
    assert!(c.is_feasible());
    c.add_ge0(lin(&[(-1, Y)], 0));
    assert!(!c.is_feasible());
    // Rational, not integer, feasibility: 0 < 2x < 2 ... here 1 ≤ 2x ≤ 1.
    let mut d = Constraints::top();
    d.add_ge0(lin(&[(2, X)], -1));
    d.add_ge0(lin(&[(-2, X)], 1));
    assert!(d.is_feasible());
    let mut t = d.clone();
    t.tighten_int();
    assert!(t.is_bottom());
}

#[test]
fn bounds() {
    let mut c = loop_body();
    assert_eq!(c.bounds(&v(I)), (Some(r(0)), None));
    c.add_ge0(lin(&[(-1, N)], 10));
    assert_eq!(c.bounds(&v(I)), (Some(r(0)), Some(r(9))));
    assert_eq!(c.bounds(&v(N)), (Some(r(1)), Some(r(10))));
    assert_eq!(c.bounds(&v(N).sub(&v(I))), (Some(r(1)), Some(r(10))));
    assert_eq!(
        c.bounds(&lin(&[(2, I), (1, N)], 3)),
        (Some(r(4)), Some(r(31)))
    );
    assert_eq!(c.bounds(&k(7)), (Some(r(7)), Some(r(7))));
    assert_eq!(c.bounds(&v(X)), (None, None));
    assert_eq!(c.bounds(&v(X).add(&v(I))), (None, None));
    let mut d = Constraints::top();
    d.add_ge0(lin(&[(-2, X)], 1));
    d.add_ge0(lin(&[(3, X)], 1));
    assert_eq!(
        d.bounds(&v(X)),
        (Some(Rational::new(-1, 3)), Some(Rational::new(1, 2)))
    );
    assert_eq!(d.bounds(&v(X).scale(r(6))), (Some(r(-2)), Some(r(3))));
    assert_eq!(Constraints::bottom().bounds(&v(X)), (None, None));
    assert_eq!(Constraints::top().bounds(&k(2)), (Some(r(2)), Some(r(2))));
    let mut e = Constraints::top();
    e.add_ge0(lin(&[(1, X)], -1));
    e.add_ge0(lin(&[(-1, Y)], 0));
    e.add_ge0(lin(&[(1, Y), (-1, X)], 0));
    assert_eq!(e.bounds(&v(X)), (None, None), "infeasible");
    // Equality: x = y + 1, 0 ≤ y ≤ 4.
    let mut f = Constraints::top();
    f.add_eq0(lin(&[(1, X), (-1, Y)], -1));
    f.add_ge0(v(Y));
    f.add_ge0(lin(&[(-1, Y)], 4));
    assert_eq!(f.bounds(&v(X)), (Some(r(1)), Some(r(5))));
    assert_eq!(f.bounds(&v(X).sub(&v(Y))), (Some(r(1)), Some(r(1))));
}

#[test]
fn bounds_over_kept_symbols() {
    // 0 ≤ i ≤ n − 1, x = 4·i + 2: x between 2 and 4n − 2.
    let mut c = loop_body();
    c.add_eq0(lin(&[(1, X), (-4, I)], -2));
    let (lo, hi) = c.bounds_over(&v(X), &|s| s == N);
    assert_eq!(lo, vec![k(2)]);
    assert_eq!(hi, vec![lin(&[(4, N)], -2)]);
    assert_eq!(c.bounds_over(&v(Y), &|s| s == N), (vec![], vec![]));
}

#[test]
fn projection() {
    let mut c = loop_body();
    c.project_out(I);
    assert_eq!(c.facts(), &[lin(&[(1, N)], -1)]);
    let mut c = loop_body();
    c.forget(N);
    assert_eq!(c.facts(), &[v(I)]);
    // Projecting a symbol not mentioned changes nothing.
    let mut c = loop_body();
    c.project_out(X);
    assert_eq!(c, loop_body());
    // Through an equality: x = y + 1, y ≥ 0, y ≤ n.
    let mut d = Constraints::top();
    d.add_eq0(lin(&[(1, X), (-1, Y)], -1));
    d.add_ge0(v(Y));
    d.add_ge0(lin(&[(1, N), (-1, Y)], 0));
    d.project_out(Y);
    assert!(d.entails_ge0(&lin(&[(1, X)], -1)));
    assert!(d.entails_ge0(&lin(&[(1, N), (-1, X)], 1)));
    assert!(!d.entails_ge0(&lin(&[(1, N), (-1, X)], 0)));
    assert!(!d.mentions(Y));
    // Projection of an empty set finds it empty.
    let mut e = Constraints::top();
    e.add_ge0(lin(&[(1, X)], -1));
    e.add_ge0(lin(&[(1, Y), (-1, X)], 0));
    e.add_ge0(lin(&[(-1, Y)], 0));
    e.project_out(X);
    assert!(e.is_bottom());
    // A symbol bounded on one side only just disappears.
    let mut f = loop_body();
    f.add_ge0(lin(&[(1, X), (-1, I)], 0));
    f.project_out(X);
    assert_eq!(f, loop_body());
}

#[test]
fn assignment() {
    // i ≥ 0; i := i + 1 gives i − 1 ≥ 0.
    let mut c = Constraints::top();
    c.add_ge0(v(I));
    c.assign(I, &lin(&[(1, I)], 1));
    assert_eq!(c.facts(), &[lin(&[(1, I)], -1)]);
    // 0 ≤ i ≤ n − 1; i := i + 1 gives 1 ≤ i ≤ n.
    let mut c = loop_body();
    c.assign(I, &lin(&[(1, I)], 1));
    assert!(c.entails_ge0(&lin(&[(1, I)], -1)));
    assert!(c.entails_ge0(&lin(&[(1, N), (-1, I)], 0)));
    assert!(!c.entails_ge0(&lin(&[(1, N), (-1, I)], -1)));
    // i := 2i − n: old i = (i + n)/2.
    let mut c = loop_body();
    c.assign(I, &lin(&[(2, I), (-1, N)], 0));
    assert_eq!(c.bounds(&v(I).add(&v(N))).0, Some(r(0)));
    assert!(c.entails_ge0(&lin(&[(1, N), (-1, I)], -2)));
    // i := −i.
    let mut c = loop_body();
    c.assign(I, &v(I).neg());
    assert!(c.entails_ge0(&v(I).neg()));
    assert!(c.entails_ge0(&lin(&[(1, N), (1, I)], -1)));
    // Non-invertible: i := n − 1 forgets the old i.
    let mut c = loop_body();
    c.add_ge0(lin(&[(1, X), (-1, I)], 0));
    c.assign(I, &lin(&[(1, N)], -1));
    assert!(c.entails_eq0(&lin(&[(1, I), (-1, N)], 1)));
    assert!(c.entails_ge0(&v(I)));
    assert!(c.entails_ge0(&lin(&[(1, X)], 0)), "x ≥ old i ≥ 0 survives");
    assert!(!c.entails_ge0(&lin(&[(1, X), (-1, I)], 0)));
    // i := 5.
    let mut c = loop_body();
    c.assign(I, &k(5));
    assert_eq!(c.bounds(&v(I)), (Some(r(5)), Some(r(5))));
    assert!(c.entails_ge0(&lin(&[(1, N)], -1)));
    // x := x (identity) keeps everything; bottom stays bottom.
    let mut c = loop_body();
    c.assign(I, &v(I));
    assert_eq!(c, loop_body());
    let mut b = Constraints::bottom();
    b.assign(I, &k(1));
    assert!(b.is_bottom());
}

#[test]
fn join_and_meet() {
    let mut a = Constraints::top();
    a.add_eq0(v(X));
    let mut b = Constraints::top();
    b.add_eq0(lin(&[(1, X)], -1));
    let j = a.join(&b);
    assert_eq!(j.bounds(&v(X)), (Some(r(0)), Some(r(1))));
    assert!(!a.meet(&b).is_feasible());
    assert!(a.meet(&b).is_bottom());
    // Facts of both sides hold in the join.
    let c = loop_body();
    let mut d = loop_body();
    d.add_ge0(lin(&[(1, I)], -1));
    let j = c.join(&d);
    assert!(j.entails(&c) && c.entails(&j));
    // Relational facts survive when both sides keep them.
    let mut e = Constraints::top();
    e.add_eq0(lin(&[(1, X), (-1, Y)], 0));
    e.add_ge0(v(X));
    let mut f = Constraints::top();
    f.add_eq0(lin(&[(1, X), (-1, Y)], 0));
    f.add_ge0(lin(&[(1, X)], -5));
    let j = e.join(&f);
    assert!(j.entails_eq0(&lin(&[(1, X), (-1, Y)], 0)));
    assert!(j.entails_ge0(&v(Y)));
    assert!(!j.entails_ge0(&lin(&[(1, Y)], -1)));
    // Bottom is the identity.
    assert_eq!(c.join(&Constraints::bottom()), c);
    assert_eq!(Constraints::bottom().join(&c), c);
    let mut empty = Constraints::top();
    empty.add_ge0(lin(&[(1, X), (-1, Y)], -1));
    empty.add_ge0(lin(&[(1, Y), (-1, X)], 0));
    assert_eq!(empty.join(&c), c);
    assert_eq!(c.join(&empty), c);
    assert!(empty.join(&empty).is_bottom());
    assert!(c.join(&Constraints::top()).is_top());
    // Meet.
    let mut g = Constraints::top();
    g.add_ge0(lin(&[(-1, N)], 10));
    let m = c.meet(&g);
    assert_eq!(m.bounds(&v(I)), (Some(r(0)), Some(r(9))));
    assert!(c.meet(&Constraints::bottom()).is_bottom());
    assert!(Constraints::bottom().meet(&c).is_bottom());
}

#[test]
fn widening_reaches_the_loop_invariant() {
    // for (i = 0; i < n; i++) with n ≥ 1.
    let mut entry = Constraints::top();
    entry.add_ge0(lin(&[(1, N)], -1));
    entry.assign(I, &k(0));
    let guard = lin(&[(1, N), (-1, I)], -1); // i < n ⇔ n − i − 1 ≥ 0
    let post = |head: &Constraints| {
        let mut body = head.clone();
        body.add_ge0(guard.clone());
        body.assign(I, &lin(&[(1, I)], 1));
        head.join(&body)
    };
    // Widening straight away loses `n − i ≥ 0`, which the entry does
    // not state; one delayed (joined) iteration keeps it.
    let direct = entry.widen(&post(&entry));
    assert!(!direct.entails_ge0(&lin(&[(1, N), (-1, I)], 0)));
    let mut head = post(&entry);
    let mut steps = 0;
    loop {
        steps += 1;
        assert!(steps < 10, "widening must converge");
        let next = head.widen(&post(&head));
        if next.entails(&head) {
            break;
        }
        head = next;
    }
    assert!(head.entails_ge0(&v(I)));
    assert!(head.entails_ge0(&lin(&[(1, N), (-1, I)], 0)));
    let mut body = head.clone();
    body.add_ge0(guard);
    assert!(body.entails_ge0(&lin(&[(1, N), (-1, I)], -1)));
    assert!(body.entails_ge0(&lin(&[(1, N)], -1)));
    // Widening keeps only facts of the old set that the new one entails.
    let mut a = Constraints::top();
    a.add_eq0(v(I));
    let mut b = Constraints::top();
    b.add_ge0(v(I));
    b.add_ge0(lin(&[(-1, I)], 1));
    let w = a.widen(&b);
    assert_eq!(w.facts(), &[v(I)]);
    assert_eq!(Constraints::bottom().widen(&b), b);
    assert_eq!(a.widen(&Constraints::bottom()), a);
}

#[test]
fn tightening() {
    let mut c = Constraints::top();
    c.add_ge0(lin(&[(2, X)], -1));
    c.add_ge0(lin(&[(3, X), (6, Y)], 2));
    c.tighten_int();
    assert!(c.facts().contains(&lin(&[(1, X)], -1)));
    assert!(c.facts().contains(&lin(&[(1, X), (2, Y)], 0)));
    assert_eq!(c.facts().len(), 2);
    let mut b = Constraints::bottom();
    b.tighten_int();
    assert!(b.is_bottom());
}

#[test]
fn huge_numbers_are_dropped_not_panicking() {
    let mut c = Constraints::top();
    let big = Rational::int(i128::MAX / 4);
    c.add_ge0(
        LinExpr::term(X, big)
            .add(&LinExpr::term(Y, r(3)))
            .add(&k(1)),
    );
    assert!(c.is_top());
    c.add_ge0(
        LinExpr::term(X, Rational::new(1, i128::MAX / 3))
            .add(&LinExpr::term(Y, Rational::new(1, i128::MAX / 5))),
    );
    assert!(c.is_top());
    assert!(!c.entails_ge0(&LinExpr::term(X, big).add(&LinExpr::term(Y, r(3)))));
    assert_eq!(
        c.bounds(&LinExpr::term(X, big).add(&LinExpr::term(Y, r(3)))),
        (None, None)
    );
    let mut d = loop_body();
    d.assign(I, &LinExpr::term(I, big).add(&k(1)));
    // `n − (i − 1)/big − 1 ≥ 0` is too large to keep and is dropped.
    assert!(d.entails_ge0(&lin(&[(1, I)], -1)));
    assert!(!d.entails_ge0(&lin(&[(1, N)], -1)));
}

/// A deterministic linear congruential generator.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i128, hi: i128) -> i128 {
        lo + (self.next() as i128) % (hi - lo + 1)
    }
}

fn random_expr(g: &mut Lcg, nvars: u32, cmax: i128, kmax: i128) -> LinExpr {
    let mut e = k(g.range(-kmax, kmax));
    for s in 0..nvars {
        if g.range(0, 2) > 0 {
            e = e.add(&LinExpr::term(s, r(g.range(-cmax, cmax))));
        }
    }
    e
}

fn random_system(g: &mut Lcg, nvars: u32) -> Constraints {
    let mut c = Constraints::top();
    for _ in 0..g.range(1, 5) {
        let e = random_expr(g, nvars, 3, 6);
        if g.range(0, 5) == 0 {
            c.add_eq0(e);
        } else {
            c.add_ge0(e);
        }
    }
    c
}

fn holds(c: &Constraints, p: &[i128]) -> bool {
    !c.is_bottom()
        && c.facts()
            .iter()
            .all(|f| f.eval(|s| r(p[s as usize])) >= Rational::ZERO)
}

/// Every point of a small integer grid, for `n` symbols.
fn grid(n: u32) -> Vec<Vec<i128>> {
    let mut pts = vec![vec![]];
    for _ in 0..n {
        pts = pts
            .into_iter()
            .flat_map(|p| {
                (-5..=5).map(move |x| {
                    let mut q = p.clone();
                    q.push(x);
                    q
                })
            })
            .collect();
    }
    pts
}

#[test]
fn random_systems_are_never_answered_unsoundly() {
    let mut g = Lcg(0x5eed);
    let mut entailed = 0;
    let mut bounded = 0;
    for round in 0..400 {
        let nvars = g.range(1, 3) as u32;
        let c = random_system(&mut g, nvars);
        let other = random_system(&mut g, nvars);
        let e = random_expr(&mut g, nvars, 3, 6);
        let pts = grid(nvars);
        let sat: Vec<&Vec<i128>> = pts.iter().filter(|p| holds(&c, p)).collect();
        let at = |e: &LinExpr, p: &[i128]| e.eval(|s| r(p[s as usize]));
        let ctx = format!("round {round}: {c} ⊢ {e} ≥ 0");
        if !sat.is_empty() {
            assert!(c.is_feasible(), "{ctx}");
        }
        if c.entails_ge0(&e) {
            entailed += 1;
            for p in &sat {
                assert!(at(&e, p) >= Rational::ZERO, "{ctx} at {p:?}");
            }
        }
        let (lo, hi) = c.bounds(&e);
        if lo.is_some() || hi.is_some() {
            bounded += 1;
        }
        for p in &sat {
            let x = at(&e, p);
            assert!(lo.is_none_or(|l| l <= x), "{ctx}: lo {lo:?} at {p:?}");
            assert!(hi.is_none_or(|h| x <= h), "{ctx}: hi {hi:?} at {p:?}");
        }
        // Exactness where the grid can tell: a bound attained on the
        // grid is the bound.
        if let (Some(l), Some(h)) = (lo, hi) {
            let vals: Vec<Rational> = sat.iter().map(|p| at(&e, p)).collect();
            if vals.contains(&l) && vals.contains(&h) {
                assert!(c.entails_ge0(&e.sub(&LinExpr::constant(l))), "{ctx}");
                assert!(
                    !c.entails_ge0(&e.sub(&LinExpr::constant(l + Rational::new(1, 7)))),
                    "{ctx}"
                );
            }
        }
        // Projection and tightening keep every point.
        let mut proj = c.clone();
        proj.project_out(0);
        assert!(!proj.mentions(0));
        let mut tight = c.clone();
        tight.tighten_int();
        for p in &sat {
            assert!(holds(&proj, p), "{ctx}: projection {proj} loses {p:?}");
            assert!(holds(&tight, p), "{ctx}: tightening {tight} loses {p:?}");
        }
        // Assignment maps every point into the post-state.
        let s = g.range(0, nvars as i128 - 1) as Sym;
        let rhs = random_expr(&mut g, nvars, 2, 3);
        let mut post = c.clone();
        post.assign(s, &rhs);
        for p in &sat {
            let mut q = (*p).clone();
            let val = at(&rhs, p);
            if !val.is_integer() {
                continue;
            }
            q[s as usize] = val.num();
            assert!(
                holds(&post, &q),
                "{ctx}: {s} := {rhs} gives {post}, loses {q:?}"
            );
        }
        // Join and widening contain both sides; meet contains the
        // common points.
        let j = c.join(&other);
        let w = c.widen(&other);
        let m = c.meet(&other);
        for p in &pts {
            let (in_c, in_o) = (holds(&c, p), holds(&other, p));
            if in_c || in_o {
                assert!(holds(&j, p), "{ctx}: join {j} loses {p:?}");
            }
            if in_c || in_o {
                assert!(holds(&w, p), "{ctx}: widen {w} loses {p:?}");
            }
            if in_c && in_o {
                assert!(holds(&m, p), "{ctx}: meet {m} loses {p:?}");
            }
        }
        assert!(j.entails(&Constraints::top()));
    }
    assert!(entailed > 40, "only {entailed} entailed");
    assert!(bounded > 100, "only {bounded} bounded");
}

#[test]
fn larger_systems_stay_bounded() {
    // 15 symbols, 40 dense constraints: the caps keep this quick.
    let mut g = Lcg(42);
    for _ in 0..3 {
        let mut c = Constraints::top();
        for s in 0..15 {
            c.add_ge0(lin(&[(1, s)], 20));
            c.add_ge0(lin(&[(-1, s)], 20));
        }
        for _ in 0..40 {
            c.add_ge0(random_expr(&mut g, 15, 5, 30));
        }
        let e = random_expr(&mut g, 15, 2, 5);
        let _ = c.is_feasible();
        let _ = c.entails_ge0(&e);
        let (lo, hi) = c.bounds(&e);
        if let (Some(l), Some(h)) = (lo, hi) {
            assert!(l <= h);
        }
        let mut d = c.clone();
        d.project_out(3);
        assert!(!d.mentions(3));
    }
}
