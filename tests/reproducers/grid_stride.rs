//! Grid-stride loops at large launches: one iteration per `S` elements,
//! so every metric's bound should be linear in `n` (`c·(n + S − 1)/S`).

use copper::bound::{prepare, Config, Outcome};
use copper::cost::BUILTIN_METRICS;
use copper::cuda::parse::parse_source;
use copper::ir::lower::lower_kernel;
use copper::source::SourceFile;

const KERNEL: &str = "__global__ void gs(float *y, int n) {\n\
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)\n\
        y[i & 1023] += 1.0f;\n}";

/// The metrics whose bound at block `block`, grid `grid` has a term of
/// degree 2 or more in `n`, with the bound's text.
fn superlinear(block: u64, grid: u64) -> Vec<String> {
    let kernel = lower_kernel(&parse_source(SourceFile::new("gs.cu", KERNEL)), "gs").unwrap();
    let p = prepare(
        &kernel,
        Config {
            block: Some([block, 1, 1]),
            grid: Some([grid, 1, 1]),
            ..Config::default()
        },
    );
    BUILTIN_METRICS
        .iter()
        .filter_map(|name| {
            let metric = copper::cost::Metric::builtin(name)?;
            match p.bound(&metric).work {
                Outcome::Bound(b) if b.terms.iter().any(|t| t.factors.len() > 1) => {
                    Some(format!("{name}: {b}"))
                }
                Outcome::Bound(_) => None,
                other => Some(format!("{name}: {other:?}")),
            }
        })
        .collect()
}

#[test]
fn grid_stride_bounds_are_linear_at_moderate_strides() {
    for (block, grid) in [(32, 1), (32, 4), (256, 16), (256, 256)] {
        let found = superlinear(block, grid);
        assert!(found.is_empty(), "block {block}, grid {grid}: {found:?}");
    }
}

/// Known imprecision: from a stride of about `2^18` threads the LP's
/// degree-2 stage leaves the loop unpaid within the solver's tolerance
/// (its floating-point point violates a row by `2^-40` with every entry
/// coefficient 0), and the exact recovery pays it with the square of the
/// stride base: `wsteps` 1.44M against 3,722 simulated at `n = 2^26`.
/// Degree 1 (`--degree 1`) gives the linear bound. Neither capping
/// coefficients at exactly 0, nor slack relative to each row's scale, nor
/// one round of iterative refinement per stage, nor bases divided by their
/// step fixed it.
#[test]
#[ignore = "known imprecision: grid-stride bounds at strides of 2^18 and more are quadratic"]
fn grid_stride_bounds_are_linear_at_large_strides() {
    for (block, grid) in [(256, 1024), (256, 4096), (1024, 1024)] {
        let found = superlinear(block, grid);
        assert!(found.is_empty(), "block {block}, grid {grid}: {found:?}");
    }
}
