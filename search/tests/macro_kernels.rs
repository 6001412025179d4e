//! Kernels a file-scope macro invocation defines (`testdata/macro_kernels.cu`:
//! a `##`-pasted name, a macro invoking another, `__launch_bounds__` in the
//! expansion): listed, bounded and linted at the invocation's line, and
//! never rewritten, in text and JSON alike; in a header, at the header's
//! line.

mod common;

use common::{copper_in, root, text, Scratch};

/// Each family's kernels and the line of their invocation.
const KERNELS: [(&str, usize, &str); 5] = [
    ("neg_kernel", 31, "UNARY"),
    ("twice_kernel", 32, "UNARY"),
    ("add_kernel", 33, "BINARY"),
    ("mul_kernel", 34, "BINARY"),
    ("row_sum_f", 35, "ROW_SUM"),
];

const FILE: &str = "testdata/macro_kernels.cu";

#[test]
fn each_kernel_is_listed_at_its_invocation() {
    let o = copper_in(&root(), &["parse", FILE]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    for (name, line, mac) in KERNELS {
        assert!(
            out.contains(&format!("{FILE}:{line}:1: kernel {name}(")),
            "{name}: {out}"
        );
        assert!(out.contains(&format!("(from the macro `{mac}`)")), "{out}");
    }
    // The host code's launch of a macro's kernel is found.
    assert!(out.contains(&format!("launched at {FILE}:38")), "{out}");
    assert!(!out.contains("error"), "{out}");
}

#[test]
fn each_kernel_is_bounded_at_its_invocation() {
    let o = copper_in(&root(), &["analyze", FILE]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    for (name, line, _) in KERNELS {
        let head = format!("{FILE}:{line}:1: kernel {name}:");
        let at = out.find(&head).unwrap_or_else(|| panic!("{head}: {out}"));
        let bound = out[at..].lines().nth(1).unwrap_or("");
        assert!(
            bound.contains("wsteps") && bound.contains('≤'),
            "{name}: {out}"
        );
    }
}

#[test]
fn optimize_refuses_to_edit_an_expansion_and_says_where_the_macro_is() {
    let o = copper_in(&root(), &["optimize", FILE]);
    let out = text(&o);
    assert!(!out.contains("@@"), "no diff: {out}");
    for (name, line, mac) in KERNELS {
        assert!(
            out.contains(&format!("{FILE}:{line}:1: kernel {name}: not rewritten;"))
                && out.contains(&format!(
                "`{name}` is defined by the macro `{mac}` at {FILE}:{line}; apply the change in the macro by hand"
            )),
            "{name}: {out}"
        );
    }
    let o = copper_in(&root(), &["optimize", "--format", "json", FILE]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(
        doc["diffs"].as_array().map(Vec::len),
        Some(0),
        "{}",
        text(&o)
    );
    for (name, line, mac) in KERNELS {
        let k = doc["kernels"]
            .as_array()
            .and_then(|ks| ks.iter().find(|k| k["kernel"] == name))
            .unwrap_or_else(|| panic!("no {name}: {}", text(&o)));
        assert_eq!(k["line"], line);
        assert_eq!(k["status"], "unchanged");
        assert!(
            k["not_rewritten"]
                .as_str()
                .is_some_and(|w| w.contains(&format!("defined by the macro `{mac}`"))),
            "{k}"
        );
        assert!(k["bound_before"].is_string(), "{k}");
    }
}

#[test]
fn an_invocation_in_a_header_is_reported_at_the_headers_line() {
    let dir = Scratch::new();
    dir.file(
        "ops.cuh",
        b"#pragma once\n#define UNARY(name, e) \\\n  __global__ void name##_kernel(const float *x, float *y, int n) { \\\n    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = (e); }\nUNARY(neg, -x[i])\n",
    );
    dir.file(
        "main.cu",
        b"#include \"ops.cuh\"\nvoid run(const float *x, float *y, int n) { neg_kernel<<<(n + 127) / 128, 128>>>(x, y, n); }\n",
    );
    let o = copper_in(dir.path(), &["parse", "main.cu"]);
    let out = text(&o);
    assert!(
        out.contains("ops.cuh:5:1: kernel neg_kernel(") && out.contains("launched at main.cu:2"),
        "{out}"
    );
    let o = copper_in(dir.path(), &["optimize", "main.cu"]);
    let out = text(&o);
    assert!(
        out.contains("ops.cuh:5:1: kernel neg_kernel: not rewritten")
            && out.contains("defined by the macro `UNARY` at ops.cuh:5")
            && !out.contains("@@"),
        "{out}"
    );
}

#[test]
fn lint_findings_in_an_expansion_name_the_macro() {
    let o = copper_in(&root(), &["lint", FILE]);
    let out = text(&o);
    let finding = out
        .lines()
        .find(|l| l.contains("warning[misaligned-global]"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        finding.starts_with(&format!("{FILE}:35:1:"))
            && finding.ends_with("(in the expansion of `ROW_SUM`)"),
        "{finding}"
    );
    // Kernels written out are not said to be in an expansion.
    let plain = copper_in(&root(), &["lint", "testdata/addSub1.cu"]);
    assert!(text(&plain).contains("warning["), "{}", text(&plain));
    assert!(
        !text(&plain).contains("in the expansion of"),
        "{}",
        text(&plain)
    );
}
