//! `copper explain CODE`: for every lint code, what it means, why it
//! costs, a small example and its fix. SARIF rules carry the same texts
//! (`fullDescription`, `helpUri`).

use super::divergence::{MIN_EXTRA, MIN_SHARE};
use super::Code;

/// The explanation of one code.
#[derive(Clone, Debug, PartialEq)]
pub struct Explanation {
    /// The code.
    pub code: Code,
    /// What the finding says ([`Code::describe`]).
    pub what: &'static str,
    /// Why it costs (or why the results are wrong), and when copper
    /// reports it.
    pub why: String,
    /// A small kernel with the problem.
    pub example: &'static str,
    /// The same kernel fixed.
    pub fix: &'static str,
}

/// The documentation of `code`, relative to the repository root (SARIF
/// `helpUri`).
pub fn help_uri(code: Code) -> String {
    format!("docs/lint-rules.md#{}", code.name())
}

/// The explanation of `code`.
pub fn explain(code: Code) -> Explanation {
    let (why, example, fix): (String, &str, &str) = match code {
        Code::UncoalescedGlobal => (
            "A warp's 32 lanes load or store together; the memory system serves them in 32-byte sectors. When consecutive lanes touch elements a stride apart, one request needs up to 32 sectors where 4 would do for 32 consecutive 4-byte elements: up to 8 times the memory traffic.".into(),
            "__global__ void scale(float *m, int rows, int cols) {\n    int r = blockIdx.x * blockDim.x + threadIdx.x;  // one thread per row\n    for (int c = 0; c < cols; c++)\n        m[r * cols + c] *= 2.0f;                      // lanes are `cols` apart\n}",
            "__global__ void scale(float *m, int rows, int cols) {\n    int c = blockIdx.x * blockDim.x + threadIdx.x;  // one thread per column\n    for (int r = 0; r < rows; r++)\n        m[r * cols + c] *= 2.0f;                      // consecutive lanes, consecutive elements\n}",
        ),
        Code::MisalignedGlobal => (
            "Consecutive lanes access consecutive elements, but the warp's first element may not start a 32-byte sector, so the request straddles one sector more than it needs (5 in place of 4 for 4-byte elements). It is reported only where copper cannot show the start aligned: rows whose length is not known to be a multiple of 8 elements, or an offset such as `i + 1`.".into(),
            "__global__ void blur(const float *img, float *out, int w, int h) {\n    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;\n    if (x < w && y < h) out[y * w + x] = img[y * w + x];  // row y starts at y·w: aligned only if w % 8 == 0\n}",
            "// Allocate rows with a pitch that is a multiple of 8 floats (cudaMallocPitch,\n// or round w up) and index with it:\n__global__ void blur(const float *img, float *out, int w, int h, int pitch) {\n    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;\n    if (x < w && y < h) out[y * pitch + x] = img[y * pitch + x];\n}",
        ),
        Code::BankConflict => (
            "Shared memory has 32 banks of 4-byte words; a warp's request is served in one pass only when its lanes touch distinct banks (or the same word). Lanes `k` words apart with `k` even share banks: an n-way conflict takes n passes.".into(),
            "__global__ void transpose(const float *in, float *out, int n) {\n    __shared__ float tile[32][32];\n    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;\n    tile[threadIdx.y][threadIdx.x] = in[y * n + x];\n    __syncthreads();\n    x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;\n    out[y * n + x] = tile[threadIdx.x][threadIdx.y];  // lanes 32 words apart: 32-way\n}",
            "    __shared__ float tile[32][33];                 // one word of padding per row",
        ),
        Code::DivergentBranch => (
            format!("The lanes of a warp run in lock step: when a condition differs between them, the warp runs both sides one after the other, with the lanes of the other side idle. copper reports it only where it costs something material: not for a condition that only tests ranges of the thread index (`i < n`, `x >= 1 && x < w - 1`, `tid == 0`), where only the warp holding the range's edge (the partial last warp) diverges; and for an `if` only when both sides do work and divergence adds at least {MIN_EXTRA} wsteps and {}% of the dearer side's cost (an `if` with an empty side costs a divergent warp 1 step). A loop whose trip count depends on data (or on the lane through its bound, as in `for (j = 0; j < threadIdx.x; j++)`) makes lanes that finish early wait for the warp's last one; a loop that steps a counter affine in the thread index to a bound the same in every lane (a grid-stride or lane-strided loop) diverges only in its last rounds and is not reported.", MIN_SHARE * 100.0),
            "__global__ void odd_even(float *a, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i % 2 == 0) a[i] = sqrtf(a[i]) * 2.0f;     // even and odd lanes of every warp\n    else            a[i] = expf(a[i]) - 1.0f;      // take different sides\n}",
            "__global__ void odd_even(float *a, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    // Give whole warps the same side: warp w handles the even (or odd)\n    // elements of its range, or split the work into two kernels.\n    int w = i / 32, lane = i % 32;\n    int j = (w / 2) * 64 + 2 * lane + (w % 2);\n    if (w % 2 == 0) a[j] = sqrtf(a[j]) * 2.0f;     // uniform in the warp\n    else            a[j] = expf(a[j]) - 1.0f;\n}",
        ),
        Code::BlockSizeDependent => (
            "A kernel whose results change with the block size is correct only for the launch it was written for: a different `<<<grid, block>>>` (or an autotuner) silently changes the answer. copper checks that every index uses the global thread index blockIdx·blockDim + threadIdx, and simulates launches of several block sizes.".into(),
            "__global__ void ids(int *out) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    out[i] = threadIdx.x;                         // the value depends on the block size\n}",
            "__global__ void ids(int *out) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    out[i] = i;                                   // the global index\n}",
        ),
        Code::IndexOverflow => (
            "`int` holds values up to 2^31 - 1: an index such as `row * cols + col` over a matrix of more than 2^31 elements wraps around, and the kernel reads or writes the wrong element.".into(),
            "__global__ void fill(float *m, int rows, int cols) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    m[i * cols] = 0.0f;                           // overflows for rows·cols ≥ 2^31\n}",
            "__global__ void fill(float *m, int rows, int cols) {\n    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;\n    m[i * cols] = 0.0f;\n}",
        ),
        Code::DataRace => (
            "Threads of a launch run in an order CUDA does not fix: when two write different values to one element, or one reads what another writes without a barrier between, the result depends on the schedule and changes from run to run. copper found the race by simulating the kernel.".into(),
            "__global__ void max_of(const float *x, float *result, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n && x[i] > result[0]) result[0] = x[i];   // every thread writes result[0]\n}",
            "__global__ void max_of(const int *x, int *result, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) atomicMax(result, x[i]);\n}",
        ),
        Code::DivergentBarrier => (
            "`__syncthreads()` waits for every thread of the block: when some threads skip it (it sits in a branch or a loop they take differently), the block deadlocks or its threads pass different barriers, and the results are undefined.".into(),
            "__global__ void k(float *a, int n) {\n    __shared__ float s[256];\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) {\n        s[threadIdx.x] = a[i];\n        __syncthreads();                          // threads with i >= n never get here\n        a[i] = s[255 - threadIdx.x];\n    }\n}",
            "__global__ void k(float *a, int n) {\n    __shared__ float s[256];\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    s[threadIdx.x] = i < n ? a[i] : 0.0f;\n    __syncthreads();                              // every thread reaches it\n    if (i < n) a[i] = s[255 - threadIdx.x];\n}",
        ),
        Code::WarpSynchronous => (
            "Since Volta, the lanes of a warp may run independently: code that exchanges values through shared memory without `__syncwarp()` (the old \"warp-synchronous\" last steps of a reduction) may read a value before its neighbour wrote it.".into(),
            "if (tid < 32) {\n    volatile float *v = s;\n    v[tid] += v[tid + 32];\n    v[tid] += v[tid + 16];                        // no __syncwarp() between steps\n}",
            "if (tid < 32) {\n    float x = s[tid] + s[tid + 32];\n    for (int d = 16; d > 0; d /= 2)\n        x += __shfl_down_sync(0xffffffff, x, d);\n    if (tid == 0) s[0] = x;\n}",
        ),
        Code::RedundantWork => (
            "When the trip count of a loop, every address it touches and every value it computes are the same in every thread of a block, each thread repeats the others' work: a block of 256 threads does it 256 times, reading the same memory each time, where once per block (or once for the whole launch) would do. copper finds it with its dependence analysis across the block, and reports the outermost such loop that reads global memory, holds no barrier, atomic or warp primitive, and that many threads may reach (not one under `if (tid == 0)`); the factor is the number of threads per block.".into(),
            "__global__ void normalize(const float *a, float *out, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    float total = 0.0f;\n    for (int k = 0; k < n; k++)                   // every thread sums the whole array\n        total += a[k];\n    if (i < n) out[i] = a[i] / total;\n}",
            "// Sum once: a reduction kernel (or a block reduction and one atomic\n// per block) writes `total`, then:\n__global__ void normalize(const float *a, float *out, int n, const float *total) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) out[i] = a[i] / *total;\n}",
        ),
    };
    Explanation {
        code,
        what: code.describe(),
        why,
        example,
        fix,
    }
}

