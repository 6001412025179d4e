//! Each transform on small kernels: what it proposes, what it leaves alone
//! and why, and that every candidate computes what the original does
//! (differential simulation on launches synthesized from the signature).

mod common;

use common::try_propose;
use copper::cuda::parse::parse_source;
use copper::cuda::print;
use copper::source::SourceFile;
use copper_transforms::{
    branch_distribution::BranchDistribution, global_to_shared::GlobalToShared,
    hoist_loads::HoistLoads, pad_shared::PadShared, read_only, remap_threads::RemapThreads,
    tiled_shared::TiledGlobalToShared, warp_shuffle::WarpShuffle, Proposals, Transform,
};

/// What `t` proposes (every candidate checked against the original).
fn propose(t: &dyn Transform, src: &str, block: [u64; 3]) -> Proposals {
    try_propose(t, src, block).expect("checkable")
}

fn only_candidate(p: &Proposals) -> (String, String) {
    assert_eq!(p.candidates.len(), 1, "{:?}", p.skipped);
    let c = &p.candidates[0];
    (c.description.clone(), print::function(&c.function))
}

fn skipped(p: &Proposals) -> String {
    p.skipped
        .iter()
        .map(|s| s.reason.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn hoisting_reads_an_invariant_load_once_under_the_loops_first_test() {
    let src = "__global__ void k(float *m, float *f, int rows, int cols) {
        int r = blockIdx.x * blockDim.x + threadIdx.x;
        if (r < rows) {
            for (int c = 0; c < cols; c++) { m[r * cols + c] = m[r * cols + c] * f[r]; }
        }
    }";
    let (desc, text) = only_candidate(&propose(&HoistLoads, src, [32, 1, 1]));
    assert!(
        desc.contains("loaded `f[r]` once before the loop at line 4"),
        "{desc}"
    );
    assert!(
        text.contains("if (0 < cols) {\n            f_elem = f[r];"),
        "{text}"
    );
    assert!(text.contains("m[r * cols + c] * f_elem"), "{text}");
}

#[test]
fn hoisting_leaves_loads_the_loop_may_change_or_skip() {
    let cases = [
        // The loop writes the array.
        "__global__ void k(int *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; for (int j = 0; j < n; j++) { a[i + 1] = a[i] + j; } }",
        // The index changes in the loop.
        "__global__ void k(int *a, int *b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; for (int j = 0; j < n; j++) { b[i] += a[i]; i = i + 1; } }",
        // The load is conditional: the original may never read it.
        "__global__ void k(int *a, int *b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; for (int j = 0; j < n; j++) { if (j > 5) { b[i] += a[i]; } } }",
        // A break before the load.
        "__global__ void k(int *a, int *b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; for (int j = 0; j < n; j++) { if (b[j] > 5) break; b[i] += a[i]; } }",
    ];
    for src in cases {
        let p = propose(&HoistLoads, src, [32, 1, 1]);
        assert!(
            p.candidates.is_empty(),
            "{src}: {}",
            print::function(&p.candidates[0].function)
        );
    }
    // A barrier in the loop: the reason is given.
    let src = "__global__ void k(int *a, int *b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; for (int j = 0; j < n; j++) { b[i] += a[i]; __syncthreads(); } }";
    let p = propose(&HoistLoads, src, [32, 1, 1]);
    assert!(p.candidates.is_empty());
    assert!(skipped(&p).contains("it has a barrier"), "{}", skipped(&p));
    // A local pointer could alias anything.
    let src = "__global__ void k(int *a, int *b, int n) { int *p = b; int i = blockIdx.x * blockDim.x + threadIdx.x; for (int j = 0; j < n; j++) { p[i] += a[i]; } }";
    let p = propose(&HoistLoads, src, [32, 1, 1]);
    assert!(p.candidates.is_empty());
    assert!(skipped(&p).contains("local pointer"), "{}", skipped(&p));
}

#[test]
fn padding_widens_a_conflicting_tile_row() {
    let src = "#define T 32
    __global__ void k(float *out, float *in, int n) {
        __shared__ float tile[T][T];
        int x = blockIdx.x * T + threadIdx.x;
        tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * n + x];
        __syncthreads();
        out[threadIdx.y * n + x] = tile[threadIdx.x][threadIdx.y];
    }";
    let (desc, text) = only_candidate(&propose(&PadShared, src, [32, 32, 1]));
    assert!(desc.contains("`tile`"), "{desc}");
    assert!(text.contains("__shared__ float tile[T][T + 1];"), "{text}");
    // An odd row length already spreads over the banks.
    let src = src.replace("tile[T][T]", "tile[T][T + 1]");
    assert!(propose(&PadShared, &src, [32, 32, 1]).candidates.is_empty());
}

