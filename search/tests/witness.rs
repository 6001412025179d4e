//! Bank-conflict witnesses as a decision procedure.
//!
//! - On small domains (warps of 4 lanes, 4 banks, inputs in 0..=7) the
//!   MILP's proved maximum equals the largest degree the simulator sees
//!   over *every* input, for random index expressions built from `+ - *`
//!   by constants, shifts, masks, `/` and `%` by positive and negative
//!   constants (of operands of either sign), `?:` on comparisons, and
//!   guards.
//! - The kernels of `testdata/bank_witness.cu`, whose witnesses the
//!   constructive search did not find, get confirmed ones, and the degree
//!   above the largest is refuted.

use std::time::{Duration, Instant};

use copper::cost::Hardware;
use copper::cuda::parse::parse_path;
use copper::ir::lower::lower_kernel;
use copper::ir::Kernel;
use copper::lint::milp;
use copper::lint::witness::{self, Refutation, Witness};
use copper::lint::{lint_kernel, Code};
use copper::sim::params::{InitKind, LaunchSpec, ParamFile};
use copper::sim::{inputs_from_spec, simulate_owned, SimOptions};
use copper_search::launch::read_params;

/// A tiny deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random integer expression over `v` (the lane's input, 0..=7) and
/// `t` (its thread index, 0..=3), of nesting at most `depth`.
fn expr(r: &mut Rng, depth: u32) -> String {
    if depth == 0 || r.below(4) == 0 {
        return match r.below(3) {
            0 => "v".into(),
            1 => "t".into(),
            _ => format!("{}", r.below(9)),
        };
    }
    let a = expr(r, depth - 1);
    let c = 1 + r.below(7);
    match r.below(14) {
        0 => format!("({a} + {})", expr(r, depth - 1)),
        1 => format!("({a} - {})", expr(r, depth - 1)),
        2 => format!("({a} * {c})"),
        3 => format!("({a} << {})", r.below(4)),
        4 => format!("({a} >> {})", r.below(3)),
        5 => format!("({a} & {})", r.below(16)),
        6 => format!("({a} | {c})"),
        7 => format!("({a} ^ {c})"),
        8 => format!("({a} % {c})"),
        9 => format!("({a} / {c})"),
        12 => format!("({a} / -{c})"),
        13 => format!("({a} % -{c})"),
        10 => format!(
            "({a} {} {} ? {} : {})",
            ["<", ">=", "==", "!="][r.below(4) as usize],
            r.below(8),
            expr(r, depth - 1),
            expr(r, depth - 1)
        ),
        _ => format!("(-{a})"),
    }
}

/// A kernel whose shared access `s[(E) & 15]` sits under the guard `G`.
fn kernel_source(index: &str, guard: &str) -> String {
    format!(
        "__global__ void k(const int *data, int *out) {{\n\
         \x20   __shared__ int s[16];\n\
         \x20   int t = threadIdx.x;\n\
         \x20   int v = data[t];\n\
         \x20   if ({guard}) {{\n\
         \x20       atomicAdd(&s[({index}) & 15], 1);\n\
         \x20   }}\n\
         \x20   out[t] = v;\n\
         }}\n"
    )
}

const SMALL: Hardware = Hardware {
    warp_size: 4,
    transaction_bytes: 32,
    banks: 4,
    bank_bytes: 4,
};

fn small_spec() -> LaunchSpec {
    ParamFile::from_toml(
        "[kernel.k]\ngrid = [1, 1, 1]\nblock = [4, 1, 1]\n\
         [kernel.k.arrays.data]\nlen = 4\ninit = \"random\"\nmin = 0\nmax = 7\n\
         [kernel.k.arrays.out]\nlen = 4\n",
    )
    .unwrap()
    .kernel
    .remove("k")
    .unwrap()
}

/// The shared atomic's site, if it is compiled at all (a guard that is a
/// false constant, `4 < 2`, leaves no access, as nvcc compiles it).
fn shared_site(k: &Kernel) -> Option<usize> {
    k.sites.iter().position(|s| k.arrays[s.array].is_shared())
}

/// The largest degree the simulator sees over all 8^4 inputs.
fn exhaustive(k: &Kernel, site: usize, spec: &LaunchSpec) -> u64 {
    let opts = SimOptions {
        hw: SMALL,
        ..SimOptions::default()
    };
    let mut best = 0;
    for code in 0..8u32.pow(4) {
        let values: Vec<f64> = (0..4).map(|l| ((code >> (3 * l)) & 7) as f64).collect();
        let mut spec = spec.clone();
        let a = spec.arrays.get_mut("data").unwrap();
        a.init = InitKind::Values;
        a.values = values;
        let inputs = inputs_from_spec(k, &spec).unwrap();
        if let Ok(r) = simulate_owned(k, inputs, &opts) {
            best = best.max(r.sites[site].max_transactions);
        }
    }
    best
}

