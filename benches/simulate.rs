//! Simulator speed: vectorAdd over 2^23 elements (three arrays of them
//! stay within `copper::sim::MAX_ELEMENTS`) and a 1024×1024 naive
//! matrix multiply, in seconds and warp-instructions per second; then the
//! time a work unit takes (`copper::sim::work`) in loops of arithmetic,
//! global accesses, shared accesses and long expressions, which the work
//! limits assume to be about the same. Each figure is the median of 3
//! runs, with the fastest and slowest (`COPPER_BENCH_RUNS=N` for another
//! count); the rates are at the median.
//!
//! Run: `cargo bench --bench simulate` (`-- --quick` skips the matrix
//! multiply and the work units)

mod stats;

use std::time::Instant;

use copper::cuda::parse::parse_source;
use copper::ir::lower::lower_kernel;
use copper::sim::params::ParamFile;
use copper::sim::{inputs_from_spec, simulate_owned, SimOptions};
use copper::source::SourceFile;

/// Runs per case unless `COPPER_BENCH_RUNS` says otherwise.
const RUNS: usize = 3;

fn bench(label: &str, src: &str, params: &str) {
    let parsed = parse_source(SourceFile::new("bench.cu", src));
    let name = parsed.kernels().next().expect("kernel").name.clone();
    let kernel = lower_kernel(&parsed, &name).expect("lowers");
    let p = ParamFile::from_toml(params).expect("params");
    let opts = SimOptions::default();
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..stats::runs(RUNS) {
        // The inputs are the simulation's to keep: made anew for each run,
        // outside the timed part.
        let inputs = inputs_from_spec(&kernel, &p.kernel[&name]).expect("inputs");
        let start = Instant::now();
        let r = simulate_owned(&kernel, inputs, &opts).expect("simulates");
        times.push(start.elapsed().as_secs_f64());
        last = Some(r);
    }
    let (Some(spread), Some(r)) = (stats::Spread::of(times), last) else {
        unreachable!("one run at least");
    };
    let secs = spread.median;
    println!(
        "{label}: {} s, {} warps, {} warp-instructions, {:.2} M warp-instructions/s, {} work units, {:.0} ns a unit ({} threads, 5 metrics)",
        spread.s(3),
        r.warps,
        r.instructions,
        r.instructions as f64 / secs / 1e6,
        r.work,
        secs * 1e9 / r.work as f64,
        rayon::current_num_threads()
    );
}

/// Loops of 2,000 iterations at 8 blocks of 256 threads, doing one kind
/// of work each: the time a work unit takes in each should be close.
fn work_units() {
    let loops = [
        ("arithmetic", "float acc = threadIdx.x; for (int c = 0; c < n; c++) { acc = acc * 1.0001f + 0.5f; } out[blockIdx.x * blockDim.x + threadIdx.x] = acc;"),
        ("global accesses", "float acc = 0; for (int c = 0; c < n; c++) { acc += a[(threadIdx.x * 33 + c) % 4096]; out[(threadIdx.x + c) % 4096] = acc; }"),
        ("shared accesses", "__shared__ float s[1024]; float acc = 0; for (int c = 0; c < n; c++) { s[(threadIdx.x * 2 + c) % 1024] = acc; acc += s[(threadIdx.x + c) % 1024]; } out[blockIdx.x * blockDim.x + threadIdx.x] = acc;"),
        ("long expressions", "float x = threadIdx.x, b = 1.5f, c = 2.5f; for (int k = 0; k < n; k++) { x = x * b + c * x - b * c + x * 0.5f - c * 0.25f + b * x * c - x * x * 0.001f; } out[blockIdx.x * blockDim.x + threadIdx.x] = x;"),
    ];
    for (label, body) in loops {
        bench(
            &format!("work units, {label}"),
            &format!("__global__ void k(const float *a, float *out, int n) {{ {body} }}"),
            "[kernel.k]\ngrid=[8]\nblock=[256]\n[kernel.k.args]\nn=2000\n\
             [kernel.k.arrays.a]\nlen=4096\ninit=\"random\"\n[kernel.k.arrays.out]\nlen=4096\n",
        );
    }
}

fn main() {
    let n = 1 << 23;
    bench(
        "vectorAdd 2^23",
        "__global__ void vectorAdd(const float *A, const float *B, float *C, int n) {\n\
           int i = blockDim.x * blockIdx.x + threadIdx.x;\n\
           if (i < n) { C[i] = A[i] + B[i]; }\n}",
        &format!(
            "[kernel.vectorAdd]\ngrid=[{}]\nblock=[256]\n[kernel.vectorAdd.args]\nn={n}\n\
             [kernel.vectorAdd.arrays.A]\nlen={n}\ninit=\"random\"\n[kernel.vectorAdd.arrays.B]\nlen={n}\ninit=\"random\"\n\
             [kernel.vectorAdd.arrays.C]\nlen={n}\n",
            n / 256
        ),
    );
    if std::env::args().any(|a| a == "--quick") {
        return;
    }
    let m = 1024;
    bench(
        "matmul naive 1024x1024",
        "__global__ void matMul(float *A, float *B, float *C, int N) {\n\
           int row = blockIdx.y * blockDim.y + threadIdx.y;\n\
           int col = blockIdx.x * blockDim.x + threadIdx.x;\n\
           if (row < N && col < N) {\n\
             float sum = 0.0f;\n\
             for (int k = 0; k < N; k++) { sum += A[row * N + k] * B[k * N + col]; }\n\
             C[row * N + col] = sum;\n\
           }\n}",
        &format!(
            "[kernel.matMul]\ngrid=[{g},{g}]\nblock=[32,32]\n[kernel.matMul.args]\nN={m}\n\
             [kernel.matMul.arrays.A]\nlen={mm}\ninit=\"random\"\n[kernel.matMul.arrays.B]\nlen={mm}\ninit=\"random\"\n\
             [kernel.matMul.arrays.C]\nlen={mm}\n",
            g = m / 32,
            mm = m * m
        ),
    );
    work_units();
}
