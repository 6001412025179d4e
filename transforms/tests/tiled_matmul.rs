//! The tiled matrix multiply on kernels written the way students write
//! them (`testdata/tiling/`, and variants inline): each candidate is
//! checked against the original by differential simulation before these
//! tests see it, and the kernels it must leave alone say why.

mod common;

use common::try_propose;
use copper::cuda::print;
use copper_transforms::tiled_matmul::TiledMatmul;
use copper_transforms::Proposals;

fn propose(src: &str, block: [u64; 3]) -> Proposals {
    try_propose(&TiledMatmul, src, block).expect("checkable")
}

/// The one candidate's kernel text and description on 16×16 blocks.
fn tiled(src: &str) -> (String, String) {
    let p = propose(src, [16, 16, 1]);
    assert_eq!(p.candidates.len(), 1, "{:#?}", p.skipped);
    let c = &p.candidates[0];
    (print::function(&c.function), c.description.clone())
}

/// No candidate on `block`, for a reason containing `reason`.
fn refused(src: &str, block: [u64; 3], reason: &str) {
    let p = propose(src, block);
    assert!(p.candidates.is_empty(), "{}", p.candidates[0].description);
    let why: Vec<&str> = p.skipped.iter().map(|s| s.reason.as_str()).collect();
    assert!(
        why.iter().any(|w| w.contains(reason)),
        "expected `{reason}` in {why:#?}"
    );
}

#[test]
fn separate_m_n_k_with_host_code() {
    let (text, desc) = tiled(include_str!("../../testdata/tiling/matmul_mnk.cu"));
    assert!(
        text.contains("__shared__ float A_tile[TILE][TILE];"),
        "{text}"
    );
    assert!(
        text.contains("__shared__ float B_tile[TILE][TILE];"),
        "{text}"
    );
    assert!(text.contains("for (int t = 0; t < K; t += TILE)"), "{text}");
    // A row's tile is loaded when the block's first column is inside the
    // matrix, B's when its first row is: exactly what the original reads.
    assert!(
        text.contains("int col0 = blockIdx.x * TILE;")
            && text.contains("if (row < M && col0 < N && k < K)"),
        "{text}"
    );
    assert!(text.contains("if (row0 < M && col < N && k < K)"), "{text}");
    assert!(
        text.contains("sum += A_tile[threadIdx.y][kk] * B_tile[kk][threadIdx.x];"),
        "{text}"
    );
    assert_eq!(text.matches("__syncthreads();").count(), 2, "{text}");
    // The launch passes separate allocations: no promise needed.
    assert!(!desc.contains("__restrict__"), "{desc}");
}

#[test]
fn square_doubles_without_host_code_promise_no_overlap() {
    let (text, desc) = tiled(include_str!("../../testdata/tiling/matmul_width.cu"));
    assert!(
        text.contains("__shared__ double Md_tile[TILE_WIDTH][TILE_WIDTH];"),
        "{text}"
    );
    assert!(text.contains("double *__restrict__ Pd"), "{text}");
    assert!(
        desc.contains("callers must pass arrays that do not overlap"),
        "{desc}"
    );
}

#[test]
fn integers_accumulated_straight_into_c() {
    let (text, _) = tiled(include_str!("../../testdata/tiling/imatmul_acc.cu"));
    assert!(text.contains("__shared__ int a_tile[16][16];"), "{text}");
    assert!(
        text.contains("c[i * n + j] += a_tile[threadIdx.y][kk] * b_tile[kk][threadIdx.x];"),
        "{text}"
    );
}

/// The textbook's first kernel: no guard, the block's side from a macro.
#[test]
fn unguarded_kernel() {
    let (text, _) = tiled(
        "#define TW 16
__global__ void mm(float *Md, float *Nd, float *Pd, int Width) {
\tint Row = blockIdx.y * TW + threadIdx.y;
\tint Col = blockIdx.x * TW + threadIdx.x;
\tfloat Pvalue = 0;
\tfor (int k = 0; k < Width; ++k)
\t\tPvalue += Md[Row * Width + k] * Nd[k * Width + Col];
\tPd[Row * Width + Col] = Pvalue;
}
",
    );
    assert!(
        text.contains("if (k < Width) {\n                Md_tile[threadIdx.y][threadIdx.x]"),
        "{text}"
    );
    assert!(text.contains("Pd[Row * Width + Col] = Pvalue;"), "{text}");
}

/// B stored by columns: its index depends on the column and the counter
/// only, so it is a column-side tile still.
#[test]
fn column_major_b() {
    let (text, _) = tiled(
        "__global__ void mm(const float *A, const float *B, float *C, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < n) {
        float s = 0.0f;
        for (int k = 0; k < n; k++)
            s += A[row * n + k] * B[col * n + k];
        C[row * n + col] = s;
    }
}
",
    );
    assert!(
        text.contains("B_tile[threadIdx.y][threadIdx.x] = B[col * n + k];"),
        "{text}"
    );
}

const NAIVE: &str = "__global__ void mm(const float *A, const float *B, float *C, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < n) {
        float sum = 0.0f;
        for (int k = 0; k < n; k++)
            sum += A[row * n + k] * B[k * n + col];
        C[row * n + col] = sum;
    }
}
";

#[test]
fn rectangular_blocks_are_refused() {
    refused(
        NAIVE,
        [32, 8, 1],
        "the block (32×8×1) is not square and flat",
    );
}

#[test]
fn a_guard_mixing_row_and_column_is_refused() {
    let src = NAIVE.replace("if (row < n && col < n)", "if (row + col < n)");
    refused(
        &src,
        [16, 16, 1],
        "depends on both `threadIdx.x` and `threadIdx.y`",
    );
}

#[test]
fn a_guard_that_is_not_a_prefix_is_refused() {
    let src = NAIVE.replace("if (row < n && col < n)", "if (row < n && col > 3)");
    refused(&src, [16, 16, 1], "is not `index < bound`");
}

#[test]
fn an_index_of_both_thread_indices_is_not_tiled() {
    let src = NAIVE
        .replace("B[k * n + col]", "B[k * n + col + row]")
        .replace("A[row * n + k]", "A[row * n + col + k]");
    refused(&src, [16, 16, 1], "no load in the loop body reads");
}

#[test]
fn a_thread_dependent_bound_is_refused() {
    let src = NAIVE.replace("k < n;", "k < row;");
    refused(&src, [16, 16, 1], "the loop bound `row` is not the same");
}

#[test]
fn an_early_exit_in_the_loop_is_refused() {
    let src = NAIVE.replace(
        "sum += A[row * n + k] * B[k * n + col];",
        "{ if (sum > 100.0f) break; sum += A[row * n + k] * B[k * n + col]; }",
    );
    refused(&src, [16, 16, 1], "the loop body may `break`");
}

/// A bound that divides by a parameter would be evaluated by threads the
/// guard kept out of the loop (a block past the matrix, `d == 0` there).
#[test]
fn a_bound_dividing_by_a_variable_is_refused() {
    let src = NAIVE
        .replace("int n)", "int n, int d)")
        .replace("k < n;", "k < n / d;");
    refused(&src, [16, 16, 1], "divides by a variable");
}