/// A random index expression and guard.
fn random_case(rng: &mut Rng) -> (String, String) {
    let index = expr(rng, 3);
    let guard = if rng.below(2) == 0 {
        "1".to_string()
    } else {
        format!(
            "{} {} {}",
            expr(rng, 1),
            ["<", ">", "<=", ">=", "==", "!="][rng.below(6) as usize],
            rng.below(8)
        )
    };
    (index, guard)
}

#[test]
fn milp_maximum_equals_the_exhaustive_maximum_on_small_domains() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small_spec();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // Remainders and quotients of operands of either sign by negative and
    // positive divisors, first as written, then at random.
    let fixed = [
        ("((v - 2) % 7 + (v + v) % -4)", "1"),
        ("((v - 5) / -3 + (t - v) % -5)", "1"),
        ("((t - v) / 2 * 3 + (v - 4) % -3)", "v != 4"),
        ("(-(v - 3) / -2 - (v - t) % 3)", "1"),
    ];
    for case in 0..60 + fixed.len() {
        let (index, guard) = match fixed.get(case) {
            Some((index, guard)) => (index.to_string(), guard.to_string()),
            None => random_case(&mut rng),
        };
        let path = dir.path().join(format!("case{case}.cu"));
        std::fs::write(&path, kernel_source(&index, &guard)).unwrap();
        let parsed = parse_path(&path).unwrap();
        let k = lower_kernel(&parsed, "k").unwrap();
        let Some(site) = shared_site(&k) else {
            let constant = !guard.contains(['v', 't']);
            assert!(constant, "case {case}: `if ({guard})` lost its access");
            continue;
        };
        let brute = exhaustive(&k, site, &spec);
        // The node limit decides, not the clock: a net no load reaches.
        let deadline = Instant::now() + Duration::from_secs(600);
        let got = milp::maximum(&k, site, 32, &spec, &SMALL, milp::NODES, deadline);
        let what = format!("case {case}: if ({guard}) s[({index}) & 15]");
        match got {
            Ok(m) => {
                assert!(m.proved, "{what}: not proved ({:?})", m.stop);
                assert_eq!(m.degree, brute, "{what}");
            }
            // No lane can make the access: nothing to reach.
            Err(e) => assert_eq!(brute, 0, "{what}: {e}"),
        }
    }
}

/// The witness at the bank-conflict finding of `kernel` in
/// `testdata/bank_witness.cu`, for `degree` (default: the bound).
fn bank_witness(kernel: &str, degree: Option<u64>) -> Witness {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/bank_witness.cu");
    let parsed = parse_path(&path).unwrap();
    let params = read_params(&path, None).unwrap().unwrap();
    let spec = &params.kernel[kernel];
    let k = lower_kernel(&parsed, kernel).unwrap();
    let config = copper::bound::Config {
        block: copper::launch::block([256, 1, 1]).ok(),
        grid: copper::launch::grid([4, 1, 1]).ok(),
        budget: Duration::from_secs(20),
        ..Default::default()
    };
    let lint = lint_kernel(&k, config, Some(spec));
    let f = lint
        .findings
        .iter()
        .find(|f| f.code == Code::BankConflict)
        .unwrap();
    let bound = f.worst.unwrap() as u64;
    let deadline = Instant::now() + Duration::from_secs(600);
    witness::search(
        &k,
        f.site.unwrap(),
        bound,
        degree,
        spec,
        &Hardware::default(),
        witness::Limits::default(),
        deadline,
    )
}

/// A confirmed witness of `degree`, and the largest degree proved when
/// it is below the warp's 32 lanes.
fn assert_found(w: &Witness, degree: u64, largest_proved: Option<u64>) {
    match w {
        Witness::Found {
            simulated, largest, ..
        } => {
            assert_eq!(*simulated, degree, "{w:?}");
            assert_eq!(largest.map(|(m, _)| m), largest_proved, "{w:?}");
        }
        other => panic!("no witness: {other:?}"),
    }
}

#[test]
fn histogram_of_the_second_byte_reaches_8_and_refutes_9() {
    assert_found(&bank_witness("histogram_shift", None), 8, Some(8));
    assert_eq!(
        bank_witness("histogram_shift", Some(9)),
        Witness::Impossible {
            target: 9,
            largest: 8,
            by: Refutation::Milp
        }
    );
}

#[test]
fn gather_at_a_multiple_modulo_the_size_reaches_32() {
    assert_found(&bank_witness("scatter_mod", None), 32, None);
}

#[test]
fn lookup_under_a_value_test_reaches_32() {
    assert_found(&bank_witness("bucket_lookup", None), 32, None);
}
