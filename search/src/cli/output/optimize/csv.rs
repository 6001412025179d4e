//! `--report r.csv`: one row per kernel for a spreadsheet. Fields follow
//! RFC 4180 (quoted when they hold a comma, a quote or a line break); a
//! field a spreadsheet would read as a formula (`=`, `+`, `-`, `@` first,
//! as a student's file name may be) starts with `'`.

use serde_json::Value;

/// The columns, in order, and the JSON report field each comes from.
const COLUMNS: [(&str, &str); 16] = [
    ("file", "file"),
    ("kernel", "kernel"),
    ("line", "line"),
    ("status", "status"),
    ("metric", "metric"),
    ("bound_before", "bound_before"),
    ("bound_after", "bound_after"),
    ("value_before", "value_before"),
    ("value_after", "value_after"),
    ("improvement", "improvement"),
    ("simulated_before", "simulated_before"),
    ("simulated_after", "simulated_after"),
    ("simulated_improvement", "simulated_improvement"),
    ("sizes", "sizes_text"),
    ("transforms", "transforms_text"),
    ("seconds", "seconds"),
];

/// The CSV text of the report's kernel objects (as `--report` writes
/// them as JSON lines), with a header row.
pub fn rows(objects: &[Value]) -> String {
    let mut out = String::new();
    let header: Vec<&str> = COLUMNS.iter().map(|(name, _)| *name).collect();
    out.push_str(&header.join(","));
    out.push_str("\r\n");
    for o in objects {
        let cells: Vec<String> = COLUMNS
            .iter()
            .map(|(_, key)| field(&cell(o.get(*key))))
            .collect();
        out.push_str(&cells.join(","));
        out.push_str("\r\n");
    }
    out
}

/// A JSON value as the text of one cell (empty for null or missing).
fn cell(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// `text` as one CSV field.
fn field(text: &str) -> String {
    let text = if text.starts_with(['=', '+', '-', '@']) {
        format!("'{text}")
    } else {
        text.to_string()
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_are_quoted_and_formulas_defused() {
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("=HYPERLINK(1)"), "'=HYPERLINK(1)");
        assert_eq!(field("plain"), "plain");
        let text = rows(&[json!({ "file": "a.cu", "kernel": "k", "line": 3, "improvement": 2.5 })]);
        let lines: Vec<&str> = text.split("\r\n").collect();
        assert!(lines[0].starts_with("file,kernel,line,status,metric,"));
        assert_eq!(lines[1], "a.cu,k,3,,,,,,,2.5,,,,,,");
    }
}
