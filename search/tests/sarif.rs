//! SARIF logs of `copper optimize` and `copper lint` keep to the SARIF
//! 2.1.0 specification: every object has only properties the specification
//! defines for it, with the types and ranges it requires (levels from its
//! enumeration, 1-based regions, declared rule ids, URI bases that the run
//! defines, percent-encoded URIs). The official JSON schema is not kept in
//! the repository; the properties below are the specification's for each
//! object copper writes.

mod common;

use common::{copper_in, root, Scratch};
use serde_json::{Map, Value};

/// The properties the specification allows on each kind of object (the
/// ones copper could plausibly write; anything else is a mistake).
fn allowed(kind: &str) -> &'static [&'static str] {
    match kind {
        "log" => &[
            "$schema",
            "version",
            "runs",
            "inlineExternalProperties",
            "properties",
        ],
        "run" => &[
            "tool",
            "invocations",
            "originalUriBaseIds",
            "artifacts",
            "results",
            "columnKind",
            "properties",
        ],
        "tool" => &["driver", "extensions", "properties"],
        "driver" => &[
            "name",
            "fullName",
            "version",
            "semanticVersion",
            "informationUri",
            "rules",
            "properties",
        ],
        "rule" => &[
            "id",
            "name",
            "shortDescription",
            "fullDescription",
            "help",
            "helpUri",
            "defaultConfiguration",
            "properties",
        ],
        "message" => &["text", "markdown", "id", "arguments", "properties"],
        "result" => &[
            "ruleId",
            "ruleIndex",
            "kind",
            "level",
            "message",
            "locations",
            "fixes",
            "properties",
        ],
        "location" => &["id", "physicalLocation", "message", "properties"],
        "physicalLocation" => &["artifactLocation", "region", "contextRegion", "properties"],
        "artifactLocation" => &["uri", "uriBaseId", "index", "description", "properties"],
        "region" => &[
            "startLine",
            "startColumn",
            "endLine",
            "endColumn",
            "charOffset",
            "charLength",
            "byteOffset",
            "byteLength",
            "snippet",
            "message",
            "properties",
        ],
        "fix" => &["description", "artifactChanges", "properties"],
        "artifactChange" => &["artifactLocation", "replacements", "properties"],
        "replacement" => &["deletedRegion", "insertedContent", "properties"],
        "artifactContent" => &["text", "binary", "rendered", "properties"],
        _ => &[],
    }
}

/// `v` as an object of `kind` with only allowed properties and the
/// `required` ones present.
fn object<'a>(v: &'a Value, kind: &str, required: &[&str]) -> &'a Map<String, Value> {
    let o = v
        .as_object()
        .unwrap_or_else(|| panic!("{kind} is not an object: {v}"));
    for k in o.keys() {
        assert!(
            allowed(kind).contains(&k.as_str()),
            "`{k}` is not a property of a SARIF {kind}: {v}"
        );
    }
    for r in required {
        assert!(o.contains_key(*r), "a SARIF {kind} needs `{r}`: {v}");
    }
    o
}

fn message(v: &Value) {
    let o = object(v, "message", &["text"]);
    assert!(o["text"].is_string());
}

fn positive(v: Option<&Value>) -> Option<u64> {
    v.map(|n| {
        let n = n.as_u64().unwrap_or_else(|| panic!("not an integer: {n}"));
        assert!(n >= 1, "lines and columns are 1-based");
        n
    })
}

fn region(v: &Value) {
    let o = object(v, "region", &["startLine"]);
    let start = positive(o.get("startLine"));
    positive(o.get("startColumn"));
    if let Some(end) = positive(o.get("endLine")) {
        assert!(Some(end) >= start, "a region ends before it starts: {v}");
    }
    positive(o.get("endColumn"));
}

/// A URI reference as RFC 3986 allows it: no spaces or controls, `%`
/// followed by two hex digits.
fn uri(s: &str) {
    let b = s.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        assert!(c > b' ' && c < 0x7f, "`{s}` is not a URI");
        if c == b'%' {
            assert!(
                b.get(i + 1..i + 3)
                    .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)),
                "`{s}` has a bad percent-escape"
            );
        }
    }
}

fn artifact(v: &Value, bases: &Map<String, Value>) {
    let o = object(v, "artifactLocation", &["uri"]);
    uri(o["uri"].as_str().expect("uri is a string"));
    if let Some(b) = o.get("uriBaseId") {
        let b = b.as_str().unwrap();
        assert!(bases.contains_key(b), "uriBaseId `{b}` is not defined");
    }
}

