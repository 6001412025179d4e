//! The `index-overflow` lint inside device functions and in loop
//! accumulations. Before, a product past `INT_MAX` computed by an inlined
//! `__device__` function, and a sum grown by a loop, had no finding,
//! while the same product written in the kernel had one.

use copper::bound::{prepare, Config};
use copper::cuda::parse::parse_source;
use copper::ir::lower::lower_kernel;
use copper::lint::overflow::findings;
use copper::lint::Finding;
use copper::sim::params::ParamFile;
use copper::source::SourceFile;

/// The overflow findings of kernel `k` of `src` at the launch, with the
/// source to find lines in.
fn overflow_findings(src: &str, grid: u64, block: u64, args: &str) -> Vec<Finding> {
    let kernel = lower_kernel(&parse_source(SourceFile::new("t.cu", src)), "k").unwrap();
    let toml = format!("[kernel.k]\ngrid = [{grid}]\nblock = [{block}]\nargs = {{ {args} }}\n");
    let params = ParamFile::from_toml(&toml).expect("the launch parses");
    let prepared = prepare(
        &kernel,
        Config {
            block: Some(copper::launch::block([block, 1, 1]).expect("a launch CUDA runs")),
            grid: Some(copper::launch::grid([grid, 1, 1]).expect("a launch CUDA runs")),
            ..Config::default()
        },
    );
    findings(&prepared, Some(&params.kernel["k"]))
}

fn line_of(src: &str, at: usize) -> usize {
    src[..at].matches('\n').count() + 1
}

#[test]
fn a_product_in_a_device_function_is_found_at_the_callee_naming_the_call() {
    let src = "__device__ int mul2(int x, int y) {\n  return x * y;\n}\n\
               __global__ void k(int *a, int n) {\n\
               int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
               a[mul2(i, n) & 1023] = 1;\n}\n";
    let found = overflow_findings(src, 4096, 256, "n = 3000");
    assert_eq!(found.len(), 1, "{found:?}");
    let f = &found[0];
    assert_eq!(line_of(src, f.span.start), 2, "{f:?}");
    assert_eq!(f.calls.len(), 1, "{f:?}");
    assert_eq!(line_of(src, f.calls[0].start), 6, "{f:?}");
    // The same product written in the kernel.
    let inline = "__global__ void k(int *a, int n) {\n\
                  int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                  a[(i * n) & 1023] = 1;\n}\n";
    assert_eq!(overflow_findings(inline, 4096, 256, "n = 3000").len(), 1);
    assert!(overflow_findings(src, 4, 256, "n = 3000").is_empty());
}

#[test]
fn a_sum_a_loop_grows_past_int_max_is_found() {
    let src = "__global__ void k(int *a, int n) {\n\
               int acc = 0;\n\
               for (int j = 0; j < n; j++) {\n\
                 acc += 100000;\n\
               }\n\
               a[threadIdx.x] = acc;\n}\n";
    let found = overflow_findings(src, 1, 32, "n = 30000");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(line_of(src, found[0].span.start), 4, "{:?}", found[0]);
    // 20,000 iterations stay below INT_MAX.
    assert!(overflow_findings(src, 1, 32, "n = 20000").is_empty());
    let constant = src.replace("j < n", "j < 30000");
    assert_eq!(overflow_findings(&constant, 1, 32, "n = 1").len(), 1);
}
