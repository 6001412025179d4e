//! Structs whose fields have different scalar types, and device functions
//! returning structs, through `copper optimize`: every kernel of the
//! testdata files that use them is searched without an error, a rewrite of
//! the scalar arrays beside a `Node *` array is found and checked, and the
//! struct arrays themselves are left as they are.

mod common;

use common::{copper_in, root, text};

/// `copper optimize --format json` on one testdata file: its kernels.
fn optimize(file: &str) -> Vec<serde_json::Value> {
    let o = copper_in(
        &root(),
        &["optimize", &format!("testdata/{file}"), "--format", "json"],
    );
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{file}: {}",
        text(&o)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    v["kernels"].as_array().unwrap().clone()
}

#[test]
fn kernels_over_mixed_structs_are_optimized() {
    let files = [
        ("graph_weighted.cu", 3),
        ("nbody_step.cu", 2),
        ("block_argmin.cu", 1),
        ("complex_fns.cu", 3),
    ];
    for (file, count) in files {
        let kernels = optimize(file);
        assert_eq!(kernels.len(), count, "{file}");
        for k in &kernels {
            let status = k["status"].as_str().unwrap();
            assert!(
                status == "improved" || status == "unchanged",
                "{file} {}: {status}: {k}",
                k["kernel"]
            );
            assert!(k["check_error"].is_null(), "{k}");
            // Every metric has a bound.
            for b in k["bounds"].as_array().unwrap() {
                assert!(b["before"].as_str().is_some_and(|s| !s.is_empty()), "{k}");
            }
        }
    }
    // `neighbour_weight` reads `g_nodes[j].weight` (a float field beside
    // two ints) and the loop-invariant `g_scale[tid]`: the scalar load is
    // hoisted, checked by simulation against the original; the struct load
    // stays in the loop.
    let kernels = optimize("graph_weighted.cu");
    let k = kernels
        .iter()
        .find(|k| k["kernel"] == "neighbour_weight")
        .unwrap();
    assert_eq!(k["status"], "improved", "{k}");
    let wsteps = &k["bounds"][0];
    assert_eq!(
        (wsteps["before"].as_str(), wsteps["after"].as_str()),
        (Some("857"), Some("801"))
    );
    let o = copper_in(
        &root(),
        &["optimize", "testdata/graph_weighted.cu", "--diff"],
    );
    let diff = text(&o);
    assert!(
        diff.contains("+            s += g_nodes[j].weight * g_scale_elem;"),
        "{diff}"
    );
}
