//! Hand-computed expectations for the simulator: costs under each metric,
//! transactions for coalesced/strided/misaligned accesses of 1-, 4- and
//! 8-byte elements, bank conflicts, divergence, the errors it detects, and
//! determinism.

mod common;

use common::{array, metric, simulate_source as run};
use copper::cuda::parse::parse_source;
use copper::ir::lower::lower_kernel;
use copper::ir::Value;
use copper::sim::params::ParamFile;
use copper::sim::{inputs_from_spec, simulate, simulate_owned, SimError, SimOptions};
use copper::source::SourceFile;

#[path = "simulator/structs.rs"]
mod structs;

/// A copy kernel `b[stride*t + off] = a[stride*t + off]` over elements of
/// type `ty`, one warp.
fn copy_sectors(ty: &str, stride: u32, off: u32) -> f64 {
    let src = format!(
        "__global__ void k({ty} *a, {ty} *b) {{ int t = threadIdx.x; b[{stride} * t + {off}] = a[{stride} * t + {off}]; }}"
    );
    let len = 32 * stride + off + 1;
    let params = format!(
        "[kernel.k]\ngrid=[1]\nblock=[32]\n[kernel.k.arrays.a]\nlen={len}\ninit=\"random\"\n[kernel.k.arrays.b]\nlen={len}\n"
    );
    let r = run(&src, &params).unwrap();
    metric(&r, "sectors") / 2.0
}

#[test]
fn sectors_follow_stride_alignment_and_element_size() {
    // 4-byte: coalesced 128 B = 4 sectors; misaligned 5; stride 2 → 8; stride 8 → 32.
    assert_eq!(copy_sectors("int", 1, 0), 4.0);
    assert_eq!(copy_sectors("int", 1, 1), 5.0);
    assert_eq!(copy_sectors("float", 2, 0), 8.0);
    assert_eq!(copy_sectors("float", 8, 0), 32.0);
    // 1-byte: 32 B = 1 sector; misaligned by one byte spans 2.
    assert_eq!(copy_sectors("unsigned char", 1, 0), 1.0);
    assert_eq!(copy_sectors("unsigned char", 1, 1), 2.0);
    assert_eq!(copy_sectors("char", 4, 0), 4.0);
    // 8-byte: 256 B = 8 sectors; misaligned 9; stride 4 → 32.
    assert_eq!(copy_sectors("double", 1, 0), 8.0);
    assert_eq!(copy_sectors("double", 1, 1), 9.0);
    assert_eq!(copy_sectors("long", 4, 0), 32.0);
}

fn shared_conflicts(stride: u32) -> f64 {
    let src = format!(
        "__global__ void k(int *out) {{ __shared__ int s[1024]; int t = threadIdx.x; s[{stride} * t] = t; out[t] = s[{stride} * t]; }}"
    );
    let r = run(
        &src,
        "[kernel.k]\ngrid=[1]\nblock=[32]\n[kernel.k.arrays.out]\nlen=32\n",
    )
    .unwrap();
    assert_eq!(array(&r, "out")[5], Value::I(5));
    metric(&r, "conflicts")
}

#[test]
fn cache_hinted_loads_read_and_cost_like_plain_loads() {
    // `__ldg(&a[i])`, `__ldg(a + i)` and `__ldcs(p)`: the value and the
    // sectors of `a[i]` (4 for a coalesced warp of ints, per load).
    let params = "[kernel.k]\ngrid=[1]\nblock=[32]\n[kernel.k.arrays.a]\nlen=64\ninit=\"values\"\n\
                  values=[3, 1, 4, 1, 5]\n[kernel.k.arrays.b]\nlen=32\n";
    let plain = "__global__ void k(const int *a, int *b) { int t = threadIdx.x; \
                 b[t] = a[t] + a[t + 32] + a[t]; }";
    let hinted = "__global__ void k(const int *__restrict__ a, int *b) { int t = threadIdx.x; \
                  const int *p = &a[t]; b[t] = __ldg(&a[t]) + __ldg(a + t + 32) + __ldcs(p); }";
    let (p, h) = (run(plain, params).unwrap(), run(hinted, params).unwrap());
    assert_eq!(array(&p, "b"), array(&h, "b"));
    assert_eq!(metric(&h, "sectors"), metric(&p, "sectors"));
    assert_eq!(
        metric(&h, "sectors"),
        16.0,
        "three 4-sector loads and one 4-sector store"
    );
}