/// Checks one SARIF log; returns its result count.
fn check(text: &[u8]) -> usize {
    let log: Value = serde_json::from_slice(text).expect("SARIF is JSON");
    let o = object(&log, "log", &["version", "runs"]);
    assert_eq!(o["version"], "2.1.0");
    let runs = o["runs"].as_array().expect("runs is an array");
    assert_eq!(runs.len(), 1);
    let run = object(&runs[0], "run", &["tool", "results"]);
    let tool = object(&run["tool"], "tool", &["driver"]);
    let driver = object(&tool["driver"], "driver", &["name"]);
    assert_eq!(driver["name"], "copper");
    let mut ids = Vec::new();
    for r in driver["rules"].as_array().expect("rules is an array") {
        let rule = object(r, "rule", &["id"]);
        let id = rule["id"].as_str().unwrap().to_string();
        assert!(!ids.contains(&id), "rule `{id}` declared twice");
        ids.push(id);
        for m in ["shortDescription", "fullDescription", "help"] {
            if let Some(v) = rule.get(m) {
                message(v);
            }
        }
        if let Some(u) = rule.get("helpUri") {
            uri(u.as_str().unwrap());
        }
    }
    let empty = Map::new();
    let bases = run
        .get("originalUriBaseIds")
        .map_or(&empty, |b| b.as_object().expect("base ids are an object"));
    for b in bases.values() {
        let a = object(b, "artifactLocation", &["uri"]);
        let u = a["uri"].as_str().unwrap();
        uri(u);
        assert!(u.ends_with('/'), "a base URI ends with `/`: {u}");
    }
    let results = run["results"].as_array().expect("results is an array");
    for r in results {
        let res = object(r, "result", &["message"]);
        message(&res["message"]);
        let id = res["ruleId"].as_str().expect("every result names a rule");
        assert!(ids.iter().any(|d| d == id), "rule `{id}` is not declared");
        let level = res["level"].as_str().unwrap();
        assert!(["none", "note", "warning", "error"].contains(&level));
        for l in res["locations"].as_array().unwrap() {
            let loc = object(l, "location", &[]);
            let p = object(&loc["physicalLocation"], "physicalLocation", &[]);
            artifact(&p["artifactLocation"], bases);
            if let Some(reg) = p.get("region") {
                region(reg);
            }
        }
        for f in res
            .get("fixes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let fix = object(f, "fix", &["artifactChanges"]);
            if let Some(d) = fix.get("description") {
                message(d);
            }
            for c in fix["artifactChanges"].as_array().unwrap() {
                let change = object(c, "artifactChange", &["artifactLocation", "replacements"]);
                artifact(&change["artifactLocation"], bases);
                let reps = change["replacements"].as_array().unwrap();
                assert!(!reps.is_empty(), "a change replaces something");
                for rep in reps {
                    let rep = object(rep, "replacement", &["deletedRegion"]);
                    region(&rep["deletedRegion"]);
                    if let Some(c) = rep.get("insertedContent") {
                        object(c, "artifactContent", &[]);
                    }
                }
            }
        }
    }
    results.len()
}

#[test]
fn optimize_and_lint_logs_keep_to_the_specification() {
    let dir = root();
    // A kernel copper cannot read beside one it can.
    let scratch = Scratch::new();
    let bad = scratch.file(
        "bad.cu",
        b"__global__ void ok(float *a) { a[threadIdx.x] = 1; }\n__global__ void k(float *a) {\n    a[threadIdx.x] = ;\n}\n",
    );
    let bad = bad.to_str().unwrap();
    // Improved kernels, with fixes (the tiles of `matmul_naive` win by
    // degree, not at its parameter file's sizes).
    let o = copper_in(
        &dir,
        &[
            "optimize",
            "--asymptotic",
            "--format",
            "sarif",
            "testdata/addSub0.cu",
            "testdata/matmul_naive.cu",
            bad,
        ],
    );
    assert!(
        check(&o.stdout) >= 2,
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = copper_in(
        &dir,
        &[
            "lint",
            "--format",
            "sarif",
            "testdata/fan2.cu",
            "testdata/students",
            bad,
        ],
    );
    assert!(
        check(&o.stdout) >= 5,
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn the_check_rejects_what_the_specification_does_not_allow() {
    let good = br#"{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"copper","rules":[{"id":"copper/x","shortDescription":{"text":"t"}}]}},"results":[{"ruleId":"copper/x","level":"note","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a.cu"},"region":{"startLine":1,"startColumn":1}}}]}]}]}"#;
    assert_eq!(check(good), 1);
    let text = String::from_utf8_lossy(good).to_string();
    for bad in [
        text.replace(r#""level":"note""#, r#""level":"info""#),
        text.replace(r#""startLine":1"#, r#""startLine":0"#),
        text.replace(r#""ruleId":"copper/x""#, r#""ruleId":"copper/y""#),
        text.replace(r#""uri":"a.cu""#, r#""uri":"a b.cu""#),
        text.replace(r#""message":{"text":"m"}"#, r#""message":{"txt":"m"}"#),
    ] {
        let caught = std::panic::catch_unwind(|| check(bad.as_bytes())).is_err();
        assert!(caught, "not caught: {bad}");
    }
}
