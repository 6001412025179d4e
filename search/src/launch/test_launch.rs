//! The launch copper tests a kernel on (`copper params` writes it, the
//! report and `annotate` simulate on it): the parameter file's, else the
//! host code's, else the first synthesized launch the original runs
//! cleanly on.

use std::sync::Arc;

use copper::cuda::parse::ParsedFile;
use copper::ir::Kernel;
use copper::sim::params::LaunchSpec;
use copper::sim::test_launch::synthesized;
use copper::sim::work::Work;
use copper_transforms::check::Checker;

use super::{kernel_shape, test_plan, FIT_STEPS};

/// The launch copper tests a kernel on, as `copper params` writes it.
pub struct TestedLaunch {
    /// Where it came from, and what was assumed.
    pub assumptions: Vec<String>,
    /// The launch; `None` when none could be built.
    pub spec: Option<LaunchSpec>,
    /// Why the original does not run cleanly on any synthesized launch
    /// (`spec` is then the first one built, to be edited).
    pub unclean: Option<String>,
}

/// The launch of `kernel` (lowered from `parsed`) copper tests on: the
/// parameter file's launch `spec`, else the host code's, else the first
/// synthesized launch the original runs cleanly on.
pub fn test_launch(
    parsed: &ParsedFile,
    kernel: &Kernel,
    spec: Option<&LaunchSpec>,
) -> TestedLaunch {
    let name = &kernel.name;
    let shape = kernel_shape(
        None,
        None,
        parsed,
        parsed,
        kernel,
        spec,
        &Arc::new(Work::new(FIT_STEPS)),
    );
    let plan = test_plan(parsed, kernel, spec, &shape, None);
    let (spec, unclean) = match (&plan.spec, plan.block) {
        (Some(s), _) => (Some(s.clone()), None),
        (None, Some(block)) => match Checker::new(parsed, name, None, Some(block), None) {
            Ok(c) => (c.launch_specs().next().cloned(), None),
            Err(why) => (
                synthesized(kernel, block).into_iter().next(),
                Some(why.to_string()),
            ),
        },
        (None, None) => (None, None),
    };
    TestedLaunch {
        assumptions: plan.assumptions,
        spec,
        unclean,
    }
}
