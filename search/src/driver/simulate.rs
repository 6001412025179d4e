//! The simulation driver of `copper simulate`, per kernel: lowering, the
//! parameter file's launch and inputs, the thread and storage limits, and
//! the run under the cost semantics. It returns what happened
//! ([`Simulation`]); printing, the array dump and every message are the
//! command's.

use std::time::Instant;

use copper::cuda::parse::ParsedFile;
use copper::diag::Diagnostic;
use copper::ir::lower::{lower_kernel, symbol_notes};
use copper::ir::Kernel;
use copper::launch::Shape;
use copper::sim::footprint::{self, TooMuchStorage};
use copper::sim::params::LaunchSpec;
use copper::sim::{
    check_threads, inputs_from_spec, simulate_owned, InputError, SimError, SimOptions, SimResult,
};

/// One kernel's simulation.
pub struct Simulation {
    /// Notes on the symbols its lowering met.
    pub notes: Vec<Diagnostic>,
    /// The kernel, lowered.
    pub kernel: Kernel,
    /// Its run, or why there was none.
    pub outcome: Result<Run, Failure>,
}

/// A finished run.
pub struct Run {
    /// The launch shape simulated.
    pub shape: Shape,
    /// The costs, access-site statistics and final arrays.
    pub result: SimResult,
    /// Seconds the run took.
    pub seconds: f64,
}

/// Why a kernel was not simulated to the end.
pub enum Failure {
    /// The parameter file has no entry for it.
    NoEntry,
    /// Its launch, arguments or arrays do not fit the kernel, or it runs
    /// too many threads.
    Inputs(InputError),
    /// Its arrays take more than copper simulates.
    Storage(TooMuchStorage),
    /// The simulation stopped with an error (a fault, the work limit).
    Simulation(SimError),
}

/// Simulates kernel `name` of `parsed` as `spec` (its parameter file
/// entry, if any) launches it, under `opts`; the diagnostic that stops
/// its lowering, if one does.
pub fn simulate_kernel(
    parsed: &ParsedFile,
    name: &str,
    spec: Option<&LaunchSpec>,
    opts: &SimOptions,
) -> Result<Simulation, Diagnostic> {
    let kernel = lower_kernel(parsed, name)?;
    let notes = symbol_notes(parsed, &kernel);
    let outcome = run(&kernel, spec, opts);
    Ok(Simulation {
        notes,
        kernel,
        outcome,
    })
}

/// The run of `kernel` on `spec`'s launch.
fn run(kernel: &Kernel, spec: Option<&LaunchSpec>, opts: &SimOptions) -> Result<Run, Failure> {
    let spec = spec.ok_or(Failure::NoEntry)?;
    let inputs = inputs_from_spec(kernel, spec)
        .and_then(|i| check_threads(&i.shape, opts.sample_blocks).map(|()| i))
        .map_err(Failure::Inputs)?;
    footprint::check(kernel, &inputs).map_err(Failure::Storage)?;
    let start = Instant::now();
    let shape = inputs.shape;
    let result = simulate_owned(kernel, inputs, opts).map_err(Failure::Simulation)?;
    Ok(Run {
        shape,
        result,
        seconds: start.elapsed().as_secs_f64(),
    })
}
