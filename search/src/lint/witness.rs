//! Bank-conflict witnesses (`003_…` §4): for a shared access whose index
//! comes from input data, concrete input values that make one warp reach a
//! number of transactions, confirmed by the simulator — or a proof that
//! no input reaches it (the analysis bound is below it).
//!
//! The search is constructive: the degree-`n` worst case needs `n`
//! distinct words in one bank, the elements `j·stride` (`stride` = one row
//! of banks in elements). The input array the index is loaded from is
//! filled with those values repeated with period `n` (runs of `r` equal
//! values for `r` = 1, 2, 4, … in case lanes read it with a stride), so
//! that every warp reading consecutive elements sees them all; each
//! candidate is simulated and kept when the site reaches `n`.

use std::time::Instant;

use copper::cost::Hardware;
use copper::ir::sites::SitePaths;
use copper::ir::{visit_stmts, Expr, ExprKind, Kernel, SiteId, Stmt};
use copper::sim::params::{InitKind, LaunchSpec};
use copper::sim::{inputs_from_spec, simulate_owned, SimOptions};

/// The result of a witness search at one site.
#[derive(Clone, Debug, PartialEq)]
pub enum Witness {
    /// Input values that reach the degree.
    Found {
        /// The input array filled.
        array: String,
        /// Its values (repeated to its length).
        values: Vec<f64>,
        /// Whether the array holds integers (its values are whole numbers
        /// and print as such).
        integer: bool,
        /// The degree the simulator saw at the site.
        simulated: u64,
    },
    /// No input reaches `target`: the sound bound is lower.
    Impossible {
        /// The degree asked for.
        target: u64,
        /// The analysis bound.
        bound: u64,
    },
    /// No witness found, and why.
    NotFound(String),
}

/// The index of the load at `site` inside `e`.
fn load_index(e: &Expr, site: SiteId) -> Option<&Expr> {
    match &e.kind {
        ExprKind::Load(a) if a.site == site => Some(&a.index),
        ExprKind::Load(a) => load_index(&a.index, site),
        ExprKind::Unary(_, x) | ExprKind::Convert { value: x, .. } => load_index(x, site),
        ExprKind::Binary(_, a, b) | ExprKind::And(a, b) | ExprKind::Or(a, b) => {
            load_index(a, site).or_else(|| load_index(b, site))
        }
        ExprKind::Select(c, a, b) => load_index(c, site)
            .or_else(|| load_index(a, site))
            .or_else(|| load_index(b, site)),
        ExprKind::Call(_, args) => args.iter().find_map(|x| load_index(x, site)),
        ExprKind::Const(_) | ExprKind::Var(_) | ExprKind::Builtin(_) => None,
    }
}

/// The index expression of access site `site`.
pub fn index_of(kernel: &Kernel, site: SiteId) -> Option<&Expr> {
    index_in(&SitePaths::build(&kernel.body), kernel, site)
}

/// The index expression of access site `site`, found through `sites`
/// (built once for a kernel whose sites are all asked about).
pub fn index_in<'k>(sites: &SitePaths, kernel: &'k Kernel, site: SiteId) -> Option<&'k Expr> {
    let exprs: Vec<&Expr> = match sites.stmt(&kernel.body, site)? {
        Stmt::Store { access, .. } | Stmt::Atomic { access, .. } if access.site == site => {
            return Some(access.index.as_ref());
        }
        Stmt::Store { access, value, .. } => vec![&access.index, value],
        Stmt::Atomic {
            access,
            value,
            compare,
            ..
        } => [Some(&*access.index), Some(value), compare.as_ref()]
            .into_iter()
            .flatten()
            .collect(),
        Stmt::Assign { value, .. } => vec![value],
        Stmt::If { cond, .. } => vec![cond],
        Stmt::Loop { cond: Some(c), .. } => vec![c],
        _ => vec![],
    };
    exprs.into_iter().find_map(|e| load_index(e, site))
}

/// The global input array that `e` loads from, directly or through the
/// values of the local variables it reads (a few levels deep).
fn source_in(kernel: &Kernel, e: &Expr, depth: usize) -> Option<usize> {
    let mut found = None;
    e.visit(&mut |x| match &x.kind {
        ExprKind::Load(b) if found.is_none() && kernel.arrays[b.array].param.is_some() => {
            found = Some(b.array)
        }
        ExprKind::Var(v) if found.is_none() && depth > 0 => {
            visit_stmts(&kernel.body, &mut |s| {
                if let Stmt::Assign { var, value, .. } = s {
                    if var == v && found.is_none() {
                        found = source_in(kernel, value, depth - 1);
                    }
                }
            });
        }
        _ => {}
    });
    found
}

/// Searches inputs that make one warp reach `target` (default: `bound`)
/// transactions at shared site `site`, starting from the launch `spec`.
pub fn search(
    kernel: &Kernel,
    site: SiteId,
    bound: u64,
    target: Option<u64>,
    spec: &LaunchSpec,
    hw: &Hardware,
    deadline: Instant,
) -> Witness {
    let n = target.unwrap_or(bound);
    if n > bound {
        return Witness::Impossible { target: n, bound };
    }
    let Some(src) = index_of(kernel, site).and_then(|e| source_in(kernel, e, 4)) else {
        return Witness::NotFound("the index is not loaded from an input array".into());
    };
    let shared = &kernel.arrays[kernel.sites[site].array];
    let elem = shared.layout.size.max(1) as u64;
    let stride = (hw.banks as u64 * hw.bank_bytes as u64 / elem).max(1);
    let name = kernel.arrays[src].name.clone();
    let opts = SimOptions {
        hw: *hw,
        deadline: Some(deadline),
        ..SimOptions::default()
    };
    for run in [1u64, 2, 4, 8, 16, 32] {
        if Instant::now() > deadline {
            return Witness::NotFound(
                "the search ran past the time budget (raise it with --budget)".into(),
            );
        }
        let values: Vec<f64> = (0..n * run).map(|p| ((p / run) * stride) as f64).collect();
        let mut spec = spec.clone();
        let Some(a) = spec.arrays.get_mut(&name) else {
            return Witness::NotFound(format!("the parameter file gives no array `{name}`"));
        };
        a.init = InitKind::Values;
        a.values = values.clone();
        let Ok(inputs) = inputs_from_spec(kernel, &spec) else {
            continue;
        };
        let Ok(r) = simulate_owned(kernel, inputs, &opts) else {
            continue;
        };
        let simulated = r.sites.get(site).map_or(0, |s| s.max_transactions);
        if simulated >= n {
            return Witness::Found {
                array: name,
                values,
                integer: !kernel.arrays[src].elem.is_float(),
                simulated,
            };
        }
    }
    Witness::NotFound(format!(
        "no input of the form `{name}` = [0, {stride}, …] reaches {n}; the bound may not be reachable"
    ))
}
