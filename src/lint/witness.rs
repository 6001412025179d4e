//! Bank-conflict witnesses (Horga et al. §4): for a shared access whose index
//! comes from input data, concrete input values that make one warp reach a
//! number of transactions, confirmed by the simulator — or a proof that
//! no input reaches it.
//!
//! Two steps. First a fast constructive try: the degree-`n` worst case
//! needs `n` distinct words in one bank, the elements `j·stride`
//! (`stride` = one row of banks in elements); the input array the index
//! is loaded from is filled with those values. When that does not reach
//! `n`, the decision procedure of [`super::milp`]: the largest degree over
//! all inputs as a MILP. Its optimum below `n` proves `n` impossible; a
//! solution reaching `n` gives each lane's input values, which fill the
//! array and are confirmed by simulation. Either way an array is filled
//! with values repeated with the period of a warp's lanes (runs of `r`
//! equal values for `r` = 1, 2, 4, … in case lanes read it with a
//! stride), so that every warp reading consecutive elements sees them.
//!
//! The search is bounded by deterministic work limits ([`Limits`]: the
//! candidate inputs simulated, the MILP's branch-and-bound nodes), the
//! same on every machine; the wall clock is only a safety net, and a
//! result it cut says so.

use std::time::Instant;

use crate::cost::Hardware;
use crate::ir::{visit_stmts, Expr, ExprKind, Kernel, SiteId, Stmt};
use crate::sim::params::{InitKind, LaunchSpec};
use crate::sim::{inputs_from_spec, simulate_owned, InputError, SimOptions};

use super::index::index_of;
use super::milp;

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
        /// The largest degree any input reaches, when it is proved, and
        /// what proves it.
        largest: Option<(u64, Refutation)>,
    },
    /// No input reaches `target`.
    Impossible {
        /// The degree asked for.
        target: u64,
        /// The largest degree any input can reach.
        largest: u64,
        /// What proves it.
        by: Refutation,
    },
    /// No witness found, and why.
    NotFound(String),
}

/// What proves a degree impossible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refutation {
    /// The analysis bound (`crate::absint::memory::conflicts`).
    Bound,
    /// The MILP's optimum over every input.
    Milp,
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

/// Why a filled launch was not simulated.
#[derive(Debug, thiserror::Error)]
enum FillError {
    /// The launch has no array of that name.
    #[error("the parameter file gives no array `{0}`")]
    NoArray(String),
    /// The launch's inputs cannot be made.
    #[error(transparent)]
    Inputs(#[from] InputError),
    /// The simulation failed.
    #[error("{0}")]
    Simulation(String),
}

/// The launch `spec` with input array `array` filled by `values` repeated
/// in runs of `run`, simulated: the degree one warp reached at `site`.
fn simulate_fill(
    kernel: &Kernel,
    site: SiteId,
    spec: &LaunchSpec,
    array: &str,
    values: &[f64],
    opts: &SimOptions,
) -> Result<u64, FillError> {
    let mut spec = spec.clone();
    let a = spec
        .arrays
        .get_mut(array)
        .ok_or_else(|| FillError::NoArray(array.to_string()))?;
    a.init = InitKind::Values;
    a.values = values.to_vec();
    let inputs = inputs_from_spec(kernel, &spec)?;
    let r = simulate_owned(kernel, inputs, opts).map_err(|e| FillError::Simulation(e.message))?;
    Ok(r.sites.get(site).map_or(0, |s| s.max_transactions))
}

/// `values` with each repeated `run` times.
fn in_runs(values: &[f64], run: usize) -> Vec<f64> {
    values
        .iter()
        .flat_map(|&v| std::iter::repeat_n(v, run))
        .collect()
}

/// The run lengths tried: lanes may read the input with a stride.
const RUNS: [usize; 6] = [1, 2, 4, 8, 16, 32];

/// Candidate inputs (filled launches simulated) one search may try by
/// default: the constructive try's and those built from the MILP's
/// solution together.
pub const CANDIDATES: usize = 24;

/// The deterministic work limits of one witness search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Branch-and-bound nodes each MILP may solve ([`milp::NODES`]).
    pub nodes: u64,
    /// Candidate inputs simulated, each launch at most
    /// [`super::races::STEPS`] instructions ([`CANDIDATES`]).
    pub candidates: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            nodes: milp::NODES,
            candidates: CANDIDATES,
        }
    }
}

/// What a search cut by the wall-clock safety net says.
const WALL_CLOCK: &str = "the search stopped at the wall-clock limit (raise it with --budget); results may differ on a faster machine";

/// The candidates a search simulates, counted against its limit.
struct Tries<'a> {
    kernel: &'a Kernel,
    site: SiteId,
    spec: &'a LaunchSpec,
    opts: SimOptions,
    left: usize,
    limit: usize,
    deadline: Instant,
}

impl Tries<'_> {
    /// The degree one warp reaches at the site with input `array` filled
    /// by `values`; `Err(why)` when a limit stops the search before it.
    fn fill(&mut self, array: &str, values: &[f64]) -> Result<Result<u64, FillError>, String> {
        if self.left == 0 {
            return Err(format!(
                "the search stopped at its work limit of {} candidate inputs (the same on every machine)",
                self.limit
            ));
        }
        if Instant::now() >= self.deadline {
            return Err(WALL_CLOCK.into());
        }
        self.left -= 1;
        let r = simulate_fill(self.kernel, self.site, self.spec, array, values, &self.opts);
        if r.is_err() && Instant::now() >= self.deadline {
            return Err(WALL_CLOCK.into());
        }
        Ok(r)
    }
}

