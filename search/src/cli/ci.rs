//! Output for continuous integration, shared by `copper optimize` and
//! `copper lint`: GitHub Actions workflow commands and SARIF 2.1.0 logs.

use serde_json::{json, Value};

/// GitHub workflow-command escaping of a message.
pub fn gh_escape(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// … and of a property value.
pub fn gh_property(s: &str) -> String {
    gh_escape(s).replace(':', "%3A").replace(',', "%2C")
}

/// A SARIF 2.1.0 log of one copper run with these rules and results.
pub fn sarif_log(rules: Vec<Value>, results: Vec<Value>) -> Value {
    json!({
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [{
            "tool": { "driver": {
                "name": "copper",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules
            }},
            "results": results
        }]
    })
}