#[test]
fn bank_conflicts_count_n_minus_one_per_access() {
    assert_eq!(shared_conflicts(1), 0.0);
    assert_eq!(shared_conflicts(2), 2.0); // 2-way on the write and the read
    assert_eq!(shared_conflicts(32), 62.0); // 32-way twice
    assert_eq!(shared_conflicts(33), 0.0);
}

#[test]
fn steps_and_wsteps_of_a_tiny_kernel() {
    // a[threadIdx.x] = 1: tid (var 1) + const 1 + gwrite(4 sectors).
    let r = run(
        "__global__ void k(int *a) { a[threadIdx.x] = 1; }",
        "[kernel.k]\ngrid=[1]\nblock=[32]\n[kernel.k.arrays.a]\nlen=32\n",
    )
    .unwrap();
    assert_eq!(metric(&r, "steps"), 1.0 + 1.0 + 4.0);
    assert_eq!(metric(&r, "wsteps"), 1.0 + 1.0 + 20.0);
    assert_eq!(metric(&r, "divwarps"), 0.0);
}

#[test]
fn divergence_costs_both_branches() {
    // if (t % 2): tid var, const, op, if + div; then: a[t] = 1 (var, const, 4 sectors);
    // else: a[t] = 2 (same). steps = 3 + 1 + 6 + 6 = 16 (div costs 0 under steps).
    let r = run(
        "__global__ void k(int *a) { int t = threadIdx.x; if (t % 2) a[t] = 1; else a[t] = 2; }",
        "[kernel.k]\ngrid=[1]\nblock=[32]\n[kernel.k.arrays.a]\nlen=32\n",
    )
    .unwrap();
    // int t = threadIdx.x: var + vwrite = 2.
    assert_eq!(metric(&r, "steps"), 2.0 + 4.0 + 6.0 + 6.0);
    assert_eq!(metric(&r, "divwarps"), 1.0);
    assert_eq!(metric(&r, "wsteps"), 2.0 + 5.0 + 22.0 + 22.0);
    assert_eq!(array(&r, "a")[3], Value::I(1));
    assert_eq!(array(&r, "a")[4], Value::I(2));
}

#[test]
fn c_arithmetic_semantics() {
    let r = run(
        "__global__ void k(int *o, unsigned int *u, float *f) {\n\
           int big = 2147483647; o[0] = big - 1 + 1; o[1] = -7 / 2; o[2] = -7 % 2;\n\
           unsigned int z = 0; u[0] = z - 1; u[1] = (unsigned int)-1 >> 28;\n\
           f[0] = 1.0f / 3.0f; o[3] = (int)-2.7f; o[4] = 'a'; o[5] = 1 << 3 | 1;\n}",
        "[kernel.k]\ngrid=[1]\nblock=[1]\n[kernel.k.arrays.o]\nlen=6\n[kernel.k.arrays.u]\nlen=2\n[kernel.k.arrays.f]\nlen=1\n",
    )
    .unwrap();
    let o = array(&r, "o");
    assert_eq!(
        o,
        [
            Value::I(i32::MAX as i64),
            Value::I(-3),
            Value::I(-1),
            Value::I(-2),
            Value::I(97),
            Value::I(9)
        ]
    );
    assert_eq!(array(&r, "u"), [Value::I(u32::MAX as i64), Value::I(15)]);
    assert_eq!(array(&r, "f"), [Value::F((1.0f32 / 3.0f32) as f64)]);
}

#[test]
fn a_negative_int_bound_of_an_unsigned_counter_is_converted_and_the_counter_wraps() {
    // `i < n` converts `int n = -1000` to 2^32 − 1000: the loop runs from
    // 2^32 − 2000 by 500 until i reaches it (2 iterations), where a signed
    // comparison would run none. A `size_t` counter converts n to
    // 2^64 − 1000, and a start past it ends the loop at once.
    let src = "__global__ void k(int *o, int n) {\n\
               for (unsigned int i = 4294965296u; i < n; i += 500u) { o[0] += 1; }\n\
               for (unsigned int i = 4294967000u; i < n; i += 500u) { o[1] += 1; }\n\
               for (size_t j = 18446744073709550000ull; j < n; j += 100) { o[2] += 1; }\n}";
    let r = run(
        src,
        "[kernel.k]\ngrid=[1]\nblock=[1]\nargs = { n = -1000 }\n[kernel.k.arrays.o]\nlen=3\ninit=\"zero\"\n",
    )
    .unwrap();
    // The third loop: 2^64 − 1616 → … by 100 up to 2^64 − 1000: 7 iterations.
    assert_eq!(array(&r, "o"), [Value::I(2), Value::I(0), Value::I(7)]);
}

