//! What a rewrite's promise that some pointer parameters do not overlap
//! is worth: the original and the rewrite run on the checker's launches
//! with each promised pair passed one array ([`Kernel::aliased`]), as a
//! caller breaking the promise would run them.

use copper::ir::{ArrayId, Kernel};
use copper::sim::{inputs_from_spec, simulate_owned};

use super::{covered, difference, reshaped_launch, Checker, Terms};

/// The rewrite and the original with the promised pairs passed one array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AliasedRuns {
    /// The rewrite computes what the original computes on all of these
    /// launches (those the original runs cleanly aliased).
    Same {
        /// Launches compared.
        launches: usize,
    },
    /// The rewrite's results differ from the original's (or it fails) on
    /// some launches: the promise is what makes it right.
    Differs {
        /// Launches where they differ.
        differ: usize,
        /// Launches compared.
        launches: usize,
    },
    /// The original itself does not run cleanly aliased on any launch.
    OriginalFails,
    /// The pairs cannot share storage in the simulator (why).
    NotSimulated(String),
}

impl AliasedRuns {
    /// For people, after "passed one array for `a` and `b`, ".
    pub fn said(&self) -> String {
        match self {
            AliasedRuns::Same { launches } => format!(
                "the rewrite still computes what the original computes on all {launches} test launches"
            ),
            AliasedRuns::Differs { differ, launches } => format!(
                "the rewrite's results differ from the original's on {differ} of {launches} test launches: the promise is what makes it right"
            ),
            AliasedRuns::OriginalFails => {
                "the original itself does not run cleanly on any test launch".into()
            }
            AliasedRuns::NotSimulated(why) => format!("copper cannot simulate that: {why}"),
        }
    }
}

impl Checker {
    /// Runs the original and `candidate` on each launch (as `terms` says)
    /// with each pair of pointer parameters `pairs` (by name) passed one
    /// array.
    pub fn aliased(
        &self,
        candidate: &Kernel,
        pairs: &[(String, String)],
        terms: &Terms,
    ) -> AliasedRuns {
        let (original, candidate) = match (merged(&self.original, pairs), merged(candidate, pairs))
        {
            (Ok(o), Ok(c)) => (o, c),
            (Err(why), _) | (_, Err(why)) => return AliasedRuns::NotSimulated(why),
        };
        let (mut launches, mut differ) = (0, 0);
        // The original's runs and the candidate's, each as a check's.
        let options = self.check_options(2);
        for run in &self.launches {
            if !covered(&run.spec, terms.covers.as_deref()) {
                continue;
            }
            let Ok(inputs) = inputs_from_spec(&original, &run.spec) else {
                continue;
            };
            let Ok(want) = simulate_owned(&original, inputs, &options) else {
                continue;
            };
            launches += 1;
            let spec = reshaped_launch(&run.spec, terms.reshape);
            let threads = spec.block.iter().product::<u64>();
            let same = inputs_from_spec(&candidate, &spec)
                .ok()
                .and_then(|inputs| simulate_owned(&candidate, inputs, &options).ok())
                .is_some_and(|got| {
                    difference(&got.arrays, &want.arrays, terms, threads, None).is_none()
                });
            if !same {
                differ += 1;
            }
        }
        self.charge_check(&options);
        match (launches, differ) {
            (0, _) => AliasedRuns::OriginalFails,
            (launches, 0) => AliasedRuns::Same { launches },
            (launches, differ) => AliasedRuns::Differs { differ, launches },
        }
    }
}

/// `kernel` with each pair of `pairs` (by name) passed one array.
fn merged(kernel: &Kernel, pairs: &[(String, String)]) -> Result<Kernel, String> {
    let id = |name: &String| -> Result<ArrayId, String> {
        kernel
            .arrays
            .iter()
            .position(|a| &a.name == name && a.param.is_some())
            .ok_or_else(|| format!("`{name}` is not a pointer parameter"))
    };
    let ids = pairs
        .iter()
        .map(|(a, b)| Ok((id(a)?, id(b)?)))
        .collect::<Result<Vec<_>, String>>()?;
    kernel.aliased(&ids)
}
