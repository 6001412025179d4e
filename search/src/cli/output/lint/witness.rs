//! How `copper lint` shows a bank-conflict witness ([`Witness`]): as a
//! note of its text output and in its JSON.

use copper::lint::count;
use copper::lint::witness::{Refutation, Witness};
use serde_json::{json, Value};

/// A witness value as the array's type writes it: integers without a
/// fraction.
fn witness_value(v: f64, integer: bool) -> Value {
    if integer {
        json!(v as i64)
    } else {
        json!(v)
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
                .map(|&v| witness_value(v, *integer).to_string())
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
pub fn witness_json(w: &Witness) -> Value {
    match w {
        Witness::Found {
            array,
            values,
            integer,
            simulated,
            largest,
        } => {
            let values: Vec<Value> = values.iter().map(|&v| witness_value(v, *integer)).collect();
            json!({
                "found": true,
                "array": array,
                "values": values,
                "simulated": simulated,
                "largest": largest.map(|(m, _)| m),
                "proof": largest.map(|(_, by)| proof_json(by)),
            })
        }
        Witness::Impossible {
            target,
            largest,
            by,
        } => json!({
            "found": false,
            "impossible": target,
            "largest": largest,
            "proof": proof_json(*by),
        }),
        Witness::NotFound(why) => json!({ "found": false, "why": why }),
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
        assert_eq!(witness_json(&found)["values"], json!([0, 8192]));
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
