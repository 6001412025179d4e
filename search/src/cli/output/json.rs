//! How the JSON outputs are written. Each command's output is a tree of
//! typed `serde` structures (its `schema` module); they are written
//! through a [`serde_json::Value`], whose objects keep their keys sorted,
//! so every object prints its keys in alphabetical order whatever the
//! order of the fields that produce it (the order copper has always
//! printed, nested engine types included).

use serde::Serialize;
use serde_json::Value;

/// `doc` as a JSON value (null if it cannot be one: only a map with
/// keys that are not strings could fail, and the schemas have none).
pub fn value<T: Serialize>(doc: &T) -> Value {
    serde_json::to_value(doc).unwrap_or(Value::Null)
}

/// `doc` as one line of JSON.
pub fn line<T: Serialize>(doc: &T) -> String {
    value(doc).to_string()
}

/// Prints `doc` as indented JSON on standard output.
pub fn print<T: Serialize>(doc: &T) {
    println!(
        "{}",
        serde_json::to_string_pretty(&value(doc)).unwrap_or_default()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Unsorted {
        zeta: u8,
        alpha: Option<u8>,
    }

    #[test]
    fn keys_are_written_in_alphabetical_order() {
        assert_eq!(
            line(&Unsorted {
                zeta: 1,
                alpha: None
            }),
            r#"{"alpha":null,"zeta":1}"#
        );
    }
}
