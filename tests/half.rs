//! 16-bit floats end to end (`__half`, `__half2`, `__nv_bfloat16`):
//! hand-computed results of the intrinsics and operators through the
//! simulator (every result rounded to binary16 or bfloat16), their costs
//! (2-byte elements: sectors and bank words), and the diagnostics for what
//! copper does not read.

mod common;

use common::{metric, simulate_source};
use copper::cuda::parse::parse_source;
use copper::ir::lower::lower_kernel;
use copper::ir::{Scalar, Value};
use copper::sim::SimResult;
use copper::source::SourceFile;

/// Simulates kernel `k` of `src` on one block of `threads` with arrays
/// `x` (given values) and `y` (`len` zeros).
fn run(src: &str, threads: u32, x: &[f64], len: usize) -> SimResult {
    let values: Vec<String> = x.iter().map(|v| format!("{v:?}")).collect();
    let params = format!(
        "[kernel.k]\ngrid=[1]\nblock=[{threads}]\n[kernel.k.arrays.x]\nlen={}\ninit=\"values\"\nvalues=[{}]\n[kernel.k.arrays.y]\nlen={len}\n",
        x.len(),
        values.join(", ")
    );
    simulate_source(src, &params).unwrap_or_else(|e| panic!("{e:?}"))
}

/// The final contents of array `name`, as numbers.
fn array(r: &SimResult, name: &str) -> Vec<f64> {
    common::array(r, name)
        .into_iter()
        .map(Value::as_f64)
        .collect()
}

/// `y[j] = EXPR_j` for one thread, `x` of type `xt`, `y` of type `yt`.
fn one_thread(xt: &str, yt: &str, body: &str, x: &[f64], len: usize) -> Vec<f64> {
    let src = format!(
        "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n__global__ void k(const {xt} *x, {yt} *y) {{ {body} }}"
    );
    array(&run(&src, 1, x, len), "y")
}

#[test]
fn half_arithmetic_rounds_every_result() {
    let y = one_thread(
        "__half",
        "__half",
        "y[0] = __hadd(x[0], x[1]); y[1] = x[0] + x[1] + x[2]; y[2] = __hmul(x[3], x[3]); \
         y[3] = __hdiv(x[4], x[5]); y[4] = __hfma(x[0], x[1], x[2]); y[5] = __hneg(x[1]); \
         y[6] = __hsub(x[3], x[0]);",
        &[1.0, 0.000_244_140_625, 0.000_244_140_625, 300.0, 1.0, 3.0],
        7,
    );
    // 1 + 2^-12: below half an ulp of 1 (2^-11): 1.
    assert_eq!(y[0], 1.0);
    // (1 + 2^-12) + 2^-12 in half: each sum rounded, so still 1.
    assert_eq!(y[1], 1.0);
    // 300² = 90000 > 65504: infinity.
    assert_eq!(y[2], f64::INFINITY);
    // 1/3 to 11 bits.
    assert_eq!(y[3], 0.333_251_953_125);
    // fma rounds once: 1·2^-12 + 2^-12 = 2^-11 exactly.
    assert_eq!(y[4], 0.000_488_281_25);
    assert_eq!(y[5], -0.000_244_140_625);
    assert_eq!(y[6], 299.0);
}

#[test]
fn conversions_round_to_nearest_even_with_subnormals_and_overflow() {
    let y = one_thread(
        "float",
        "__half",
        "for (int j = 0; j < 7; j++) y[j] = __float2half(x[j]);",
        &[
            65504.0,
            65520.0,
            5.960_464_477_539_063e-8,
            2.980_232_238_769_531_2e-8,
            -0.1,
            2049.0,
            2051.0,
        ],
        7,
    );
    assert_eq!(
        y,
        [
            65504.0,
            f64::INFINITY,
            5.960_464_477_539_063e-8,
            0.0,
            -0.099_975_585_937_5,
            2048.0,
            2052.0
        ]
    );
    // Half to int: toward zero, and an int to half rounds.
    let y = one_thread(
        "__half",
        "int",
        "y[0] = __half2int_rz(x[0]); y[1] = __half2int_rz(x[1]); \
         y[2] = __half2int_rz(__int2half_rn(4097)); y[3] = (int)x[0]; y[4] = int(x[1]);",
        &[2.75, -2.75],
        5,
    );
    assert_eq!(y, [2.0, -2.0, 4096.0, 2.0, -2.0]);
}