#[test]
fn signed_overflow_is_reported_as_undefined_behaviour() {
    // `int` arithmetic past 2^31 − 1 is undefined in C: the simulator
    // stops with an error naming the thread, as it does for an
    // out-of-bounds access, so no cost is ever measured on such a run.
    for expr in ["big + 1", "-big - 2", "big * 2", "(long long)big * big * 4"] {
        let src = format!(
            "__global__ void k(long long *o, int n) {{ int big = 2147483647; if (threadIdx.x == 5) o[0] = {expr}; }}"
        );
        let err = run(
            &src,
            "[kernel.k]\ngrid=[1]\nblock=[32]\n[kernel.k.args]\nn=1\n[kernel.k.arrays.o]\nlen=1\n",
        )
        .expect_err(expr);
        assert!(
            err.message.contains("signed integer overflow"),
            "{expr}: {err:?}"
        );
        assert_eq!(err.thread, [5, 0, 0], "{expr}");
    }
    // Unsigned arithmetic wraps, as C defines.
    let r = run(
        "__global__ void k(unsigned int *o) { unsigned int big = 4294967295u; o[0] = big + 2; }",
        "[kernel.k]\ngrid=[1]\nblock=[1]\n[kernel.k.arrays.o]\nlen=1\n",
    )
    .unwrap();
    assert_eq!(array(&r, "o"), [Value::I(1)]);
}

#[test]
fn control_flow_break_continue_switch_return_device_calls() {
    let src = "__device__ int clampi(int x, int hi) { if (x > hi) return hi; return x; }\n\
        __global__ void k(int *o) {\n\
          int t = threadIdx.x; int acc = 0;\n\
          if (t >= 20) return;\n\
          for (int i = 0; i < 10; i++) { if (i == t % 3) continue; if (i > 6) break; acc += i; }\n\
          switch (t % 4) { case 0: acc += 100; case 1: acc += 10; break; case 2: acc = -acc; break; default: acc *= 2; }\n\
          int j = 0; do { j += 3; } while (j < t);\n\
          o[t] = clampi(acc, 50) * 1000 + j;\n}";
    let r = run(
        src,
        "[kernel.k]\ngrid=[1]\nblock=[32]\n[kernel.k.arrays.o]\nlen=32\ninit=\"const\"\nvalue=-9\n",
    )
    .unwrap();
    let o = array(&r, "o");
    for t in 0..32i64 {
        let expected = if t >= 20 {
            -9
        } else {
            let mut acc = 0i64;
            for i in 0..10 {
                if i == t % 3 {
                    continue;
                }
                if i > 6 {
                    break;
                }
                acc += i;
            }
            match t % 4 {
                0 => acc += 110,
                1 => acc += 10,
                2 => acc = -acc,
                _ => acc *= 2,
            }
            let mut j = 0;
            loop {
                j += 3;
                if j >= t {
                    break;
                }
            }
            acc.min(50) * 1000 + j
        };
        assert_eq!(o[t as usize], Value::I(expected), "thread {t}");
    }
}

#[test]
fn reduction_with_barriers_in_a_loop() {
    let src = "__global__ void reduce(int *in, int *out, unsigned int n) {\n\
        __shared__ int s[256]; unsigned int t = threadIdx.x; unsigned int i = blockIdx.x * blockDim.x + t;\n\
        s[t] = i < n ? in[i] : 0; __syncthreads();\n\
        for (unsigned int k = blockDim.x / 2; k > 0; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }\n\
        if (t == 0) out[blockIdx.x] = s[0];\n}";
    let r = run(
        src,
        "[kernel.reduce]\ngrid=[3]\nblock=[256]\n[kernel.reduce.args]\nn=700\n[kernel.reduce.arrays.in]\nlen=768\ninit=\"const\"\nvalue=2\n[kernel.reduce.arrays.out]\nlen=3\n",
    )
    .unwrap();
    assert_eq!(
        array(&r, "out"),
        [Value::I(512), Value::I(512), Value::I(2 * (700 - 512))]
    );
    // Span: every warp waits at each of the 9 barriers for the slowest.
    let steps = r.metrics.iter().find(|m| m.metric == "steps").unwrap();
    assert!(steps.max_block_span >= steps.max_warp);
    assert!(steps.max_block_work >= 8.0 * steps.max_block_span / 8.0);
}

