//! The sizes a kernel is used at, to turn its bounds into numbers a
//! teacher can sort by: the values `--at` gives, else the scalar
//! arguments (and defines) of the launch the parameter file or the host
//! code gives. A kernel with neither has no sizes: its bounds stay
//! polynomials, and its candidates are ranked by the heuristic with a
//! guard at the sizes of its test launches ([`ranker`]).

use copper::launch::Dims;
use std::collections::BTreeMap;

use copper::cuda::launch::Launch;
use copper::ir::{Kernel, Param};
use copper::sim::params::LaunchSpec;
use copper::sim::test_launch::synthesized;

use crate::rank::sized::{InUse, Tested};
use crate::rank::{Ranker, Ranking};

/// Values of a kernel's integer arguments, and where they came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Sizes {
    /// Value of each argument (and each define) by name.
    pub values: BTreeMap<String, f64>,
    /// Where they came from, in words ("--at", "the parameter file's
    /// launch", "the launch at line 42").
    pub from: String,
}

/// The sizes in use: `--at` (a ranking at given values) first, else the
/// launch `spec` (the parameter file's, not scaled down for testing, or
/// the host code's), said to come from `from`: its defines and the
/// arguments of `kernel`'s parameters that are not floating point (bounds
/// are polynomials in integers; a `float factor` is no size).
pub fn in_use(
    ranking: &Ranking,
    spec: Option<(&LaunchSpec, String)>,
    kernel: &Kernel,
) -> Option<Sizes> {
    if let Ranking::At { values, .. } = ranking {
        return Some(Sizes {
            values: values.clone(),
            from: "--at".into(),
        });
    }
    let (spec, from) = spec?;
    let floating = |name: &str| {
        kernel
            .vars
            .iter()
            .any(|v| v.name == name && v.kind.is_input() && v.ty.is_float())
    };
    let mut values = spec.defines.clone();
    values.extend(
        spec.args
            .iter()
            .filter(|(k, _)| !floating(k))
            .map(|(k, v)| (k.clone(), *v)),
    );
    Some(Sizes { values, from })
}

/// How the candidates of `kernel` are compared: the user's `ranking` at
/// the `sizes` in use; without them (and without `--asymptotic`), by the
/// heuristic guarded at the largest sizes of the launches synthesized
/// around `block` that the checks use ([`largest`]).
pub fn ranker(
    ranking: &Ranking,
    sizes: Option<&Sizes>,
    kernel: &Kernel,
    block: Option<Dims>,
) -> Ranker {
    let epsilon = ranking.epsilon();
    match (ranking, sizes, block) {
        (Ranking::Asymptotic { .. }, ..) => Ranker::Asymptotic { epsilon },
        (Ranking::At { .. } | Ranking::InUse { .. }, Some(s), _) => Ranker::At(InUse {
            values: s.values.clone(),
            from: s.from.clone(),
            given: matches!(ranking, Ranking::At { .. }),
            epsilon,
        }),
        (_, None, Some(block)) => match largest(&synthesized(kernel, block)) {
            Some(point) => Ranker::Tested(Tested { point, epsilon }),
            None => Ranker::Asymptotic { epsilon },
        },
        (_, None, None) => Ranker::Asymptotic { epsilon },
    }
}

/// The largest sizes the test launches `specs` use, each size at its
/// largest over them (a loop's trip count is largest on one launch, an
/// array's length on another); `None` without launches.
fn largest(specs: &[LaunchSpec]) -> Option<BTreeMap<String, f64>> {
    specs.iter().map(point).reduce(|mut most, p| {
        for (k, v) in p {
            let m = most.entry(k).or_insert(v);
            *m = m.max(v);
        }
        most
    })
}

/// The sizes of launch `spec`: its arguments, defines, and grid and
/// block dimensions (`gridDim.x`, …), as the bounds name them.
fn point(spec: &LaunchSpec) -> BTreeMap<String, f64> {
    let mut p = spec.defines.clone();
    p.extend(spec.args.iter().map(|(k, v)| (k.clone(), *v)));
    for (d, n) in ["x", "y", "z"].iter().enumerate() {
        let dim = |v: &[u64]| v.get(d).copied().unwrap_or(1) as f64;
        p.insert(format!("gridDim.{n}"), dim(&spec.grid));
        p.insert(format!("blockDim.{n}"), dim(&spec.block));
    }
    p
}

/// The launch `spec` the host code's `launch` was tested with, its
/// arguments as written: an argument that is a host input cut to test
/// size (`N` passed for `n`) gets its value as written, and the text says
/// which were cut and could not be restored. `of` follows the launch's
/// line in the text (" of src/main.cu" for a header's kernel).
pub fn host_launch(
    kernel: &Kernel,
    launch: &Launch,
    spec: &LaunchSpec,
    of: &str,
) -> (LaunchSpec, String) {
    let mut spec = spec.clone();
    let mut from = format!("the launch at line {}{of}", launch.line);
    let Some(t) = &launch.test else {
        return (spec, from);
    };
    let mut restored = vec![false; t.cut.len()];
    for (p, arg) in kernel.params.iter().zip(&t.host.args) {
        let Param::Scalar(v) = p else { continue };
        if let Some(i) = t.cut.iter().position(|(name, ..)| name == arg.text.trim()) {
            spec.args
                .insert(kernel.vars[*v].name.clone(), t.cut[i].1 as f64);
            restored[i] = true;
        }
    }
    let still_cut: Vec<String> = t
        .cut
        .iter()
        .zip(&restored)
        .filter(|(_, r)| !**r)
        .map(|((name, was, now), _)| format!("`{name}` = {was} cut to {now}"))
        .collect();
    if !still_cut.is_empty() {
        from.push_str(&format!(", as tested: {}", still_cut.join(", ")));
    }
    (spec, from)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel `k(float *a, int n, float factor)`.
    fn scaled() -> Kernel {
        let src = "__global__ void k(float *a, int n, float factor) { a[0] = n * factor; }";
        let file = copper::cuda::parse::parse_source(copper::source::SourceFile::new("t.cu", src));
        copper::ir::lower::lower_kernel(&file, "k").expect("lowers")
    }

    #[test]
    fn at_wins_over_the_launch_and_arguments_over_defines() {
        let kernel = scaled();
        let spec = LaunchSpec {
            grid: vec![1],
            block: vec![32],
            shared_bytes: 0,
            args: BTreeMap::from([("n".to_string(), 4096.0), ("factor".to_string(), 2.5)]),
            arrays: BTreeMap::new(),
            defines: BTreeMap::from([("n".to_string(), 1.0), ("W".to_string(), 16.0)]),
        };
        let s = in_use(
            &Ranking::default(),
            Some((&spec, "the launch at line 9".into())),
            &kernel,
        )
        .unwrap();
        assert_eq!(s.values["n"], 4096.0);
        assert_eq!(s.values["W"], 16.0);
        // A floating-point argument is no size.
        assert!(!s.values.contains_key("factor"), "{:?}", s.values);
        assert_eq!(s.from, "the launch at line 9");
        let at = Ranking::At {
            values: BTreeMap::from([("n".to_string(), 7.0)]),
            epsilon: 0.02,
        };
        let s = in_use(&at, Some((&spec, String::new())), &kernel).unwrap();
        assert_eq!(s.values, BTreeMap::from([("n".to_string(), 7.0)]));
        assert_eq!(s.from, "--at");
        assert!(in_use(&Ranking::default(), None, &kernel).is_none());
    }
}
