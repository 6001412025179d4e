//! How `copper lint` shows a bank-conflict witness ([`Witness`]): as a
//! note of its text output and in its JSON.

use copper::lint::count;
use copper::lint::witness::{Refutation, Witness};

use super::schema::{self, WitnessValue};
use crate::cli::output::json;

/// A witness value as the array's type writes it: integers without a
/// fraction.
fn witness_value(v: f64, integer: bool) -> WitnessValue {
    if integer {
        WitnessValue::Integer(v as i64)
    } else {
        WitnessValue::Float(v)
    }
}

/// What proves a degree impossible, in words.
fn proof_text(by: Refutation) -> &'static str {
    match by {
        Refutation::Bound => "the sound bound",
        Refutation::Milp => "MILP optimum over every input",
    }
}

/// What proves a degree impossible, in JSON.
fn proof_json(by: Refutation) -> &'static str {
    match by {
        Refutation::Bound => "bound",
        Refutation::Milp => "milp",
    }
}

/// A witness, or why there is none, as a note of the text output.
pub fn witness_text(w: &Witness) -> String {
    match w {
        Witness::Found {
            array,
            values,
            integer,
            simulated,
            largest,
        } => {
            let shown: Vec<String> = values
                .iter()
                .take(16)
                .map(|&v| json::line(&witness_value(v, *integer)))
                .collect();
            let more = if values.len() > 16 { ", …" } else { "" };
            let proof = largest.map_or(String::new(), |(m, by)| {
                format!(
                    "; degree {} is impossible: the largest collision is {m} ({})",
                    m + 1,
                    proof_text(by)
                )
            });
            format!(
                "witness: `{array}` = [{}{more}] (repeated) makes a warp take {} here (confirmed by simulation){proof}",
                shown.join(", "),
                count(*simulated, "transaction")
            )
        }
        Witness::Impossible {
            target,
            largest,
            by,
        } => format!(
            "no input makes a warp take {} here: degree {target} is impossible, the largest collision is {largest} ({})",
            count(*target, "transaction"),
            proof_text(*by)
        ),
        Witness::NotFound(why) => format!("no witness found: {why}"),
    }
}

/// A witness, or why there is none, in the JSON output.
pub fn witness_json(w: &Witness) -> schema::Witness {
    match w {
        Witness::Found {
            array,
            values,
            integer,
            simulated,
            largest,
        } => schema::Witness::Found {
            found: true,
            array: array.clone(),
            values: values.iter().map(|&v| witness_value(v, *integer)).collect(),
            simulated: *simulated,
            largest: largest.map(|(m, _)| m),
            proof: largest.map(|(_, by)| proof_json(by)),
        },
        Witness::Impossible {
            target,
            largest,
            by,
        } => schema::Witness::Impossible {
            found: false,
            impossible: *target,
            largest: *largest,
            proof: proof_json(*by),
        },
        Witness::NotFound(why) => schema::Witness::NotFound {
            found: false,
            why: why.clone(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn witness_counts_agree_in_number_and_integers_have_no_fraction() {
        let found = Witness::Found {
            array: "data".into(),
            values: vec![0.0, 8192.0],
            integer: true,
            simulated: 1,
            largest: None,
        };
        assert_eq!(
            witness_text(&found),
            "witness: `data` = [0, 8192] (repeated) makes a warp take 1 transaction here (confirmed by simulation)"
        );
        assert_eq!(
            json::value(&witness_json(&found))["values"],
            serde_json::json!([0, 8192])
        );
        let floats = Witness::Found {
            array: "x".into(),
            values: vec![0.5],
            integer: false,
            simulated: 2,
            largest: Some((2, Refutation::Bound)),
        };
        assert!(witness_text(&floats).contains("[0.5] (repeated) makes a warp take 2 transactions here (confirmed by simulation); degree 3 is impossible: the largest collision is 2 (the sound bound)"));
        let impossible = Witness::Impossible {
            target: 9,
            largest: 8,
            by: Refutation::Milp,
        };
        assert!(
            witness_text(&impossible).starts_with(
                "no input makes a warp take 9 transactions here: degree 9 is impossible, the largest collision is 8"
            )
        );
    }
}