fn err(src: &str, params: &str) -> String {
    match run(src, params) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.message,
    }
}

#[test]
fn runtime_errors_are_located() {
    let p = "[kernel.k]\ngrid=[2]\nblock=[32]\n[kernel.k.arrays.a]\nlen=40\n";
    let e = run(
        "__global__ void k(int *a) {\n a[blockIdx.x * 32 + threadIdx.x] = 1; }",
        p,
    )
    .unwrap_err();
    assert!(
        e.message.contains("out-of-bounds access `a[40]`"),
        "{}",
        e.message
    );
    assert_eq!((e.block, e.thread), ([1, 0, 0], [8, 0, 0]));
    assert!(err(
        "__global__ void k(int *a) { a[threadIdx.x] = 5 / (int)(threadIdx.x % 3); }",
        p
    )
    .contains("division by zero"));
    assert!(err(
        "__global__ void k(int *a) { if (threadIdx.x < 5) __syncthreads(); }",
        p
    )
    .contains("only part of the block"));
    assert!(err("__global__ void k(int *a) { a[0] = threadIdx.x; }", p).contains("data race"));
    let spin = "__global__ void k(int *a) { int i = 0; while (a[0] == 0) { i++; } }";
    let parsed = parse_source(SourceFile::new("t.cu", spin));
    let kernel = lower_kernel(&parsed, "k").unwrap();
    let pf = ParamFile::from_toml(p).unwrap();
    let inputs = inputs_from_spec(&kernel, &pf.kernel["k"]).unwrap();
    let opts = SimOptions {
        step_budget: 10_000,
        ..SimOptions::default()
    };
    assert!(simulate(&kernel, &inputs, &opts)
        .unwrap_err()
        .message
        .contains("step budget"));
}

#[test]
fn results_do_not_depend_on_thread_count() {
    let src = "__global__ void k(float *a, float *b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] = a[i] * 2.0f + (i % 7 == 0 ? 1.0f : 0.0f); }";
    let params = "[kernel.k]\ngrid=[64]\nblock=[96]\n[kernel.k.args]\nn=6000\n[kernel.k.arrays.a]\nlen=6144\ninit=\"random\"\nseed=4\nmin=-1\nmax=1\n[kernel.k.arrays.b]\nlen=6144\n";
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| run(src, params).unwrap());
    let many = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap()
        .install(|| run(src, params).unwrap());
    assert_eq!(one, many);
}

/// A block that reads what the next block writes sees the value it had
/// before the launch, as when blocks run in launch order, on every run and
/// thread count: the value, and the cost of the loop it decides, no longer
/// depend on which parallel block happens to run first.
#[test]
fn blocks_reading_what_other_blocks_write_run_in_launch_order() {
    let src = "__global__ void k(int *a, int *work, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; int next = (i + blockDim.x) % n; int v = a[next]; int s = 0; for (int r = 0; r < v; r++) s += r; a[i] = v + 100; work[i] = s; }";
    let params = "[kernel.k]\ngrid=[64]\nblock=[32]\n[kernel.k.args]\nn=2048\n[kernel.k.arrays.a]\nlen=2048\ninit=\"random\"\nseed=3\nmin=0\nmax=3\n[kernel.k.arrays.work]\nlen=2048\n";
    let on = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| run(src, params).unwrap())
    };
    let first = on(1);
    let a = array(&first, "a");
    // In launch order every block but the last reads its successor's
    // value from before the launch (at most 3), and the last reads block
    // 0's, already raised by 100.
    assert!(a[..2048 - 32]
        .iter()
        .all(|v| v.as_i64() >= 100 && v.as_i64() <= 103));
    assert!(a[2048 - 32..].iter().all(|v| v.as_i64() >= 200));
    for run in 0..20 {
        assert!(
            on(4) == first,
            "run {run} on 4 threads differs from launch order"
        );
    }
}

