//! The split exchange: a 1-D kernel's `row = idx / W; col =
//! idx % W` exchanged when its lanes walk an array by rows, checked by
//! differential simulation; and the kernels it leaves alone, with why.

mod common;

use common::try_propose_on;
use copper::cuda::parse::parse_source;
use copper::cuda::print;
use copper::ir::lower::lower_kernel;
use copper::sim::params::ParamFile;
use copper::source::SourceFile;
use copper_transforms::remap_split::RemapSplit;
use copper_transforms::Proposals;

/// What the split exchange proposes for `src`, checked on a launch of 16
/// blocks of 256 threads, every integer parameter 50 (2,500 elements) and
/// every array 2,500 random elements, and on its variants.
fn propose(src: &str) -> Proposals {
    let file = parse_source(SourceFile::new("t.cu", src));
    let name = file.kernels().next().expect("a kernel").name.clone();
    let kernel = lower_kernel(&file, &name).expect("lowers");
    let mut toml = format!("[kernel.{name}]\ngrid = [16, 1, 1]\nblock = [256, 1, 1]\n");
    toml += &format!("[kernel.{name}.args]\n");
    for v in kernel.scalar_params() {
        toml += &format!("{} = 50\n", kernel.vars[v].name);
    }
    for (i, a) in kernel.arrays.iter().filter(|a| a.is_global()).enumerate() {
        toml += &format!(
            "[kernel.{name}.arrays.{}]\nlen = 2500\ninit = \"random\"\nseed = {i}\nmin = -2\nmax = 2\n",
            a.name
        );
    }
    let params = ParamFile::from_toml(&toml).expect("a launch");
    try_propose_on(
        &RemapSplit,
        src,
        [256, 1, 1],
        false,
        Some(&params.kernel[&name]),
    )
    .expect("checkable")
}

fn only_candidate(p: &Proposals) -> (String, String) {
    assert_eq!(p.candidates.len(), 1, "{:?}", p.skipped);
    let c = &p.candidates[0];
    (c.description.clone(), print::function(&c.function))
}

fn skipped(p: &Proposals) -> String {
    assert!(
        p.candidates.is_empty(),
        "{}",
        print::function(&p.candidates[0].function)
    );
    p.skipped
        .iter()
        .map(|s| s.reason.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A column-major matrix walked by a row-first split.
const COLMAJOR: &str = "__global__ void k(float *a, const float *s, int h, int w) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int row = idx / w;
    int col = idx % w;
    if (row < h && col < w) {
        a[col * h + row] *= s[row];
    }
}";

#[test]
fn a_column_walk_becomes_a_row_walk() {
    let (desc, text) = only_candidate(&propose(COLMAJOR));
    assert!(text.contains("int row = idx % h;"), "{text}");
    assert!(text.contains("int col = idx / h;"), "{text}");
    // The guard is unchanged: it covers the same h×w elements.
    assert!(text.contains("if (row < h && col < w)"), "{text}");
    assert!(
        desc.contains("lanes now read consecutive `a` elements: 32 → 4 sectors per warp"),
        "{desc}"
    );
    assert!(
        desc.contains("lanes now write consecutive `a` elements"),
        "{desc}"
    );
    assert!(
        desc.contains("the guard covers the same h×w elements"),
        "{desc}"
    );
}

#[test]
fn guards_on_the_flat_index_and_early_returns() {
    // `idx < n * n` names the other extent (here the same: a square).
    let square = "__global__ void k(float *a, int n) {
        int idx = threadIdx.x + blockIdx.x * blockDim.x;
        int r = idx / n, c = idx % n;
        if (idx >= n * n) return;
        a[c * n + r] = a[c * n + r] * 2.0f + (float)r;
    }";
    let (_, text) = only_candidate(&propose(square));
    assert!(text.contains("int r = idx % n, c = idx / n;"), "{text}");
    // size_t sizes, the product in either order, a row-major array walked
    // down its columns.
    let sizet = "__global__ void k(float *m, const float *f, size_t rows, size_t cols) {
        size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
        size_t c = idx / rows;
        size_t r = idx % rows;
        if (idx < cols * rows) { m[r * cols + c] *= f[c]; }
    }";
    let (desc, text) = only_candidate(&propose(sizet));
    assert!(text.contains("size_t c = idx % cols;"), "{text}");
    assert!(text.contains("size_t r = idx / cols;"), "{text}");
    assert!(desc.contains("consecutive `m` elements"), "{desc}");
}

#[test]
fn already_coalesced_splits_stay() {
    let good = COLMAJOR.replace("a[col * h + row]", "a[row * w + col]");
    let why = skipped(&propose(&good));
    assert!(why.contains("fewer sectors"), "{why}");
}

#[test]
fn refusals_say_why() {
    let cases = [
        // The work depends on which thread takes which element.
        (
            COLMAJOR.replace("*= s[row];", "*= s[idx];"),
            "`idx` is used beyond the split",
        ),
        (
            COLMAJOR.replace("*= s[row];", "*= s[row] + threadIdx.x;"),
            "`threadIdx` or `blockIdx` beyond the split",
        ),
        // Only one extent is guarded: after the exchange `row < h` would
        // always hold, and `col` would run past `w`.
        (
            COLMAJOR.replace("row < h && col < w", "row < h"),
            "no guard",
        ),
        // The guard is not the split's.
        (
            COLMAJOR.replace("row < h && col < w", "row < h && col < h"),
            "no guard",
        ),
        (
            COLMAJOR.replace("int col = idx % w;", "int col = idx % h;"),
            "divide `idx` by different values",
        ),
        (
            COLMAJOR.replace(
                "a[col * h + row] *= s[row];",
                "a[col * h + row] *= s[row]; row = 0;",
            ),
            "`row` is assigned",
        ),
        (
            COLMAJOR.replace(
                "if (row < h",
                "__shared__ float t[256]; t[threadIdx.x] = 1.0f; if (row < h",
            ),
            "`__shared__`",
        ),
        (
            COLMAJOR.replace(
                "a[col * h + row] *= s[row];",
                "atomicAdd(&a[col * h + row], s[row]);",
            ),
            "atomicAdd",
        ),
        // The split used where the guard does not hold.
        (
            COLMAJOR.replace("if (row < h", "float early = s[col]; if (row < h"),
            "where the guard does not hold",
        ),
        // The other extent changes after the split is computed.
        (
            COLMAJOR.replace("if (row < h", "h = h - 1; if (row < h"),
            "may change",
        ),
    ];
    for (src, want) in cases {
        let why = skipped(&propose(&src));
        assert!(why.contains(want), "{want}: {why}\n{src}");
    }
    // No split at all: nothing to say.
    let p = propose("__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }");
    assert!(p.candidates.is_empty() && p.skipped.is_empty());
}

/// The exchange is the original only on launches with a thread per
/// element: on launches synthesized around the block (fewer threads than
/// `h·w`) the checker has too few to compare and rejects it.
#[test]
fn launches_too_small_for_the_matrix_do_not_count() {
    use copper_transforms::check::Checker;
    let candidate = propose(COLMAJOR).candidates.remove(0);
    assert_eq!(candidate.covers.as_deref(), Some("(w) * (h)"));
    let file = parse_source(SourceFile::new("t.cu", COLMAJOR));
    let checker = Checker::new(
        &file,
        "k",
        None,
        copper::launch::block([256, 1, 1]).ok(),
        None,
    )
    .expect("checkable");
    let why = checker.check_candidate(&candidate).unwrap_err().to_string();
    assert!(
        why.contains("test launches run at least `(w) * (h)` threads"),
        "{why}"
    );
}
