//! Route (b): one row per warp where the file launches the kernel, the
//! launch's grid scaled by 32 in the same edit; route (a) where it cannot
//! be ([`crate::fixture`] checks each candidate on its own launch).

use copper::cuda::parse::parse_source;
use copper::cuda::relaunch::Reshape;
use copper::cuda::rewrite::splice;
use copper::source::SourceFile;

use super::WarpPerRow;
use crate::fixture::try_propose;
use crate::Proposals;

const ROW_SUMS: &str = r#"__global__ void rowsum(const int *M, int *y, int rows, int m) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        int acc = 0;
        for (int i = 0; i < m; i++)
            acc += M[row * m + i];
        y[row] = acc;
    }
}
"#;

/// `ROW_SUMS` (with `kernel` in its place when given) launched by `main`
/// with `launch` (`rowsum<<<…>>>(M, y, rows, 64);`, after `int rows`).
fn launched(kernel: Option<&str>, launch: &str) -> String {
    format!(
        "{}\nint main() {{\n    int rows = 300;\n    int *M, *y;\n    cudaMalloc(&M, rows * 64 * sizeof(int));\n    cudaMalloc(&y, rows * sizeof(int));\n    {launch}\n    return 0;\n}}\n",
        kernel.unwrap_or(ROW_SUMS)
    )
}

fn proposed(src: &str) -> Proposals {
    try_propose(&WarpPerRow, src, [128, 1, 1]).expect("the original can be checked")
}

fn reasons(p: &Proposals) -> Vec<&str> {
    p.skipped.iter().map(|s| s.reason.as_str()).collect()
}

#[test]
fn a_launched_row_sum_gets_one_row_per_warp_and_its_launch_scaled() {
    let src = launched(None, "rowsum<<<(rows + 127) / 128, 128>>>(M, y, rows, 64);");
    let p = proposed(&src);
    // Route (b) first, then route (a); both checked on their launches.
    assert_eq!(p.candidates.len(), 2, "{:?}", reasons(&p));
    let (b, a) = (&p.candidates[0], &p.candidates[1]);
    assert!(a.relaunch.is_none());
    let relaunch = b.relaunch.as_ref().expect("the launch changes");
    assert_eq!(relaunch.reshape, Reshape::ScaleGridX(32));
    assert!(
        splice(&src, &relaunch.edits)
            .contains("rowsum<<<((rows + 127) / 128) * 32, 128>>>(M, y, rows, 64);"),
        "{:?}",
        relaunch.edits
    );
    let text = copper::cuda::print::function(&b.function);
    for part in [
        "if (blockDim.x % 32 == 0) {",
        "int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;",
        "for (long long j = lane; j < m; j += 32) {",
        "} else {\n        if (blockIdx.x < gridDim.x / 32) {\n            int row = blockIdx.x * blockDim.x + threadIdx.x;",
    ] {
        assert!(text.contains(part), "`{part}` not in\n{text}");
    }
    assert!(!text.contains("k < 32"), "{text}");
    assert!(
        b.description
            .starts_with("each warp takes one row `row`, its global x index over 32;"),
        "{}",
        b.description
    );
    assert!(
        b.description.contains("the launch at line 16 changes: 32 times the blocks in x")
            && b.description.ends_with(
                "lanes now read consecutive `M` elements: 32 → 5 sectors per warp; writes of `y`: 4 → 1 sectors per warp"
            ),
        "{}",
        b.description
    );
}

#[test]
fn a_kernel_the_file_does_not_launch_keeps_its_launch() {
    let p = proposed(ROW_SUMS);
    assert_eq!(p.candidates.len(), 1);
    assert!(p.candidates[0].relaunch.is_none());
    assert!(
        reasons(&p).contains(
            &"each warp keeps the rows of its threads: `rowsum` is not launched in this file, so its launch cannot be changed with it"
        ),
        "{:?}",
        reasons(&p)
    );
}

#[test]
fn a_row_that_reads_the_block_index_keeps_its_launch() {
    let kernel = ROW_SUMS.replace("y[row] = acc;", "y[row] = acc + blockIdx.y;");
    let src = launched(Some(&kernel), "rowsum<<<3, 128>>>(M, y, rows, 64);");
    let p = proposed(&src);
    assert_eq!(p.candidates.len(), 1);
    assert!(p.candidates[0].relaunch.is_none());
    assert!(
        reasons(&p).contains(
            &"each warp keeps the rows of its threads: the row's code reads `blockIdx` other than through the row index"
        ),
        "{:?}",
        reasons(&p)
    );
}

#[test]
fn a_grid_whose_scaled_index_leaves_an_int_keeps_its_launch() {
    // 32 × 2²⁰ × 128 threads in x: the global index would pass 2³¹.
    let src = launched(None, "rowsum<<<1048576, 128>>>(M, y, rows, 64);");
    let file = parse_source(SourceFile::new("t.cu", &src));
    assert!(file
        .launches
        .iter()
        .any(|l| l.grid == Some([1 << 20, 1, 1])));
    let p = proposed(&src);
    assert!(p.candidates.iter().all(|c| c.relaunch.is_none()));
    assert!(
        reasons(&p).contains(
            &"each warp keeps the rows of its threads: the launch at line 16 would have 32 × 1048576 × 128 threads in x, more than an `int` index holds"
        ),
        "{:?}",
        reasons(&p)
    );
}