/// The launch-wide work limit stops a launch at the same block with the
/// same message whatever the thread count, and an expired wall clock is
/// reported as the safety net, not as the work limit.
#[test]
fn the_work_limit_stops_a_launch_at_the_same_block_on_any_thread_count() {
    let src = "__global__ void k(float *a, float *b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] = a[i] * 2.0f; }";
    let params = "[kernel.k]\ngrid=[300]\nblock=[64]\n[kernel.k.args]\nn=19200\n[kernel.k.arrays.a]\nlen=19200\ninit=\"random\"\n[kernel.k.arrays.b]\nlen=19200\n";
    let parsed = parse_source(SourceFile::new("t.cu", src));
    let kernel = lower_kernel(&parsed, "k").unwrap();
    let spec = &ParamFile::from_toml(params).unwrap().kernel["k"];
    let limited = |threads: usize, opts: &SimOptions| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| simulate_owned(&kernel, inputs_from_spec(&kernel, spec).unwrap(), opts))
    };
    let whole = limited(4, &SimOptions::default()).unwrap();
    // Cut well inside the grid: past the first chunk of blocks.
    let opts = SimOptions {
        max_steps: Some(whole.work / 2),
        ..SimOptions::default()
    };
    let one = limited(1, &opts).unwrap_err();
    let many = limited(4, &opts).unwrap_err();
    assert_eq!(one, many);
    assert!(
        one.message.starts_with(copper::sim::WORK_LIMIT),
        "{}",
        one.message
    );
    assert!(one.block[0] > 0 && one.block[0] < 299, "{:?}", one.block);
    // A limit the launch stays within changes nothing.
    let opts = SimOptions {
        max_steps: Some(whole.work),
        ..SimOptions::default()
    };
    assert_eq!(limited(4, &opts).unwrap(), whole);
    // The wall clock, when it fires, says so.
    let opts = SimOptions {
        deadline: Some(std::time::Instant::now()),
        ..SimOptions::default()
    };
    std::thread::sleep(std::time::Duration::from_millis(5));
    let late = limited(4, &opts).unwrap_err();
    assert_eq!(late.message, copper::sim::WALL_CLOCK);
}

/// The addSub kernels of RaCUDA Fig. 1 on the paper's shapes.
#[test]
fn add_sub_kernels_follow_the_papers_analysis() {
    let sub1 = "__global__ void addSub1(int *A, int *B, int w, int h) {\n\
        for (int i = 0; i < w; i++) { int j = blockIdx.x * blockDim.x + threadIdx.x;\n\
        B[2 * j * w + i] += A[i]; B[(2 * j + 1) * w + i] -= A[i]; } }";
    let sub2 = "__global__ void addSub2(int *A, int *B, int w, int h) {\n\
        int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
        for (int j = 0; j < h; j += 2) { B[j * w + i] += A[i]; B[(j + 1) * w + i] -= A[i]; } }";
    let (w, h) = (256, 64);
    let p = |k: &str, block: u32| {
        format!("[kernel.{k}]\ngrid=[1]\nblock=[{block}]\n[kernel.{k}.args]\nw={w}\nh={h}\n[kernel.{k}.arrays.A]\nlen={w}\ninit=\"random\"\n[kernel.{k}.arrays.B]\nlen={}\n", w * h)
    };
    let r1 = run(sub1, &p("addSub1", h / 2)).unwrap();
    let r2 = run(sub2, &p("addSub2", w)).unwrap();
    // addSub1: each B access is 32 rows apart: 32 sectors; A[i] is uniform: 1.
    // per iteration: 2 reads + 2 writes of B (32 each) + 2 reads of A (1 each) = 130; w iterations.
    assert_eq!(metric(&r1, "sectors"), 130.0 * w as f64);
    // addSub2: B accesses coalesced along a row: 4 sectors; A[i] coalesced: 4.
    // per iteration: 4 B accesses × 4 + 2 A reads × 4 = 24; h/2 iterations.
    assert_eq!(metric(&r2, "sectors"), 24.0 * (h / 2) as f64);
    assert_eq!(metric(&r1, "divwarps"), 0.0);
    assert_eq!(metric(&r2, "divwarps"), 0.0);
}