#[test]
fn branch_distribution_moves_common_code_out_of_a_divergent_if() {
    let src = "__global__ void k(float *a, float *b, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        float s = 0.0f;
        if (i % 2 == 0) {
            for (int j = 0; j < n; j++) { s += a[j]; }
            b[i] = s + 1.0f;
        } else {
            for (int j = 0; j < n; j++) { s += a[j]; }
            b[i] = s - 1.0f;
        }
    }";
    let p = propose(&BranchDistribution, src, [32, 1, 1]);
    assert!(!p.candidates.is_empty(), "{}", skipped(&p));
    let text = print::function(&p.candidates[0].function);
    // The loop now runs once, before the branch, whose condition was saved.
    assert_eq!(
        text.matches("for (int j = 0; j < n; j++)").count(),
        1,
        "{text}"
    );
    assert!(
        text.find("for (").unwrap() < text.find("if (").unwrap(),
        "{text}"
    );
    // Common code that writes what the condition reads: whatever moves,
    // the condition is the one evaluated before (`propose` checks every
    // candidate against the original).
    let src = "__global__ void k(int *a, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i % 2 == 0) { i = i + 1; a[i] = 1; } else { i = i + 1; a[i] = 2; }
    }";
    propose(&BranchDistribution, src, [32, 1, 1]);
}

#[test]
fn global_to_shared_copies_a_block_segment_in_once() {
    let src = "__global__ void k(int *a, int *b, int w, int h) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        for (int j = 0; j < h; j++) { b[j * w + i] += a[i]; }
    }";
    let p = propose(&GlobalToShared, src, [64, 1, 1]);
    let c = p
        .candidates
        .iter()
        .find(|c| c.description.contains("moved `a`"))
        .unwrap_or_else(|| panic!("{}", skipped(&p)));
    let text = print::function(&c.function);
    assert!(text.contains("__shared__ int a_sh[a_len];"), "{text}");
    assert!(text.contains("__syncthreads();"), "{text}");
    // `b` is written at a non-linear index: it stays, with a reason.
    assert!(
        skipped(&p).contains("`b` stays in global memory"),
        "{}",
        skipped(&p)
    );
}

#[test]
fn tiling_stages_a_shared_row_through_shared_memory() {
    let src = "__global__ void k(float *v, float *m, float *out, int w, int h) {
        int col = blockIdx.x * blockDim.x + threadIdx.x;
        if (col < w) {
            float s = 0.0f;
            for (int k = 0; k < h; k++) { s += v[k] * m[k * w + col]; }
            out[col] = s;
        }
    }";
    let p = propose(&TiledGlobalToShared, src, [64, 1, 1]);
    let c = p
        .candidates
        .iter()
        .find(|c| c.description.contains("staged `v`"))
        .unwrap_or_else(|| panic!("{}", skipped(&p)));
    let text = print::function(&c.function);
    assert!(text.contains("__shared__ float v_tile[64];"), "{text}");
    assert!(text.matches("__syncthreads();").count() >= 2, "{text}");
    assert!(text.contains("v_tile[k - k_tile]"), "{text}");
}

#[test]
fn a_copy_is_not_guarded_by_a_parameter_the_kernel_changes() {
    // `0 < h` at the kernel's start is not the loop's first test once `h`
    // has changed: the copy may not rely on it.
    let src = "__global__ void k(int *a, int *b, int w, int h) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        h = h - 3;
        for (int j = 0; j < h; j++) { b[j * w + i] += a[i]; }
    }";
    let p = propose(&GlobalToShared, src, [64, 1, 1]);
    for c in &p.candidates {
        let text = print::function(&c.function);
        assert!(!text.contains("if (0 < h)"), "{text}");
    }
}

