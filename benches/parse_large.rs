//! Parse time of large generated files, at two sizes each: a `main` with
//! thousands of launches of one kernel (with and without host inputs as
//! arguments), thousands of kernels each launched once, and thousands of
//! `#define`s between hundreds of kernels, one kernel of thousands of
//! statements that use function-like macros, and the same statements
//! written out. Linear parsing keeps the time per launch, kernel, macro or
//! statement about the same at both sizes (the launches once took
//! quadratic time: 2,000 launches 6.5 s, 4,000 35 s; the macro statements
//! too: 3,200 of them 9.9 s, each expression looked for among every
//! expansion of its function). Measured by criterion, each size with its
//! items as the throughput (items/s, with a confidence interval): the
//! rates at the two sizes of a case should be about the same.
//!
//! Run: `cargo bench --bench parse_large` (criterion's options after
//! `--`, e.g. `-- --sample-size 10 "macro statements"` for one case)

use std::hint::black_box;
use std::time::Duration;

use copper::cuda::parse::parse_source;
use copper::source::SourceFile;
use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};

/// `main` launching one kernel `n` times.
fn launches(n: usize) -> String {
    let calls: String = (0..n).map(|_| "  k<<<1, 32>>>(d);\n").collect();
    format!("__global__ void k(int* a) {{ a[0] = 1; }}\nint main() {{\n  int* d;\n{calls}}}\n")
}

/// `main` launching one kernel `n` times with a host input and an
/// allocation as arguments (each launch is also evaluated with the input
/// set to other values).
fn launches_with_inputs(n: usize) -> String {
    let calls: String = (0..n)
        .map(|_| "  k<<<(n + 255) / 256, 256>>>(d, n);\n")
        .collect();
    format!(
        "__global__ void k(float* a, int n) {{ int i = threadIdx.x; if (i < n) a[i] = 1; }}\n\
         int main() {{\n  int n = 1000;\n  float* d;\n  cudaMalloc(&d, n * sizeof(float));\n{calls}}}\n"
    )
}

/// `n` kernels, each launched once from `main`.
fn kernels(n: usize) -> String {
    let defs: String = (0..n)
        .map(|i| format!("__global__ void k{i}(int* a) {{ a[threadIdx.x] = {i}; }}\n"))
        .collect();
    let calls: String = (0..n).map(|i| format!("  k{i}<<<1, 32>>>(d);\n")).collect();
    format!("{defs}int main() {{\n  int* d;\n{calls}}}\n")
}

/// `n` kernels with ten `#define`s before each.
fn macros(n: usize) -> String {
    (0..n)
        .map(|k| {
            let defs: String = (0..10)
                .map(|j| format!("#define M{} ({} + 1)\n", k * 10 + j, k * 10 + j))
                .collect();
            format!(
                "{defs}__global__ void k{k}(int* a) {{ a[0] = M{}; }}\n",
                k * 10
            )
        })
        .collect()
}

/// One kernel of `n` statements, each two nested function-like macros.
fn macro_statements(n: usize) -> String {
    let body: String = (0..n)
        .map(|j| format!("  s = ADD(s, MUL(x[i], {j}.0f));\n"))
        .collect();
    format!(
        "#define ADD(a, b) ((a) + (b))\n#define MUL(a, b) ((a) * (b))\n\
         __global__ void k(float* x) {{\n  int i = threadIdx.x;\n  float s = 0.0f;\n{body}  x[i] = s;\n}}\n"
    )
}

/// [`macro_statements`] with the macros written out.
fn plain_statements(n: usize) -> String {
    let body: String = (0..n)
        .map(|j| format!("  s = ((s) + ((x[i]) * ({j}.0f)));\n"))
        .collect();
    format!(
        "__global__ void k(float* x) {{\n  int i = threadIdx.x;\n  float s = 0.0f;\n{body}  x[i] = s;\n}}\n"
    )
}

fn parse_large(c: &mut Criterion) {
    type Gen = fn(usize) -> String;
    let cases: [(&str, Gen, [usize; 2]); 6] = [
        ("launches in main", launches, [1000, 4000]),
        ("launches with inputs", launches_with_inputs, [1000, 4000]),
        ("kernels launched once", kernels, [250, 1000]),
        ("kernels between #defines", macros, [250, 1000]),
        (
            "macro statements in one kernel",
            macro_statements,
            [1000, 8000],
        ),
        (
            "plain statements in one kernel",
            plain_statements,
            [1000, 8000],
        ),
    ];
    for (what, generate, sizes) in cases {
        let mut group = c.benchmark_group(what);
        // Each parse takes milliseconds to a second: a fixed number of
        // iterations a sample.
        group.sampling_mode(SamplingMode::Flat);
        for n in sizes {
            let text = generate(n);
            println!("parse_large: {n} {what}: {} KiB", text.len() / 1024);
            group.throughput(Throughput::Elements(n as u64));
            group.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
                b.iter(|| black_box(parse_source(SourceFile::new("large.cu", text))))
            });
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = parse_large
}
criterion_main!(benches);
