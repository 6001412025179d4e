//! The report's simulated costs ([`Simulated`], the driver's): beside the
//! bounds, a number measured under the same cost model.

use copper::cost::Metric;
use copper_search::driver::optimize::Simulated;
use std::collections::BTreeMap;

use super::numbers::ratio;
use super::schema::{SimulatedCosts, SimulatedFields};

/// The report's fields for `simulated` with the ranking metric at index
/// `rank`: every metric's costs, and the ranking metric's before, after
/// and ratio on their own.
pub fn fields(
    simulated: &Result<Simulated, String>,
    metrics: &[Metric],
    rank: usize,
) -> SimulatedFields {
    match simulated {
        Ok(x) => {
            let per_metric = |v: &[f64]| -> BTreeMap<String, f64> {
                metrics
                    .iter()
                    .zip(v)
                    .map(|(m, c)| (m.name.clone(), *c))
                    .collect()
            };
            let (b, a) = (x.before.get(rank).copied(), x.after.get(rank).copied());
            SimulatedFields {
                simulated: SimulatedCosts::Costs {
                    launch: x.launch.clone(),
                    before: per_metric(&x.before),
                    after: per_metric(&x.after),
                },
                simulated_before: b,
                simulated_after: a,
                simulated_improvement: ratio(b, a),
            }
        }
        Err(why) => SimulatedFields {
            simulated: SimulatedCosts::Error { error: why.clone() },
            simulated_before: None,
            simulated_after: None,
            simulated_improvement: None,
        },
    }
}