#[test]
fn bfloat16_keeps_8_bits() {
    let y = one_thread(
        "float",
        "__nv_bfloat16",
        "y[0] = __float2bfloat16(x[0]); y[1] = __float2bfloat16(x[1]); \
         y[2] = __hadd(__float2bfloat16(x[2]), __float2bfloat16(x[3]));",
        &[257.0, 3.4e38, 1.0, 0.001],
        3,
    );
    // 3.4e38 is past the largest bfloat16 (2^127 · (2 − 2^-7) ≈ 3.3895e38)
    // by more than half an ulp: infinity. 1 + 0.001 is within half an ulp
    // (2^-8) of 1.
    assert_eq!(y, [256.0, f64::INFINITY, 1.0]);
    let y = one_thread(
        "__nv_bfloat16",
        "float",
        "y[0] = __bfloat162float(x[0]) + 1.0f;",
        &[0.1],
        1,
    );
    assert_eq!(y, [0.10009765625 + 1.0]);
}

#[test]
fn comparisons_math_and_mixed_float_arithmetic() {
    let y = one_thread(
        "__half",
        "float",
        "y[0] = __hlt(x[0], x[1]); y[1] = x[0] >= x[1]; y[2] = __heq(x[0], x[0]); \
         y[3] = __half2float(hsqrt(x[1])); y[4] = __half2float(__hmax(x[0], x[1])); \
         y[5] = __half2float(__habs(x[0])); y[6] = float(x[0]) * 0.5f; \
         y[7] = __low2float(__halves2half2(x[0], x[1])) + __high2float(__halves2half2(x[0], x[1]));",
        &[-1.5, 2.0],
        8,
    );
    assert_eq!(y, [1.0, 0.0, 1.0, 1.414_062_5, 2.0, 1.5, -0.75, 0.5]);
}

#[test]
fn half2_works_per_component() {
    let y = one_thread(
        "__half2",
        "__half2",
        "y[0] = __hadd2(x[0], x[1]); y[1] = __hmul2(x[0], __float2half2_rn(0.5f)); \
         y[2] = __hfma2(x[0], x[1], x[0]); y[3] = __floats2half2_rn(1.0f / 3.0f, 65520.0f); \
         y[4] = __halves2half2(__high2half(x[1]), __low2half(x[1]));",
        &[1.0, 3.0, 1024.0, 0.5],
        5,
    );
    // Components in memory order: .x, .y of each element.
    assert_eq!(
        y,
        [
            1025.0,
            3.5,
            0.5,
            1.5,
            1025.0,
            4.5,
            0.333_251_953_125,
            f64::INFINITY,
            0.5,
            1024.0
        ]
    );
    let y = one_thread(
        "__half2",
        "float2",
        "y[0] = __half22float2(x[0]);",
        &[0.25, -8.0],
        1,
    );
    assert_eq!(y, [0.25, -8.0]);
}

#[test]
fn shuffles_of_half_and_half2() {
    let src = "#include <cuda_fp16.h>\n\
        __global__ void k(const __half *x, __half *y) {\n\
          int lane = threadIdx.x;\n\
          __half v = x[lane];\n\
          for (int o = 16; o > 0; o /= 2) v = __hadd(v, __shfl_xor_sync(0xffffffffu, v, o));\n\
          __half2 p = __halves2half2(x[lane], v);\n\
          p = __shfl_down_sync(0xffffffffu, p, 1, 16);\n\
          y[lane] = v; y[32 + lane] = __low2half(p); y[64 + lane] = __high2half(p);\n\
        }";
    let x: Vec<f64> = (0..32).map(|i| i as f64 * 0.125).collect();
    let y = array(&run(src, 32, &x, 96), "y");
    // The butterfly sum of 0, 0.125, …, 3.875 = 62 is exact in half, in
    // every lane.
    assert!(y[..32].iter().all(|&v| v == 62.0), "{:?}", &y[..32]);
    // The pair shuffled down by one within segments of 16: lane 15 keeps
    // its own.
    assert_eq!(y[32], 0.125);
    assert_eq!(y[32 + 15], 15.0 * 0.125);
    assert_eq!(y[32 + 16], 17.0 * 0.125);
    assert_eq!(y[64], 62.0);
}

