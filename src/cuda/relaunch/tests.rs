//! Tests of [`super`]: launches exchanged and scaled, and refusals.

use super::*;
use crate::source::SourceFile;

const KERNEL: &str =
    "__global__ void k(float *a, int n) { a[threadIdx.x * n + threadIdx.y] = 0; }\n";

fn edited(host: &str) -> Result<String, RelaunchError> {
    reshaped(host, Reshape::SwapXy)
}

fn reshaped(host: &str, reshape: Reshape) -> Result<String, RelaunchError> {
    let src = format!("{KERNEL}{host}");
    let file = parse_source(SourceFile::new("t.cu", &src));
    relaunch(&file, "k", reshape).map(|r| splice(&src, &r.edits)[KERNEL.len()..].to_string())
}

#[test]
fn dim3_variables_and_their_fields_are_exchanged() {
    let host = "void run(float *a) {\n  int rows = 100, cols = 70;\n  dim3 block(32, 8);\n  dim3 grid((rows + block.x - 1) / block.x, (cols + block.y - 1) / block.y);\n  k<<<grid, block>>>(a, cols);\n}\n";
    assert_eq!(
        edited(host).unwrap(),
        "void run(float *a) {\n  int rows = 100, cols = 70;\n  dim3 block(8, 32);\n  dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);\n  k<<<grid, block>>>(a, cols);\n}\n"
    );
}

#[test]
fn literal_dim3_and_numbers_at_the_launch() {
    assert_eq!(
        edited("void run(float *a) { k<<<dim3(4, 2), dim3(16, 32)>>>(a, 64); }\n").unwrap(),
        "void run(float *a) { k<<<dim3(2, 4), dim3(32, 16)>>>(a, 64); }\n"
    );
    assert_eq!(
        edited("void run(float *a) { k<<<4, dim3(16, 32)>>>(a, 64); }\n").unwrap(),
        "void run(float *a) { k<<<dim3(1, 4), dim3(32, 16)>>>(a, 64); }\n"
    );
}

#[test]
fn unsafe_launches_are_refused_with_the_reason() {
    assert_eq!(
        edited("").unwrap_err(),
        RelaunchError::NotLaunched("k".into())
    );
    let err = edited("").unwrap_err().to_string();
    assert!(err.contains("not launched in this file"), "{err}");
    let shared = "__global__ void other(float *a) {}\nvoid run(float *a) {\n  dim3 block(32, 8);\n  k<<<4, block>>>(a, 64);\n  other<<<4, block>>>(a);\n}\n";
    let err = edited(shared).unwrap_err().to_string();
    assert!(
        err.contains("also the shape of the launch of `other`"),
        "{err}"
    );
    let computed = "dim3 pick(int n);\nvoid run(float *a, int n) { k<<<4, pick(n)>>>(a, n); }\n";
    let err = edited(computed).unwrap_err().to_string();
    assert!(err.contains("computed by `pick(…)`"), "{err}");
    let whole = "void run(float *a) {\n  dim3 block(32, 8);\n  dim3 b2 = block;\n  k<<<4, block>>>(a, 64);\n}\n";
    let err = edited(whole).unwrap_err().to_string();
    assert!(err.contains("used as a whole at line"), "{err}");
}

const SCALE: Reshape = Reshape::ScaleGridX(32);

#[test]
fn grids_are_scaled_in_x_and_blocks_kept() {
    assert_eq!(
        reshaped(
            "void run(float *a) { int n = 1000; k<<<(n + 255) / 256, 256>>>(a, n); }\n",
            SCALE
        )
        .unwrap(),
        "void run(float *a) { int n = 1000; k<<<((n + 255) / 256) * 32, 256>>>(a, n); }\n"
    );
    assert_eq!(
        reshaped(
            "void run(float *a) { k<<<dim3(4, 2), dim3(16, 32)>>>(a, 64); }\n",
            SCALE
        )
        .unwrap(),
        "void run(float *a) { k<<<dim3((4) * 32, 2), dim3(16, 32)>>>(a, 64); }\n"
    );
    let host = "void run(float *a) {\n  int rows = 100;\n  dim3 block(128);\n  dim3 grid((rows + block.x - 1) / block.x, 2);\n  k<<<grid, block>>>(a, rows);\n}\n";
    assert_eq!(
        reshaped(host, SCALE).unwrap(),
        "void run(float *a) {\n  int rows = 100;\n  dim3 block(128);\n  dim3 grid(((rows + block.x - 1) / block.x) * 32, 2);\n  k<<<grid, block>>>(a, rows);\n}\n"
    );
}

#[test]
fn scaled_grids_are_refused_where_they_cannot_be_checked() {
    let reads = "void run(float *a) {\n  dim3 grid(4);\n  k<<<grid, 128>>>(a, 64);\n  int seen = grid.x;\n}\n";
    let err = reshaped(reads, SCALE).unwrap_err();
    assert!(
        matches!(&err, RelaunchError::ReadsScaled { name, line: 5 } if name == "grid"),
        "{err}"
    );
    let big = "void run(float *a) { k<<<100000000, 128>>>(a, 64); }\n";
    let err = reshaped(big, SCALE).unwrap_err();
    assert!(
        matches!(
            err,
            RelaunchError::TooManyBlocks {
                blocks: 3_200_000_000,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        reshaped("", SCALE).unwrap_err(),
        RelaunchError::NotLaunched("k".into())
    );
}

#[test]
fn reshapes_of_lists_fill_missing_dimensions() {
    let (mut grid, mut block) = (vec![5], vec![64, 2]);
    SCALE.lists(&mut grid, &mut block);
    assert_eq!((grid, block), (vec![160, 1], vec![64, 2]));
    let (mut grid, mut block) = (vec![5], vec![64, 2]);
    Reshape::SwapXy.lists(&mut grid, &mut block);
    assert_eq!((grid, block), (vec![1, 5], vec![2, 64]));
}