#[test]
fn a_copy_in_reads_only_what_the_guards_let_the_original_read() {
    // A copy of `B` must not read a fixed 2,560-element segment where
    // the original reads `B[s]` only for `s < window_size`.
    let src = "#define BLOCKSIZE 256
    #define WINDOW_MULTIPLIER 10
    __global__ void window(float *A, const float *B, int window_size, int n) {
        __shared__ float shared_B[BLOCKSIZE * WINDOW_MULTIPLIER];
        for (int i = 0; i < WINDOW_MULTIPLIER; i++) {
            int s = threadIdx.x * WINDOW_MULTIPLIER + i;
            if (s < window_size) { shared_B[s] = B[s]; }
        }
        __syncthreads();
        int t = blockIdx.x * blockDim.x + threadIdx.x;
        if (t < n) {
            float acc = 0.0f;
            for (int j = 0; j < window_size; j++) { acc += shared_B[j]; }
            A[t] = acc;
        }
    }";
    // Every candidate is also checked on arrays exactly as long as the
    // original needs (`B` of `window_size` elements).
    let p = propose(&GlobalToShared, src, [256, 1, 1]);
    let moved: Vec<_> = p
        .candidates
        .iter()
        .filter(|c| c.description.contains("moved `B`"))
        .collect();
    for c in &moved {
        let text = print::function(&c.function);
        assert!(text.contains("<= window_size - 1"), "{text}");
    }
    if moved.is_empty() {
        assert!(
            skipped(&p).contains("`B` stays in global memory"),
            "{}",
            skipped(&p)
        );
    }
}

#[test]
fn warp_shuffle_replaces_the_first_warps_tree_steps() {
    let src = "#define BS 128
    __global__ void k(int *in, int *out, int n) {
        __shared__ int sdata[BS];
        unsigned int tid = threadIdx.x;
        unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
        sdata[tid] = (i < n) ? in[i] : 0;
        __syncthreads();
        for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (tid < s) { sdata[tid] += sdata[tid + s]; }
            __syncthreads();
        }
        if (tid == 0) { out[blockIdx.x] = sdata[0]; }
    }";
    let p = propose(&WarpShuffle, src, [128, 1, 1]);
    assert_eq!(p.candidates.len(), 2, "{:?}", p.skipped);
    let (desc, text) = (
        p.candidates[0].description.clone(),
        print::function(&p.candidates[0].function),
    );
    assert!(desc.contains("`__shfl_down_sync`"), "{desc}");
    // Integer sums may also be reduced per warp first (checked like the
    // other: `propose` simulates both against the original).
    let per_warp = print::function(&p.candidates[1].function);
    assert!(
        per_warp.contains("int warp_sum = sdata[tid];"),
        "{per_warp}"
    );
    assert!(
        per_warp.contains("sdata[tid / 32] = warp_sum;")
            && per_warp.contains("warp_sum = tid < blockDim.x / 32 ? sdata[tid] : 0;"),
        "{per_warp}"
    );
    assert!(
        text.contains("for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1)"),
        "{text}"
    );
    assert!(
        text.contains("int warp_sum = sdata[tid] + sdata[tid + 32];"),
        "{text}"
    );
    assert!(
        text.contains("warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 1);"),
        "{text}"
    );
    // Floating-point data keeps its order of additions: exact as well.
    let float = src
        .replace("int *in, int *out", "float *in, float *out")
        .replace("__shared__ int", "__shared__ float");
    // Only the tail keeps the order of a float sum: one candidate.
    let (_, text) = only_candidate(&propose(&WarpShuffle, &float, [128, 1, 1]));
    assert!(text.contains("float warp_sum"), "{text}");
    // With --allow-reassociation the per-warp version is offered for float
    // too, says so, and passes the check within its tolerance.
    let p = common::try_propose_with(&WarpShuffle, &float, [128, 1, 1], true).expect("checkable");
    assert_eq!(p.candidates.len(), 2, "{:?}", p.skipped);
    let c = &p.candidates[1];
    assert!(c.reassociates);
    assert!(
        c.description.contains("may differ in the last bits"),
        "{}",
        c.description
    );
    assert!(print::function(&c.function).contains("float warp_sum = sdata[tid];"));
    // A block that is not a multiple of 32 has no full warp to shuffle in;
    // a stride that does not pass through 32 never reaches the first warp.
    let p = propose(&WarpShuffle, src, [100, 1, 1]);
    assert!(p.candidates.is_empty());
    assert!(skipped(&p).contains("multiple of 32"), "{}", skipped(&p));
    let p = propose(&WarpShuffle, src, [96, 1, 1]);
    assert!(p.candidates.is_empty());
    assert!(skipped(&p).contains("starts at 48"), "{}", skipped(&p));
    // After the loop, other partial sums are read.
    let late = src.replace(
        "out[blockIdx.x] = sdata[0];",
        "out[blockIdx.x] = sdata[0] + sdata[1];",
    );
    let p = propose(&WarpShuffle, &late, [128, 1, 1]);
    assert!(p.candidates.is_empty());
    assert!(
        skipped(&p).contains("other indices than 0"),
        "{}",
        skipped(&p)
    );
}

