//! End-to-end tests of the `copper` binary: bad input gets a clear message
//! and the right exit status, never a panic.

use std::path::PathBuf;
use std::process::{Command, Output};

fn copper(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_copper"))
        .args(args)
        .output()
        .expect("copper runs")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn scratch(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("copper-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn assert_clean_failure(o: &Output, status: i32, needle: &str) {
    let t = text(o);
    assert_eq!(o.status.code(), Some(status), "{t}");
    assert!(t.contains(needle), "expected `{needle}` in:\n{t}");
    assert!(!t.contains("panicked"), "{t}");
}

#[test]
fn missing_file_and_directory() {
    assert_clean_failure(&copper(&["parse", "/nonexistent/k.cu"]), 2, "cannot read file");
    let dir = std::env::temp_dir();
    assert_clean_failure(&copper(&["parse", dir.to_str().unwrap()]), 2, "is a directory");
}

#[test]
fn binary_non_utf8_and_huge_files() {
    let bin = scratch("bin.cu", &[0x7f, b'E', b'L', b'F', 0, 1, 2]);
    assert_clean_failure(&copper(&["parse", bin.to_str().unwrap()]), 2, "binary file");
    let latin1 = scratch("latin1.cu", b"// caf\xe9\n__global__ void k() {}\n");
    assert_clean_failure(&copper(&["parse", latin1.to_str().unwrap()]), 2, "not valid UTF-8");
    let huge = scratch("huge.cu", &vec![b' '; 50 * 1024 * 1024]);
    assert_clean_failure(&copper(&["parse", huge.to_str().unwrap()]), 2, "copper reads source files up to");
    let _ = std::fs::remove_file(huge);
}

#[test]
fn deep_nesting_is_a_located_diagnostic() {
    let src = format!("__global__ void k(int* a) {{\n  a[0] = {}1{};\n}}\n", "(".repeat(10_000), ")".repeat(10_000));
    let p = scratch("deep.cu", src.as_bytes());
    let o = copper(&["parse", p.to_str().unwrap()]);
    assert_clean_failure(&o, 1, "deep.cu:2:");
    assert!(text(&o).contains("error[too-deep]"));
}

#[test]
fn one_bad_kernel_does_not_stop_the_others() {
    let src = "#include <cstdio>\n__global__ void bad(int* a) {\n  a[0] = ;\n}\n\
               template <typename T>\n__global__ void tmpl(T* a) { a[0] = 0; }\n\
               __global__ void good(int* a, int n) { if (threadIdx.x < n) a[threadIdx.x] = 1; }\n\
               int main() { good<<<1, 32>>>(0, 3); }\n";
    let p = scratch("mixed.cu", src.as_bytes());
    let o = copper(&["parse", p.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("mixed.cu:3:10: error[syntax]"), "{t}");
    assert!(t.contains("mixed.cu:5:1: error[unsupported]: kernel `tmpl` is a template"), "{t}");
    assert!(t.contains("kernel good(int *a, int n)"), "{t}");
    assert!(t.contains("grid (1, 1, 1) block (32, 1, 1)"), "{t}");
    let fmt = copper(&["fmt", p.to_str().unwrap(), "--kernel", "good"]);
    assert!(String::from_utf8_lossy(&fmt.stdout).contains("__global__ void good(int *a, int n) {"));
}

#[test]
fn json_output_is_valid() {
    let p = scratch("j.cu", b"__global__ void k(float* a) { a[threadIdx.x] = 0.0f; }\n");
    let o = copper(&["kernels", "--format", "json", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(v["functions"][0]["name"], "k");
    assert_eq!(v["functions"][0]["kind"], "global");
}