/// Every `testdata/` kernel with a launch in its parameter file simulates
/// without a runtime error, and twice gives identical results.
#[test]
fn every_testdata_launch_simulates_cleanly() {
    use std::path::Path;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut launches = 0;
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    for cu in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
    {
        let toml = cu.with_extension("toml");
        let Ok(text) = std::fs::read_to_string(&toml) else {
            continue;
        };
        let params =
            ParamFile::from_toml(&text).unwrap_or_else(|e| panic!("{}: {e}", toml.display()));
        let parsed = copper::cuda::parse::parse_path(cu).unwrap();
        for (name, spec) in &params.kernel {
            let kernel = lower_kernel(&parsed, name).unwrap_or_else(|d| panic!("{}", d.render()));
            let inputs = inputs_from_spec(&kernel, spec)
                .unwrap_or_else(|e| panic!("{}: {e}", toml.display()));
            let a = simulate_owned(&kernel, inputs.clone(), &SimOptions::default())
                .unwrap_or_else(|e| panic!("{} `{name}`: {}", cu.display(), e.message));
            let b = simulate_owned(&kernel, inputs, &SimOptions::default()).unwrap();
            assert_eq!(a, b, "{name} is not deterministic");
            launches += 1;
        }
    }
    assert!(launches >= 30, "only {launches} launches");
}

/// One warp of 32 threads running `body` over `int *out` (32 elements),
/// `x = threadIdx.x`.
fn warp_run(body: &str) -> Result<Vec<i64>, SimError> {
    let src = format!(
        "__global__ void k(int *out) {{ int x = threadIdx.x; int lane = threadIdx.x; {body} }}"
    );
    let params = "[kernel.k]\ngrid=[1]\nblock=[32]\n[kernel.k.arrays.out]\nlen=32\n";
    run(&src, params).map(|r| array(&r, "out").iter().map(|v| v.as_i64()).collect())
}

#[test]
fn shuffle_down_sums_a_warp_into_lane_zero() {
    let out = warp_run(
        "int v = x + 1; for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o); out[lane] = v;",
    )
    .unwrap();
    // Lane 0 holds 1 + 2 + … + 32; lane 31 only ever adds its own value
    // (its sources are past the end, so it reads itself): 32 · 2^5.
    assert_eq!(out[0], 528);
    assert_eq!(out[31], 32 * 32);
    // Every lane, computed the long way.
    let mut v: Vec<i64> = (1..=32).collect();
    for o in [16, 8, 4, 2, 1] {
        let before = v.clone();
        for l in 0..32 {
            v[l] += if l + o < 32 { before[l + o] } else { before[l] };
        }
    }
    assert_eq!(out, v);
}

#[test]
fn shuffles_respect_the_width() {
    let out = warp_run("out[lane] = __shfl_down_sync(0xffffffff, x, 1, 16);").unwrap();
    assert_eq!(out[14], 15);
    assert_eq!(out[15], 15, "the last lane of a segment keeps its value");
    assert_eq!(out[16], 17);
    let out = warp_run("out[lane] = __shfl_sync(0xffffffff, x * 10, 3, 8);").unwrap();
    assert_eq!(
        out[0..16].to_vec(),
        [30, 30, 30, 30, 30, 30, 30, 30, 110, 110, 110, 110, 110, 110, 110, 110]
    );
    let out = warp_run("out[lane] = __shfl_up_sync(0xffffffff, x, 2, 16);").unwrap();
    assert_eq!(out[16..20].to_vec(), [16, 17, 16, 17]);
    let out = warp_run("out[lane] = __shfl_xor_sync(0xffffffff, x, 3);").unwrap();
    assert_eq!(out[0..4].to_vec(), [3, 2, 1, 0]);
}

#[test]
fn a_shuffle_reading_an_inactive_lane_is_an_error() {
    // Odd lanes read their left neighbour, which is not in the branch.
    let e = warp_run("if (lane % 2 == 1) { out[lane] = __shfl_up_sync(0xffffffff, x, 1); }")
        .unwrap_err();
    assert!(
        e.message.contains("reads lane 0, which is not running it"),
        "{}",
        e.message
    );
    // Reading a lane that is running is fine, even in a branch.
    let out =
        warp_run("if (lane < 16) { out[lane] = __shfl_down_sync(0xffff, x, 8, 16); }").unwrap();
    assert_eq!(out[0..10].to_vec(), [8, 9, 10, 11, 12, 13, 14, 15, 8, 9]);
}

#[test]
fn votes_are_the_same_in_every_lane() {
    let out = warp_run("out[lane] = __ballot_sync(0xffffffff, x % 4 == 0);").unwrap();
    assert!(out.iter().all(|&v| v == 0x1111_1111));
    let out = warp_run(
        "out[lane] = __any_sync(0xffffffff, x == 7) * 10 + __all_sync(0xffffffff, x < 32);",
    )
    .unwrap();
    assert!(out.iter().all(|&v| v == 11));
    let out = warp_run("out[lane] = __all_sync(0xffffffff, x < 31);").unwrap();
    assert!(out.iter().all(|&v| v == 0));
    // Only the lanes running the call take part.
    let out = warp_run("if (lane >= 28) { out[lane] = __activemask(); out[lane - 28] = __ballot_sync(0xffffffff, 1); }").unwrap();
    // (stored in an `int`)
    assert_eq!(out[28], 0xF000_0000u32 as i32 as i64);
    assert_eq!(out[0], 0xF000_0000u32 as i32 as i64);
}

