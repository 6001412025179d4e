//! The classic `reduce5`/`reduce6` forms: steps above the first warp
//! unrolled by hand and guarded by the block size, and a warp tail whose
//! steps are guarded too.

use crate::fixture::{check, rewrites, try_propose};
use crate::warp_shuffle::WarpShuffle;

/// `reduce6` with its `warpReduce<blockSize>` template, launched for
/// 256 and 128 threads (`EXTRA` adds launches).
fn reduce6(extra: &str) -> String {
    format!(
        r#"template <unsigned int blockSize>
__device__ void warpReduce(volatile int *sdata, unsigned int tid) {{
    if (blockSize >= 64) sdata[tid] += sdata[tid + 32];
    if (blockSize >= 32) sdata[tid] += sdata[tid + 16];
    if (blockSize >= 16) sdata[tid] += sdata[tid + 8];
    if (blockSize >= 8) sdata[tid] += sdata[tid + 4];
    if (blockSize >= 4) sdata[tid] += sdata[tid + 2];
    if (blockSize >= 2) sdata[tid] += sdata[tid + 1];
}}
template <unsigned int blockSize>
__global__ void reduce6(int *g_idata, int *g_odata, unsigned int n) {{
    extern __shared__ int sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + tid;
    unsigned int gridSize = blockSize * 2 * gridDim.x;
    sdata[tid] = 0;
    while (i < n) {{ sdata[tid] += g_idata[i] + g_idata[i + blockSize]; i += gridSize; }}
    __syncthreads();
    if (blockSize >= 512) {{ if (tid < 256) {{ sdata[tid] += sdata[tid + 256]; }} __syncthreads(); }}
    if (blockSize >= 256) {{ if (tid < 128) {{ sdata[tid] += sdata[tid + 128]; }} __syncthreads(); }}
    if (blockSize >= 128) {{ if (tid < 64) {{ sdata[tid] += sdata[tid + 64]; }} __syncthreads(); }}
    if (tid < 32) warpReduce<blockSize>(sdata, tid);
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}}
void run(int *in, int *out, unsigned int n) {{
    reduce6<256><<<8, 256, 256 * sizeof(int)>>>(in, out, n);
    reduce6<128><<<8, 128, 128 * sizeof(int)>>>(in, out, n);{extra}
}}
"#
    )
}

/// The tail of `reduce6` with shuffles.
const SHUFFLED: &str = "if (tid < 32) {
        int warp_sum = sdata[tid] + sdata[tid + 32];
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 16);
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 8);
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 4);
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 2);
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 1);
        if (tid == 0) {
            sdata[0] = warp_sum;
        }
    }";

#[test]
fn the_reduce6_template_tail_becomes_shuffles_and_its_guarded_steps_stay() {
    let before = reduce6("");
    let after = before.replace("if (tid < 32) warpReduce<blockSize>(sdata, tid);", SHUFFLED);
    let desc = check(&WarpShuffle, [256, 1, 1], &before, &after);
    assert!(
        desc.starts_with("`warpReduce<blockSize>`'s hand-unrolled last 6 steps")
            && desc.contains("the steps above the first warp, unrolled by hand, stay as written"),
        "{desc}"
    );
}

#[test]
fn an_instantiation_whose_guard_skips_the_first_warp_step_keeps_it_skipped() {
    // `reduce6<32>` skips the `+ 32` step (its block has no elements from
    // 32 on): the shuffles' first step keeps the guard.
    let before = reduce6("\n    reduce6<32><<<8, 32, 64 * sizeof(int)>>>(in, out, n);");
    let after = before.replace(
        "if (tid < 32) warpReduce<blockSize>(sdata, tid);",
        &SHUFFLED.replace(
            "int warp_sum = sdata[tid] + sdata[tid + 32];\n",
            "int warp_sum = sdata[tid];\n        if (blockSize >= 64) {\n            warp_sum += sdata[tid + 32];\n        }\n",
        ),
    );
    let desc = check(&WarpShuffle, [256, 1, 1], &before, &after);
    assert!(
        desc.contains("the first step keeps its guard `blockSize >= 64`"),
        "{desc}"
    );
}

