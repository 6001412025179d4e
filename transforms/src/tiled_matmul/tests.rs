//! The tiled matrix multiply on small kernels: every candidate is
//! checked against the original by differential simulation
//! ([`crate::fixture`]).

use crate::fixture::try_propose;
use crate::tiled_matmul::TiledMatmul;

const NAIVE: &str = "__global__ void mm(const float *A, const float *B, float *C, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < n) {
        float sum = 0.0f;
        for (int k = 0; k < n; k++) {
            sum += A[row * n + k] * B[k * n + col];
        }
        C[row * n + col] = sum;
    }
}
";

#[test]
fn the_naive_product_is_tiled() {
    let p = try_propose(&TiledMatmul, NAIVE, [16, 16, 1]).expect("checkable");
    assert_eq!(p.candidates.len(), 1, "{:?}", p.skipped);
    let text = copper::cuda::print::function(&p.candidates[0].function);
    assert!(text.contains("__shared__ float A_tile[16][16];"), "{text}");
    assert_eq!(text.matches("__syncthreads();").count(), 2, "{text}");
}
