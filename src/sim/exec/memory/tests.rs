//! Undefined shared elements when checking: a value combined from them
//! and stored to shared memory is undefined in turn; any other use of one
//! is an error.

use crate::cuda::parse::parse_source;
use crate::ir::lower::lower_kernel;
use crate::sim::params::ParamFile;
use crate::sim::{inputs_from_spec, simulate, SimError, SimOptions};
use crate::source::SourceFile;

/// `kernel` (with `__shared__ int s[64]`, 32 threads writing its first
/// half) simulated on one block of 32 threads, checking.
fn run(body: &str) -> Result<(), SimError> {
    let src = format!(
        "__global__ void k(int *out) {{\n    __shared__ int s[64];\n    unsigned int t = threadIdx.x;\n    s[t] = t;\n    __syncthreads();\n{body}}}\n"
    );
    let parsed = parse_source(SourceFile::new("t.cu", &src));
    let kernel = lower_kernel(&parsed, "k").unwrap_or_else(|d| panic!("{}", d.message));
    let p = "[kernel.k]\ngrid=[1]\nblock=[32]\n[kernel.k.arrays.out]\nlen=64\n";
    let pf = ParamFile::from_toml(p).expect("params");
    let inputs = inputs_from_spec(&kernel, &pf.kernel["k"]).expect("inputs");
    let checking = SimOptions {
        detect_races: true,
        ..SimOptions::default()
    };
    simulate(&kernel, &inputs, &checking).map(|_| ())
}

#[test]
fn sums_of_undefined_elements_stored_to_shared_memory_are_undefined_not_errors() {
    // Lanes 16–31 read `s[32..48)`, which no thread wrote: their sums
    // are undefined, and lanes 0–15 read only defined ones.
    let tail = "    s[t] += s[t + 16];\n    s[t] += s[t + 8];\n";
    assert!(run(&format!("{tail}    if (t < 8) out[t] = s[t];\n")).is_ok());
    // Storing an undefined sum to global memory is still an error.
    let e = run(&format!("{tail}    out[t] = s[t];\n")).unwrap_err();
    assert!(e.message.contains("reads `s["), "{}", e.message);
}

#[test]
fn an_undefined_element_in_an_index_or_a_division_is_an_error() {
    let index = run("    s[t] = s[s[t + 32] % 32];\n").unwrap_err();
    assert!(index.message.contains("reads `s[32]`"), "{}", index.message);
    let division = run("    s[t] = 64 / (s[t + 32] + 1);\n").unwrap_err();
    assert!(
        division.message.contains("reads `s[32]`"),
        "{}",
        division.message
    );
}
