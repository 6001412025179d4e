//! Solving one witness MILP within a deterministic limit of
//! branch-and-bound nodes, the wall clock only as a safety net: the
//! same problem stops at the same node, with the same incumbent, on
//! every machine and under any load, unless the net fires first.

use std::collections::HashMap;
use std::time::Instant;

use good_lp::{Constraint, Expression, ProblemVariables, Variable};

use super::{Stop, Unsupported};

/// A solved (or cut) MILP: each variable's value, and what stopped it
/// before it proved its optimum (`None`: proved).
pub(super) struct Solved {
    /// The incumbent's values (`None`: cut before it found any).
    pub(super) values: Option<HashMap<Variable, f64>>,
    /// What cut the search, if anything did.
    pub(super) stop: Option<Stop>,
}

/// Maximizes `objective` over `pv` under `cons`, solving at most `nodes`
/// branch-and-bound nodes (the root relaxation not counted), stopping at
/// `deadline` at the latest.
#[cfg(not(feature = "cbc"))]
pub(super) fn maximize(
    pv: ProblemVariables,
    objective: Expression,
    cons: Vec<Constraint>,
    nodes: u64,
    deadline: Instant,
) -> Result<Solved, Unsupported> {
    use good_lp::SolverModel;
    use microlp::{SolveOptions, TerminationReason};

    let order: Vec<Variable> = pv.iter_variables_with_def().map(|(v, _)| v).collect();
    // The checks good_lp makes before it solves, which its inner problem
    // skips: integer bounds microlp cannot hold, or none at all.
    for (_, def) in pv.iter_variables_with_def() {
        if def.is_integer() {
            let (lo, hi) = (def.get_min().ceil(), def.get_max().floor());
            let fits = |x: f64| x.is_infinite() || (i32::MIN as f64..=i32::MAX as f64).contains(&x);
            if !fits(lo) || !fits(hi) {
                return Err(
                    "the MILP's integer bounds are beyond the solver's 32-bit range".into(),
                );
            }
            if lo > hi {
                return Err(infeasible());
            }
        }
    }
    let model = pv
        .maximise(objective)
        .using(good_lp::microlp)
        .with_all(cons);
    let seconds = deadline
        .saturating_duration_since(Instant::now())
        .as_secs_f64();
    let mut options = SolveOptions::default();
    options.node_limit = Some(nodes);
    options.time_limit = Some(std::time::Duration::from_secs_f64(seconds));
    let outcome = model.as_inner().solve_with(options).map_err(|e| match e {
        microlp::Error::Infeasible => infeasible(),
        e => format!("the MILP solver stopped: {e}"),
    })?;
    let stop = match outcome.termination_reason() {
        TerminationReason::ProvenOptimal => None,
        TerminationReason::NodeLimit => Some(Stop::Nodes(nodes)),
        _ => Some(Stop::WallClock),
    };
    let values = outcome.solution().map(|s| {
        order
            .iter()
            .zip(s.iter())
            .map(|(&v, (_, x))| (v, x))
            .collect()
    });
    Ok(Solved { values, stop })
}

/// [`maximize`] with COIN-OR CBC, its node limit the same.
#[cfg(feature = "cbc")]
pub(super) fn maximize(
    pv: ProblemVariables,
    objective: Expression,
    cons: Vec<Constraint>,
    nodes: u64,
    deadline: Instant,
) -> Result<Solved, Unsupported> {
    use good_lp::{Solution, SolutionStatus, SolverModel, WithTimeLimit};

    let order: Vec<Variable> = pv.iter_variables_with_def().map(|(v, _)| v).collect();
    let seconds = deadline
        .saturating_duration_since(Instant::now())
        .as_secs_f64();
    let mut m = pv.maximise(objective).using(good_lp::coin_cbc);
    m.set_parameter("log", "0");
    m.set_parameter("maxNodes", &nodes.to_string());
    let solved = m
        .with_all(cons)
        .with_time_limit(seconds)
        .solve()
        .map_err(|e| match e {
            good_lp::ResolutionError::Infeasible => infeasible(),
            e => format!("the MILP solver stopped: {e}"),
        })?;
    let stop = match solved.status() {
        SolutionStatus::Optimal => None,
        _ if Instant::now() >= deadline => Some(Stop::WallClock),
        _ => Some(Stop::Nodes(nodes)),
    };
    let values = Some(order.iter().map(|&v| (v, solved.value(v))).collect());
    Ok(Solved { values, stop })
}

/// Why an infeasible MILP has no maximum.
fn infeasible() -> Unsupported {
    "no lane can make this access (the MILP is infeasible)".to_string()
}