impl Explanation {
    /// The explanation as `copper explain` prints it.
    pub fn text(&self) -> String {
        let indent = |s: &str| {
            s.lines()
                .map(|l| format!("    {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        format!(
            "{} ({})\n\nWhat: {}\n\nWhy: {}\n\nExample:\n{}\n\nFix:\n{}\n\nSilence it on one line with `// copper: allow({0})`, on the next line with `// copper: allow-next-line({0})`, for a whole kernel with the comment on the kernel's first line, or everywhere with `--allow {0}`.\n",
            self.code.name(),
            match self.code.severity() {
                crate::diag::Severity::Error => "error",
                _ => "warning",
            },
            self.what,
            self.why,
            indent(self.example),
            indent(self.fix),
        )
    }

    /// What, why and the fix, as one paragraph each (SARIF
    /// `fullDescription`).
    pub fn full_description(&self) -> String {
        format!("{} {}", self.what, self.why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_explained_with_an_example_and_a_fix() {
        for c in Code::ALL {
            let e = explain(c);
            assert!(!e.why.is_empty() && !e.example.is_empty() && !e.fix.is_empty());
            let t = e.text();
            assert!(t.starts_with(c.name()), "{t}");
            assert!(t.contains("Example:") && t.contains("Fix:"), "{t}");
        }
        assert!(explain(Code::DivergentBranch).why.contains("25%"));
    }
}
