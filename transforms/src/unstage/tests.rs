//! Removing needless staging on small kernels: every candidate is checked
//! against the original by differential simulation ([`crate::fixture`]).

use crate::fixture::{check, check_not_applicable};
use crate::unstage::Unstage;

#[test]
fn a_per_thread_buffer_becomes_a_register_and_its_barrier_goes() {
    let before = "__global__ void k(const float *in, float *out, int n) {
\t__shared__ float buf[256];
\tint i = blockIdx.x * blockDim.x + threadIdx.x;
\tbuf[threadIdx.x] = i < n ? in[i] : 0.0f;	// stage it
\t__syncthreads();
\tif (i < n)
\t\tout[i] = buf[threadIdx.x] * 2.0f + buf[threadIdx.x];
}
";
    let after = "__global__ void k(const float *in, float *out, int n) {
\tint i = blockIdx.x * blockDim.x + threadIdx.x;
\tfloat buf_v = i < n ? in[i] : 0.0f;
\tif (i < n)
\t\tout[i] = buf_v * 2.0f + buf_v;
}
";
    let desc = check(&Unstage, [256, 1, 1], before, after);
    assert!(desc.contains("the barrier after the write"), "{desc}");
}

#[test]
fn a_2d_tile_of_own_elements_keeps_a_barrier_another_array_needs() {
    let before = "__global__ void k(const int *in, int *out, int w) {
    __shared__ int t[16][16];
    __shared__ int other[16];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int x = blockIdx.x * 16 + tx;
    int y = blockIdx.y * 16 + ty;
    if (ty == 0) other[tx] = x;
    t[ty][tx] = in[y * w + x];
    __syncthreads();
    out[y * w + x] = t[ty][tx] + other[tx];
}
";
    let after = "__global__ void k(const int *in, int *out, int w) {
    __shared__ int other[16];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int x = blockIdx.x * 16 + tx;
    int y = blockIdx.y * 16 + ty;
    if (ty == 0) other[tx] = x;
    int t_v = in[y * w + x];
    __syncthreads();
    out[y * w + x] = t_v + other[tx];
}
";
    let desc = check(&Unstage, [16, 16, 1], before, after);
    assert!(!desc.contains("barrier"), "{desc}");
}

#[test]
fn an_exchange_between_threads_stays() {
    let src = "__global__ void k(const float *in, float *out) {
    __shared__ float s[256];
    s[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
    __syncthreads();
    out[blockIdx.x * 256 + threadIdx.x] = s[255 - threadIdx.x];
}
";
    check_not_applicable(
        &Unstage,
        [256, 1, 1],
        src,
        "`s` stays in shared memory: a thread reads an element other than the one it wrote, or reads before writing",
    );
}

#[test]
fn an_element_shared_by_threads_stays() {
    let src = "__global__ void k(const float *in, float *out) {
    __shared__ float s[32];
    s[threadIdx.x % 32] = in[blockIdx.x * 256 + threadIdx.x];
    __syncthreads();
    out[blockIdx.x * 256 + threadIdx.x] = s[threadIdx.x % 32];
}
";
    let p = crate::fixture::try_propose(&Unstage, src, [32, 1, 1]).expect("checkable");
    assert!(p.candidates.is_empty());
    assert!(
        p.skipped[0].reason.contains("is not the thread's own"),
        "{:?}",
        p.skipped
    );
}