#[test]
fn two_byte_elements_in_costs() {
    // 32 consecutive halves: 64 bytes, 2 sectors per access; in shared
    // memory two halves share a bank word, so no conflict.
    let src = "#include <cuda_fp16.h>\n__global__ void k(const __half *x, __half *y) {\n\
          __shared__ __half t[64];\n int i = threadIdx.x;\n\
          t[i] = x[i]; __syncthreads(); y[i] = t[63 - i]; }";
    let x = vec![1.0; 32];
    let r = run(src, 32, &x, 32);
    assert_eq!(metric(&r, "sectors"), 4.0);
    assert_eq!(metric(&r, "conflicts"), 0.0);
    // Stride 2 in halves (4 bytes): one bank word per lane, still free;
    // stride 64 halves (128 bytes): every lane on one bank, 32 words.
    let src = "#include <cuda_fp16.h>\n__global__ void k(const __half *x, __half *y) {\n\
          __shared__ __half t[2048];\n int i = threadIdx.x;\n\
          t[2 * i] = x[i]; t[64 * i] = x[i]; __syncthreads(); y[i] = t[2 * i]; }";
    let r = run(src, 32, &x, 32);
    assert_eq!(metric(&r, "conflicts"), 31.0);
}

#[test]
fn the_ir_types_are_16_bit_floats() {
    let src = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n\
        __global__ void k(half *a, nv_bfloat16 *b, __half2 *c, float s) {\n\
          half h = a[0]; a[1] = h; b[0] = b[1]; c[0] = c[1]; }";
    let parsed = parse_source(SourceFile::new("t.cu", src));
    let k = lower_kernel(&parsed, "k").unwrap_or_else(|d| panic!("{}", d.render()));
    let elems: Vec<Scalar> = k.arrays.iter().map(|a| a.elem).collect();
    assert_eq!(elems, [Scalar::F16, Scalar::BF16, Scalar::F16]);
    assert_eq!(k.arrays[2].layout.size, 4);
    assert_eq!(k.arrays[2].layout.offsets, [0, 2]);
}

#[test]
fn unsupported_half_constructs_get_one_diagnostic() {
    let cases = [
        (
            "__global__ void k(__half *a, __half2 *b) { b[0] = __hadd2(a[0], a[1]); }",
            "`__hadd2` takes `__half2`",
        ),
        (
            "__global__ void k(__half2 *a, float *f) { f[0] = __hadd2(a[0], a[1]); }",
            "`__hadd2` gives a two-component value, used as a scalar",
        ),
        (
            "__global__ void k(__half *a) { a[0] = a[0] << 1; }",
            "operator `<<` on a floating-point operand",
        ),
        (
            "__global__ void k(__half *a) { a[0] = __hadd(a[0]); }",
            "`__hadd` takes 2 argument(s)",
        ),
    ];
    for (body, want) in cases {
        let src = format!("#include <cuda_fp16.h>\n{body}");
        let parsed = parse_source(SourceFile::new("t.cu", &src));
        let e = lower_kernel(&parsed, "k").expect_err(body);
        assert!(e.message.contains(want), "{body}: {}", e.message);
        assert!(e.render().contains("t.cu:2:"), "{}", e.render());
    }
}

#[test]
fn atomic_add_on_half_and_half2() {
    let src = "#include <cuda_fp16.h>\n\
        __global__ void k(const __half2 *x, __half2 *y) {\n\
          atomicAdd(&y[1], x[threadIdx.x]);\n\
        }";
    let x: Vec<f64> = (0..32).flat_map(|i| [i as f64 * 0.125, 1.0]).collect();
    let r = run(src, 32, &x, 2);
    // Lane by lane: 0 + 0.125 + … + 3.875 = 62, and 32 ones; both exact.
    assert_eq!(array(&r, "y"), [0.0, 0.0, 62.0, 32.0]);
    // The loads of x: 128 bytes, 4 sectors; the atomic is one 4-byte
    // access to one element: 1 sector.
    assert_eq!(metric(&r, "sectors"), 4.0 + 1.0);
    // Adding 2048 ones one by one to a half stops at 2048: 2048 + 1 ties
    // to the even 2048.
    let src = "#include <cuda_fp16.h>\n\
        __global__ void k(const __half *x, __half *y) {\n\
          for (int j = 0; j < 80; j++) atomicAdd(y, x[0]);\n\
        }";
    let r = run(src, 32, &[1.0], 1);
    assert_eq!(array(&r, "y"), [2048.0]);
}