#[test]
fn an_instantiation_whose_guard_skips_a_later_warp_step_keeps_the_tail() {
    // `reduce6<16>` skips the `+ 16` step too, its block being under a
    // warp: the shuffles run only where the second step's guard holds, the
    // steps as written elsewhere.
    let src = reduce6("\n    reduce6<16><<<8, 16, 32 * sizeof(int)>>>(in, out, n);");
    let found = rewrites(&WarpShuffle, &src, [256, 1, 1]);
    let [(desc, text)] = found.as_slice() else {
        panic!("{found:#?}");
    };
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("if (tid < 32) { if (blockSize >= 32) { int warp_sum = sdata[tid]; if (blockSize >= 64) {")
            && words.contains("} else { warpReduce<blockSize>(sdata, tid); } }"),
        "{text}"
    );
    assert!(desc.contains("`blockSize >= 32` fails"), "{desc}");
}

/// `reduce5` with a macro block size, its warp tail inline with guards.
const REDUCE5: &str = r#"#define BLOCK_SIZE 256
__global__ void reduce5(const float *in, float *out, unsigned int n) {
    __shared__ float sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (BLOCK_SIZE * 2) + threadIdx.x;
    float v = (i < n) ? in[i] : 0.0f;
    if (i + BLOCK_SIZE < n) v += in[i + BLOCK_SIZE];
    sdata[tid] = v;
    __syncthreads();
    if (BLOCK_SIZE >= 512) { if (tid < 256) { sdata[tid] += sdata[tid + 256]; } __syncthreads(); }
    if (BLOCK_SIZE >= 256) { if (tid < 128) { sdata[tid] += sdata[tid + 128]; } __syncthreads(); }
    if (BLOCK_SIZE >= 128) { if (tid < 64) { sdata[tid] += sdata[tid + 64]; } __syncthreads(); }
    if (tid < 32) {
        volatile float *smem = sdata;
        if (BLOCK_SIZE >= 64) smem[tid] += smem[tid + 32];
        if (BLOCK_SIZE >= 32) smem[tid] += smem[tid + 16];
        if (BLOCK_SIZE >= 16) smem[tid] += smem[tid + 8];
        if (BLOCK_SIZE >= 8) smem[tid] += smem[tid + 4];
        if (BLOCK_SIZE >= 4) smem[tid] += smem[tid + 2];
        if (BLOCK_SIZE >= 2) smem[tid] += smem[tid + 1];
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}
"#;

#[test]
fn an_inline_guarded_float_tail_becomes_shuffles_in_the_same_order() {
    let found = rewrites(&WarpShuffle, REDUCE5, [256, 1, 1]);
    let [(desc, text)] = found.as_slice() else {
        panic!("{found:#?}");
    };
    assert!(desc.starts_with("the hand-unrolled last 6 steps"), "{desc}");
    assert!(
        text.contains("float warp_sum = sdata[tid] + sdata[tid + 32];")
            && !text.contains("smem")
            && text.contains("if (BLOCK_SIZE >= 128) { if (tid < 64)"),
        "{text}"
    );
}

#[test]
fn a_first_step_guard_that_fails_stays_and_a_later_one_keeps_the_tail() {
    let src = REDUCE5.replace("if (BLOCK_SIZE >= 64)", "if (BLOCK_SIZE >= 512)");
    let found = rewrites(&WarpShuffle, &src, [256, 1, 1]);
    let [(_, text)] = found.as_slice() else {
        panic!("{found:#?}");
    };
    assert!(
        text.contains("float warp_sum = sdata[tid];")
            && text.contains("if (BLOCK_SIZE >= 512) {\n            warp_sum += sdata[tid + 32];"),
        "{text}"
    );
    let src = REDUCE5.replace("if (BLOCK_SIZE >= 32)", "if (BLOCK_SIZE >= 512)");
    let p = try_propose(&WarpShuffle, &src, [256, 1, 1]).expect("checkable");
    assert!(p.candidates.is_empty(), "{}", p.candidates[0].description);
}

#[test]
fn a_step_above_the_warp_at_another_offset_is_not_the_tree() {
    // The last step before the tail halves to 64, not to 32.
    let src = REDUCE5.replace(
        "tid < 64) { sdata[tid] += sdata[tid + 64]",
        "tid < 32) { sdata[tid] += sdata[tid + 32]",
    );
    let p = try_propose(&WarpShuffle, &src, [256, 1, 1]).expect("checkable");
    assert!(p.candidates.is_empty(), "{}", p.candidates[0].description);
}
