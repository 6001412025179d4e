//! The report's simulated costs ([`Simulated`], the driver's): beside the
//! bounds, a number measured under the same cost model.

use copper::cost::Metric;
use copper_search::driver::optimize::Simulated;
use serde_json::{json, Value};

use super::numbers::ratio;

/// The report's fields for `simulated` with the ranking metric at index
/// `rank`: an object with every metric, and the ranking metric's before,
/// after and ratio on their own.
pub fn fields(
    simulated: &Result<Simulated, String>,
    metrics: &[Metric],
    rank: usize,
) -> [(&'static str, Value); 4] {
    match simulated {
        Ok(x) => {
            let per_metric = |v: &[f64]| -> Value {
                metrics
                    .iter()
                    .zip(v)
                    .map(|(m, c)| (m.name.clone(), json!(c)))
                    .collect::<serde_json::Map<_, _>>()
                    .into()
            };
            let (b, a) = (x.before.get(rank).copied(), x.after.get(rank).copied());
            [
                (
                    "simulated",
                    json!({ "launch": x.launch, "before": per_metric(&x.before), "after": per_metric(&x.after) }),
                ),
                ("simulated_before", json!(b)),
                ("simulated_after", json!(a)),
                ("simulated_improvement", json!(ratio(b, a))),
            ]
        }
        Err(why) => [
            ("simulated", json!({ "error": why })),
            ("simulated_before", Value::Null),
            ("simulated_after", Value::Null),
            ("simulated_improvement", Value::Null),
        ],
    }
}