/// Searches inputs that make one warp reach `target` (default: `bound`)
/// transactions at shared site `site`, starting from the launch `spec`:
/// the constructive try, then the MILP, within `limits`, stopping at the
/// safety net `deadline` at the latest.
#[allow(clippy::too_many_arguments)]
pub fn search(
    kernel: &Kernel,
    site: SiteId,
    bound: u64,
    target: Option<u64>,
    spec: &LaunchSpec,
    hw: &Hardware,
    limits: Limits,
    deadline: Instant,
) -> Witness {
    let n = target.unwrap_or(bound);
    if n > bound {
        return Witness::Impossible {
            target: n,
            largest: bound,
            by: Refutation::Bound,
        };
    }
    let mut tries = Tries {
        kernel,
        site,
        spec,
        opts: SimOptions {
            hw: *hw,
            max_steps: Some(super::races::STEPS),
            deadline: Some(deadline),
            ..SimOptions::default()
        },
        left: limits.candidates,
        limit: limits.candidates,
        deadline,
    };
    // A degree above the warp's lanes needs no proof.
    let lanes = spec.block.iter().product::<u64>().min(hw.warp_size as u64);
    let proof = |m: u64, by: Refutation| (m < lanes).then_some((m, by));
    let constructive = constructive(kernel, site, n, hw, &mut tries);
    if let Witness::Found {
        array,
        values,
        integer,
        simulated,
        ..
    } = constructive
    {
        // Reaching the sound bound shows it is the largest degree.
        return Witness::Found {
            array,
            values,
            integer,
            simulated,
            largest: (simulated >= bound)
                .then(|| proof(bound, Refutation::Bound))
                .flatten(),
        };
    }
    let best = match milp::maximum(kernel, site, bound, spec, hw, limits.nodes, deadline) {
        Ok(m) => m,
        Err(why) => return not_found(constructive, &why),
    };
    if best.proved && best.degree < n {
        // Below the bound the user did not ask for a degree: show the
        // largest one, with its inputs (when inputs decide it).
        if target.is_some() || best.degree == 0 || best.loads.is_empty() {
            return Witness::Impossible {
                target: n,
                largest: best.degree,
                by: Refutation::Milp,
            };
        }
    } else if best.degree < n {
        let stop = best.stop.unwrap_or(milp::Stop::WallClock).describe();
        let found = match best.degree {
            0 => "no solution".to_string(),
            d => format!("at most {d}"),
        };
        return not_found(constructive, &format!("the MILP found {found} {stop}"));
    }
    let goal = n.min(best.degree);
    let largest = if best.proved {
        proof(best.degree, Refutation::Milp)
    } else if best.degree >= bound {
        proof(bound, Refutation::Bound)
    } else {
        None
    };
    let lanes = best.loads.first().map_or(0, |(_, v)| v.len());
    for (array, values) in &best.loads {
        let name = &kernel.arrays[*array].name;
        let mut values: Vec<f64> = values.iter().map(|&v| v as f64).collect();
        values.resize(lanes, values.last().copied().unwrap_or(0.0));
        for run in RUNS {
            let filled = in_runs(&values, run);
            let tried = match tries.fill(name, &filled) {
                Ok(tried) => tried,
                Err(why) => {
                    return not_found(
                        constructive,
                        &format!("the MILP reaches {}, but {why}", best.degree),
                    )
                }
            };
            match tried {
                Ok(simulated) if simulated >= goal => {
                    return Witness::Found {
                        array: name.clone(),
                        values: filled,
                        integer: !kernel.arrays[*array].elem.is_float(),
                        simulated,
                        largest,
                    }
                }
                _ => {}
            }
        }
    }
    not_found(
        constructive,
        &format!(
            "the MILP reaches {} {}, but no input built from its solution did in simulation",
            best.degree,
            if best.proved { "at most" } else { "at least" }
        ),
    )
}

/// The constructive try's failure, with what the MILP adds.
fn not_found(constructive: Witness, why: &str) -> Witness {
    match constructive {
        Witness::NotFound(first) => Witness::NotFound(format!("{first}; {why}")),
        other => other,
    }
}

/// The constructive try: an input array filled with `n` words of one bank.
fn constructive(
    kernel: &Kernel,
    site: SiteId,
    n: u64,
    hw: &Hardware,
    tries: &mut Tries,
) -> Witness {
    let Some(src) = index_of(kernel, site).and_then(|e| source_in(kernel, e, 4)) else {
        return Witness::NotFound("the index is not loaded from an input array".into());
    };
    let shared = &kernel.arrays[kernel.sites[site].array];
    let elem = shared.layout.size.max(1) as u64;
    let stride = (hw.banks as u64 * hw.bank_bytes as u64 / elem).max(1);
    let name = kernel.arrays[src].name.clone();
    let words: Vec<f64> = (0..n).map(|j| (j * stride) as f64).collect();
    for run in RUNS {
        let values = in_runs(&words, run);
        let tried = match tries.fill(&name, &values) {
            Ok(tried) => tried,
            Err(why) => return Witness::NotFound(why),
        };
        match tried {
            Ok(simulated) if simulated >= n => {
                return Witness::Found {
                    array: name,
                    values,
                    integer: !kernel.arrays[src].elem.is_float(),
                    simulated,
                    largest: None,
                }
            }
            Err(e @ FillError::NoArray(_)) => return Witness::NotFound(e.to_string()),
            _ => {}
        }
    }
    Witness::NotFound(format!(
        "no input of the form `{name}` = [0, {stride}, …] reaches {n}"
    ))
}