#[test]
fn library_constants_need_no_header() {
    let src = "__global__ void k(float *f, int *i) { int t = threadIdx.x; \
               i[t] = t == 0 ? INT_MAX : INT_MIN + t; f[t] = t == 0 ? FLT_MAX : (float)M_PI; }";
    let params =
        "[kernel.k]\ngrid=[1]\nblock=[2]\n[kernel.k.arrays.f]\nlen=2\n[kernel.k.arrays.i]\nlen=2\n";
    let r = run(src, params).unwrap();
    assert_eq!(
        array(&r, "i"),
        vec![Value::I(i32::MAX as i64), Value::I(i32::MIN as i64 + 1)]
    );
    assert_eq!(
        array(&r, "f"),
        vec![
            Value::F(f32::MAX as f64),
            Value::F(std::f32::consts::PI as f64)
        ]
    );
}

#[test]
fn a_launch_of_many_short_blocks_stops_at_its_wall_clock_safety_net() {
    // Each warp runs a handful of steps, far fewer than a warp runs
    // between its own looks at the clock: the launch stops between blocks.
    let file = parse_source(SourceFile::new(
        "k.cu",
        "__global__ void k(float *a) { a[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f; }",
    ));
    let kernel = lower_kernel(&file, "k").unwrap();
    let params = ParamFile::from_toml(
        "[kernel.k]\ngrid=[65536]\nblock=[256]\n[kernel.k.arrays.a]\nlen=16777216\n",
    )
    .unwrap();
    let inputs = inputs_from_spec(&kernel, &params.kernel["k"]).unwrap();
    let opts = SimOptions {
        deadline: Some(std::time::Instant::now()),
        ..SimOptions::default()
    };
    let started = std::time::Instant::now();
    let err = simulate_owned(&kernel, inputs, &opts).unwrap_err();
    assert_eq!(err.message, copper::sim::WALL_CLOCK);
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
}

/// Shared memory starts undefined: in the checks' mode (races detected) a
/// read of an element no thread of the block wrote is an error naming the
/// element, the thread and the line; elements written first, by any
/// thread, read cleanly. Without race detection the read sees zeros.
#[test]
fn a_read_of_shared_memory_no_thread_wrote_is_an_error_when_checking() {
    let src = "__global__ void k(int *out) {\n    __shared__ int s[64];\n    s[threadIdx.x] = threadIdx.x;\n    __syncthreads();\n    out[threadIdx.x] = s[(threadIdx.x + 32) % 64];\n}\n";
    let parsed = parse_source(SourceFile::new("t.cu", src));
    let kernel = lower_kernel(&parsed, "k").unwrap();
    let checking = SimOptions {
        detect_races: true,
        ..SimOptions::default()
    };
    let launch = |threads: u32| {
        let p = format!("[kernel.k]\ngrid=[1]\nblock=[{threads}]\n[kernel.k.arrays.out]\nlen=64\n");
        let pf = ParamFile::from_toml(&p).unwrap();
        inputs_from_spec(&kernel, &pf.kernel["k"]).unwrap()
    };
    let e = simulate(&kernel, &launch(32), &checking).unwrap_err();
    assert_eq!(
        e.message,
        "thread (0, 0, 0) of block (0, 0, 0) reads `s[32]`, which no thread of the block wrote before (shared memory starts undefined)"
    );
    assert_eq!(parsed.source.line_col(e.span.start).0, 5);
    assert!(simulate(&kernel, &launch(64), &checking).is_ok());
    assert!(simulate(&kernel, &launch(32), &SimOptions::default()).is_ok());
}