#[test]
fn remapping_swaps_thread_roles_when_a_warp_walks_rows() {
    let src = "__global__ void k(float *a, float *out, int n) {
        int row = blockIdx.x * blockDim.x + threadIdx.x;
        int col = blockIdx.y * blockDim.y + threadIdx.y;
        if (row < n && col < n) { out[row * n + col] = 2.0f * a[row * n + col]; }
    }";
    let (desc, text) = only_candidate(&propose(&RemapThreads, src, [16, 16, 1]));
    assert!(
        desc.contains("lanes now read consecutive `a` elements"),
        "{desc}"
    );
    assert!(
        text.contains("int row = blockIdx.x * blockDim.x + threadIdx.y;"),
        "{text}"
    );
    assert!(
        text.contains("int col = blockIdx.y * blockDim.y + threadIdx.x;"),
        "{text}"
    );
    // Already coalesced: swapping would make it worse, so nothing is proposed.
    let good = src
        .replace(
            "+ threadIdx.x;\n        int col",
            "+ threadIdx.q;\n        int col",
        )
        .replace("+ threadIdx.y;", "+ threadIdx.x;")
        .replace("threadIdx.q", "threadIdx.y");
    let p = propose(&RemapThreads, &good, [16, 16, 1]);
    assert!(
        p.candidates.is_empty(),
        "{}",
        print::function(&p.candidates[0].function)
    );
    assert!(skipped(&p).contains("fewer sectors"), "{}", skipped(&p));
    // A block that is not square needs the launch changed too: not here,
    // where the file does not launch the kernel.
    let p = propose(&RemapThreads, src, [32, 8, 1]);
    assert!(p.candidates.is_empty());
    assert!(
        skipped(&p).contains("not square, so the launch must change with the kernel, and `k` is not launched in this file"),
        "{}",
        skipped(&p)
    );
    // Shared memory could see the warps change.
    let shared = src.replace(
        "if (row < n",
        "__shared__ float t[256]; t[threadIdx.y * 16 + threadIdx.x] = 1.0f; if (row < n",
    );
    let p = propose(&RemapThreads, &shared, [16, 16, 1]);
    assert!(p.candidates.is_empty());
    assert!(skipped(&p).contains("`__shared__`"), "{}", skipped(&p));
}

