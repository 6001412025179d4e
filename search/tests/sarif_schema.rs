//! The SARIF logs of `copper lint` and `copper optimize`, validated by a
//! JSON Schema validator against `sarif-2.1.0-subset.schema.json`: the
//! part of the SARIF 2.1.0 schema that copper writes, with the
//! specification's types and ranges (`tests/sarif.rs` checks the
//! constraints a schema cannot state, such as rule ids that the driver
//! declares).

mod common;

use common::{copper_in, root};
use serde_json::Value;

/// The validator of the schema kept beside this test.
fn validator() -> jsonschema::Validator {
    let text = include_str!("sarif-2.1.0-subset.schema.json");
    let schema: Value = serde_json::from_str(text).expect("the schema is JSON");
    jsonschema::validator_for(&schema).expect("the schema is a valid JSON Schema")
}

/// Why `log` does not validate, one line per error (empty when it does).
fn errors(v: &jsonschema::Validator, log: &Value) -> Vec<String> {
    v.iter_errors(log)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// The log `copper ARGS` prints, parsed.
fn log_of(args: &[&str]) -> Value {
    let o = copper_in(&root(), args);
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "copper {args:?} printed no JSON ({e}): {}",
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// The first result of a log.
fn first_result(log: &mut Value) -> &mut Value {
    &mut log["runs"][0]["results"][0]
}

#[test]
fn lint_and_optimize_logs_validate_against_the_schema() {
    let v = validator();
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.cu");
    std::fs::write(
        &bad,
        "__global__ void ok(float *a) { a[threadIdx.x] = 1; }\n__global__ void k(float *a) {\n    a[threadIdx.x] = ;\n}\n",
    )
    .unwrap();
    let bad = bad.to_str().unwrap();
    let lint = log_of(&[
        "lint",
        "--format",
        "sarif",
        "testdata/students",
        "testdata/bank_witness.cu",
        bad,
    ]);
    assert_eq!(errors(&v, &lint), Vec::<String>::new());
    let results = lint["runs"][0]["results"].as_array().unwrap();
    assert!(results.len() >= 5, "{lint}");
    assert!(results.iter().any(|r| r["level"] == "error"), "{lint}");
    let optimize = log_of(&["optimize", "--format", "sarif", "testdata/addSub0.cu", bad]);
    assert_eq!(errors(&v, &optimize), Vec::<String>::new());
    assert!(
        optimize["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r.get("fixes").is_some()),
        "{optimize}"
    );
}

#[test]
fn the_schema_rejects_a_dropped_or_mistyped_property() {
    let v = validator();
    let log = log_of(&[
        "lint",
        "--format",
        "sarif",
        "testdata/students/transpose_naive.cu",
    ]);
    assert_eq!(errors(&v, &log), Vec::<String>::new());
    let region = "/locations/0/physicalLocation/region";
    assert!(
        log.pointer(&format!("/runs/0/results/0{region}")).is_some(),
        "{log}"
    );
    // Each: what is wrong, where in the first result, and the value put
    // there (none: the property removed).
    let mutations = [
        ("ruleId dropped", "/ruleId".to_string(), None),
        (
            "startLine a string",
            format!("{region}/startLine"),
            Some(Value::from("3")),
        ),
        (
            "startColumn 0",
            format!("{region}/startColumn"),
            Some(Value::from(0)),
        ),
        (
            "level outside the enumeration",
            "/level".into(),
            Some(Value::from("info")),
        ),
        (
            "message without text",
            "/message".into(),
            Some(serde_json::json!({ "txt": "m" })),
        ),
        (
            "uri a number",
            "/locations/0/physicalLocation/artifactLocation/uri".into(),
            Some(Value::from(7)),
        ),
    ];
    for (what, at, value) in mutations {
        let mut bad = log.clone();
        let result = first_result(&mut bad);
        let (parent, key) = at.rsplit_once('/').unwrap();
        let parent = result.pointer_mut(parent).unwrap().as_object_mut().unwrap();
        assert!(parent.contains_key(key), "{what}: no {at}");
        match value {
            Some(v) => parent.insert(key.to_string(), v),
            None => parent.remove(key),
        };
        assert!(!errors(&v, &bad).is_empty(), "not rejected: {what}");
    }
    let mut bad = log.clone();
    bad["version"] = Value::from("2.0.0");
    assert!(!errors(&v, &bad).is_empty(), "not rejected: version 2.0.0");
}