/// A loop of `n` iterations per thread, in `grid` blocks of 64 threads.
fn spinning(grid: u64, n: u64) -> (copper::ir::Kernel, copper::sim::Inputs) {
    let src = format!("__global__ void k(float *a) {{ int i = blockIdx.x * blockDim.x + threadIdx.x; float s = 0; for (int j = 0; j < {n}; j++) s += a[i] * j; a[i] = s; }}");
    let file = parse_source(SourceFile::new("t.cu", &src));
    let kernel = lower_kernel(&file, "k").unwrap();
    let p = format!(
        "[kernel.k]\ngrid=[{grid}]\nblock=[64]\n[kernel.k.arrays.a]\nlen={}\ninit=\"random\"\n",
        64 * grid
    );
    let params = ParamFile::from_toml(&p).unwrap();
    let inputs = inputs_from_spec(&kernel, &params.kernel["k"]).unwrap();
    (kernel, inputs)
}

/// Work units are instructions plus one per two lanes of every global or
/// shared access ([`copper::sim::exec::ACCESS_LANES_PER_UNIT`]), so that a
/// memory-heavy kernel uses up a work limit about as fast, in time, as
/// arithmetic; local arrays and arithmetic add nothing beyond their
/// instructions.
#[test]
fn work_units_charge_global_and_shared_accesses_per_lane() {
    let run = |body: &str, threads: u64| {
        let src = format!("__global__ void k(float *a) {{ __shared__ float t[64]; float loc[4]; int i = threadIdx.x; {body} }}");
        let file = parse_source(SourceFile::new("t.cu", &src));
        let kernel = lower_kernel(&file, "k").unwrap();
        let p = format!(
            "[kernel.k]\ngrid=[1]\nblock=[{threads}]\n[kernel.k.arrays.a]\nlen=64\ninit=\"random\"\n"
        );
        let params = ParamFile::from_toml(&p).unwrap();
        let inputs = inputs_from_spec(&kernel, &params.kernel["k"]).unwrap();
        simulate(&kernel, &inputs, &SimOptions::default()).unwrap()
    };
    let lanes = copper::sim::exec::ACCESS_LANES_PER_UNIT;
    // Arithmetic and a local array: units are the instructions.
    let plain = run(
        "float x = i * 2.0f; loc[i % 4] = x; x = loc[i % 4] + 1.0f;",
        64,
    );
    assert_eq!(plain.work, plain.instructions);
    // One global load, one global store and one shared store by 64 threads
    // (two full warps): 3 accesses of 32 lanes per warp.
    let memory = run("float x = a[i]; t[i] = x; a[i] = x + 1.0f;", 64);
    assert_eq!(memory.work, memory.instructions + 2 * 3 * 32 / lanes);
    // A partial warp of 5 lanes is charged by its active lanes, rounded up.
    let partial = run("a[i] = 1.0f;", 5);
    assert_eq!(partial.work, partial.instructions + 5u64.div_ceil(lanes));
}

/// Launches sharing one allowance ([`copper::sim::work::Work`]) are
/// charged their array values and instructions; once it is spent the
/// next launch stops with the work-limit error, at the same block every
/// run, and a block alone past what is left is stopped inside, not after
/// running to its per-warp budget.
#[test]
fn launches_sharing_an_allowance_stop_once_it_is_spent() {
    use copper::sim::work::Work;
    use std::sync::Arc;
    let (kernel, inputs) = spinning(8, 1000);
    let alone = simulate(&kernel, &inputs, &SimOptions::default()).unwrap();
    let values = 8 * 64;
    let work = Arc::new(Work::new(alone.work + values + 10));
    let opts = SimOptions {
        work: Some(Arc::clone(&work)),
        ..SimOptions::default()
    };
    assert!(simulate(&kernel, &inputs, &opts).is_ok());
    assert_eq!(work.used(), alone.work + values);
    let second = simulate(&kernel, &inputs, &opts).unwrap_err();
    assert!(
        second.message.starts_with(copper::sim::WORK_LIMIT),
        "{}",
        second.message
    );
    assert!(work.spent());
    // One block of 2 warps, each of 10⁶ iterations, under a launch limit
    // of 1000 instructions: stopped inside the first block.
    let (kernel, inputs) = spinning(1, 1_000_000);
    let limited = SimOptions {
        max_steps: Some(1000),
        ..SimOptions::default()
    };
    let started = std::time::Instant::now();
    let e = simulate(&kernel, &inputs, &limited).unwrap_err();
    assert_eq!(
        e.message,
        "the simulation stopped after 1000 work units (instructions and memory accesses, all warps together), its work limit"
    );
    assert_eq!(e.block, [0, 0, 0]);
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
    let again = simulate(&kernel, &inputs, &limited).unwrap_err();
    assert_eq!(again, e);
}
