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
fn tiles_that_do_not_fit_beside_a_launch_s_dynamic_shared_memory_are_refused() {
    let launched = |bytes: &str| {
        format!("{NAIVE}void host(const float *A, const float *B, float *C, int n) {{ mm<<<dim3(8, 8), dim3(16, 16), {bytes}>>>(A, B, C, n); }}\n")
    };
    // Two 16×16 tiles of floats take 2048 bytes; 47 KiB leave 1 KiB.
    let p = try_propose(&TiledMatmul, &launched("47 * 1024"), [16, 16, 1]).expect("checkable");
    assert!(p.candidates.is_empty());
    let why = "the tiling takes 2048 bytes, and with the kernel's 0 bytes of shared memory and the 48128 bytes of dynamic shared memory the launch at line 12 asks for more than 49152";
    assert!(
        p.skipped.iter().any(|s| s.reason.ends_with(why)),
        "{:#?}",
        p.skipped
    );
    let p = try_propose(&TiledMatmul, &launched("1024"), [16, 16, 1]).expect("checkable");
    assert_eq!(p.candidates.len(), 1, "{:?}", p.skipped);
}

#[test]
fn the_naive_product_is_tiled() {
    let p = try_propose(&TiledMatmul, NAIVE, [16, 16, 1]).expect("checkable");
    assert_eq!(p.candidates.len(), 1, "{:?}", p.skipped);
    let text = copper::cuda::print::function(&p.candidates[0].function);
    assert!(text.contains("__shared__ float A_tile[16][16];"), "{text}");
    assert_eq!(text.matches("__syncthreads();").count(), 2, "{text}");
}