/// Before: lanes of a 32×8 block one row apart (32 sectors per request).
/// After: x and y exchanged in the kernel and at the launch (8×32), every
/// candidate checked on the exchanged launches.
#[test]
fn remapping_a_non_square_block_exchanges_the_launch_too() {
    let src = "__global__ void k(float *a, float *out, int n) {
        int row = blockIdx.x * blockDim.x + threadIdx.x;
        int col = blockIdx.y * blockDim.y + threadIdx.y;
        if (row < n && col < n) { out[row * n + col] = 2.0f * a[row * n + col]; }
    }
    void run(float *a, float *out) {
        int n = 100;
        dim3 block(32, 8);
        dim3 grid((n + block.x - 1) / block.x, (n + block.y - 1) / block.y);
        k<<<grid, block>>>(a, out, n);
    }";
    let p = propose(&RemapThreads, src, [32, 8, 1]);
    let (desc, text) = only_candidate(&p);
    assert!(
        desc.contains("of the grid and block of the launch at line 10 (block 32×8 → 8×32)"),
        "{desc}"
    );
    assert!(
        desc.contains("lanes now read consecutive `a` elements: 32 → 8 sectors per warp"),
        "{desc}"
    );
    assert!(
        text.contains("int row = blockIdx.y * blockDim.y + threadIdx.y;"),
        "{text}"
    );
    assert!(
        text.contains("int col = blockIdx.x * blockDim.x + threadIdx.x;"),
        "{text}"
    );
    let edits = p.candidates[0]
        .relaunch
        .as_ref()
        .expect("the launch changes");
    let host = copper::cuda::rewrite::splice(src, &edits.edits);
    assert!(host.contains("dim3 block(8, 32);"), "{host}");
    assert!(
        host.contains("dim3 grid((n + block.x - 1) / block.x, (n + block.y - 1) / block.y);"),
        "{host}"
    );
    // A block shared with another kernel's launch is refused with that reason.
    let shared = src.replace(
        "k<<<grid, block>>>(a, out, n);",
        "k<<<grid, block>>>(a, out, n);\n        other<<<grid, block>>>(a);",
    );
    let p = propose(&RemapThreads, &shared, [32, 8, 1]);
    assert!(p.candidates.is_empty());
    assert!(
        skipped(&p).contains("`grid` is also the shape of the launch of `other`"),
        "{}",
        skipped(&p)
    );
}

#[test]
fn read_only_pointers_get_const_restrict_when_launches_show_no_aliasing() {
    let src = |args: &str| {
        format!(
            "__global__ void scale(float *in, float *out, float *unused, int n) {{
                int i = blockIdx.x * blockDim.x + threadIdx.x;
                if (i < n) {{ out[i] = 2.0f * in[i]; }}
            }}
            int main() {{
                int n = 1024;
                float *a, *b, *c;
                cudaMalloc(&a, n * sizeof(float));
                cudaMalloc(&b, n * sizeof(float));
                cudaMalloc(&c, n * sizeof(float));
                scale<<<4, 256>>>({args}, n);
                return 0;
            }}"
        )
    };
    let suggestion = |text: &str| {
        let file = parse_source(SourceFile::new("t.cu", text));
        let f = file.function("scale").expect("kernel").clone();
        read_only::suggest(&file, &f, None)
    };
    let s = suggestion(&src("a, b, c"))
        .expect("distinct allocations")
        .expect("a suggestion");
    let text = print::function(&s.function);
    assert!(
        text.contains(
            "const float *__restrict__ in,\n    float *out,\n    const float *__restrict__ unused,"
        ),
        "{text}"
    );
    assert!(
        s.description
            .contains("the launch at line 11 passes separate `cudaMalloc` allocations"),
        "{}",
        s.description
    );
    assert!(
        s.description.contains("the bounds do not change"),
        "{}",
        s.description
    );
    // The same allocation read and written: no suggestion, and why.
    let why = suggestion(&src("a, a, c"))
        .expect_err("aliasing")
        .to_string();
    assert!(
        why.contains("`a` is passed as both `in` and `out`"),
        "{why}"
    );
    // Nothing read-only: nothing to suggest.
    let written = src("a, b, c").replace(
        "out[i] = 2.0f * in[i];",
        "out[i] = 2.0f * in[i]; in[i] = 0.0f; unused[i] = 1.0f;",
    );
    assert!(suggestion(&written).expect("no evidence needed").is_none());
}

/// Before: `out`, written only through `float &sum = out[i]`, was taken
/// for read-only, and the suggested `const` did not compile. After: only
/// `m` is suggested.
#[test]
fn an_array_written_through_a_reference_is_not_read_only() {
    let src = "__global__ void k(float *out, float *m, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) { float &sum = out[i]; sum = 2.0f * m[i]; }
        }
        int main() {
            int n = 256;
            float *a, *b;
            cudaMalloc(&a, n * sizeof(float));
            cudaMalloc(&b, n * sizeof(float));
            k<<<2, 128>>>(a, b, n);
            return 0;
        }";
    let file = parse_source(SourceFile::new("t.cu", src));
    let f = file.function("k").expect("kernel").clone();
    let s = read_only::suggest(&file, &f, None)
        .expect("a suggestion")
        .expect("`m` qualifies");
    let text = print::function(&s.function);
    assert!(text.contains("const float *__restrict__ m"), "{text}");
    assert!(text.contains("(float *out"), "{text}");
}
