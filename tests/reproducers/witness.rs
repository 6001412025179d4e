//! Bank-conflict witnesses through `/` of operands of either sign: the
//! MILP must reach the conflicts the simulator reaches. Before, `tab[(k /
//! 4 + 8) * 32]` got "no witness found" though 16 lanes can read 16
//! different rows of one bank.

use std::time::{Duration, Instant};

use copper::cost::Hardware;
use copper::cuda::parse::parse_source;
use copper::ir::lower::lower_kernel;
use copper::lint::milp;
use copper::lint::witness::{search, Limits, Witness};
use copper::sim::params::ParamFile;
use copper::source::SourceFile;

/// The largest degree the MILP proves at the `tab` load of a kernel whose
/// lanes read `k` in `[min, max]`, and the witness search's answer.
fn reach(min: i64, max: i64) -> (u64, Witness) {
    let src = "__global__ void k(const int *data, int *out) {\n\
               __shared__ int tab[1024];\n\
               int t = threadIdx.x;\n\
               for (int j = t; j < 1024; j += blockDim.x) tab[j] = j;\n\
               __syncthreads();\n\
               int k = data[t];\n\
               out[t] = tab[(k / 4 + 8) * 32];\n}\n";
    let kernel = lower_kernel(&parse_source(SourceFile::new("t.cu", src)), "k").unwrap();
    let toml = format!(
        "[kernel.k]\ngrid = [1]\nblock = [32]\n\
         [kernel.k.arrays.data]\nlen = 32\ninit = \"random\"\nmin = {min}\nmax = {max}\n\
         [kernel.k.arrays.out]\nlen = 32\n"
    );
    let spec = ParamFile::from_toml(&toml)
        .unwrap()
        .kernel
        .remove("k")
        .unwrap();
    let site = kernel
        .sites
        .iter()
        .position(|s| kernel.arrays[s.array].is_shared() && !s.is_write)
        .unwrap();
    let hw = Hardware::default();
    // The node limit decides, not the clock: a net no load reaches.
    let deadline = || Instant::now() + Duration::from_secs(600);
    let m =
        milp::maximum(&kernel, site, 32, &spec, &hw, milp::NODES, deadline()).expect("encodable");
    assert!(m.proved, "{:?}", m.stop);
    let w = search(
        &kernel,
        site,
        32,
        None,
        &spec,
        &hw,
        Limits::default(),
        deadline(),
    );
    (m.degree, w)
}

#[test]
fn a_quotient_of_operands_of_either_sign_reaches_its_conflict() {
    // k in [-31, 31]: k / 4 in [-7, 7] (truncation), 15 rows.
    // k in [0, 63]: k / 4 in [0, 15], 16 rows; k in [-35, 63]: [-8, 15].
    for (min, max, degree) in [(0, 63, 16), (-31, 31, 15), (-35, 63, 24)] {
        let (proved, w) = reach(min, max);
        assert_eq!(proved, degree, "k in [{min}, {max}]");
        match w {
            Witness::Found { simulated, .. } => {
                assert_eq!(simulated, degree, "k in [{min}, {max}]")
            }
            other => panic!("k in [{min}, {max}]: {other:?}"),
        }
    }
}
