//! The rewrite before and after, and the kernels it leaves alone with
//! the exact reason ([`crate::fixture`]).

use super::WarpPerRow;
use crate::fixture::{check_not_applicable, rewrites};

fn show(src: &str, allow: bool) {
    let p = crate::fixture::try_propose_with(&WarpPerRow, src, [256, 1, 1], allow).unwrap();
    for c in &p.candidates { println!("{}\n{}", c.description, copper::cuda::print::function(&c.function)); }
    println!("{:?}", p.skipped);
}

#[test]
fn scratch() {
    show(r#"__global__ void rowsum(const int *M, int *y, int rows, int m) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    int acc = 5;
    for (int i = 1; i < m; ++i) {
        int v = M[row * m + i];
        acc += v * v;
    }
    y[row] = acc;
}
"#, false);
    show(r#"__global__ void rowmax(const float *M, float *y, int rows, int m) {
    int row = threadIdx.x + blockIdx.x * blockDim.x;
    if (row < rows) {
        float mx = M[row * m];
        for (int i = 1; i < m; i++)
            mx = fmaxf(mx, M[row * m + i]);
        y[row] = mx;
    }
}
"#, false);
    let _ = (check_not_applicable, rewrites);
    panic!();
}
