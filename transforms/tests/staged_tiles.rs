//! The staged transposition's tile as a reviewer expects it: sized by the
//! file's macro or the template's value parameter where the block's side
//! comes from one (numbers otherwise), padded by one 4-byte bank word
//! whatever the element type. (The comments of an early return:
//! `staged_transpose.rs`.)

mod common;

use copper_transforms::staged_transpose::StagedTranspose;

/// A launch in the file, so that copper sees separate allocations.
fn host(kernel: &str, ty: &str) -> String {
    format!(
        "
int main() {{
    {ty} *a, *b;
    cudaMalloc(&a, 4096 * sizeof({ty}));
    cudaMalloc(&b, 4096 * sizeof({ty}));
    {kernel}<<<dim3(4, 4), dim3(16, 16)>>>(a, b, 50, 70);
    return 0;
}}
"
    )
}

/// The first candidate's file (as an edit of `src`) and description, on
/// 16×16 blocks.
fn staged(src: &str) -> (String, String) {
    let found = common::rewrites(&StagedTranspose, src, [16, 16, 1]);
    let Some((desc, text)) = found.into_iter().next() else {
        panic!("no candidate for {src}");
    };
    (text, desc)
}

/// A naive transpose of `ty` elements whose block offsets are `side`.
fn naive(ty: &str, side: &str) -> String {
    format!(
        "__global__ void k(const {ty} *in, {ty} *__restrict__ out, int rows, int cols) {{
    int x = blockIdx.x * {side} + threadIdx.x;
    int y = blockIdx.y * {side} + threadIdx.y;
    if (x < cols && y < rows) {{
        out[x * rows + y] = in[y * cols + x];
    }}
}}
"
    )
}

#[test]
fn the_tile_is_sized_by_the_files_macro() {
    let src = format!(
        "#define TILE_DIM 16\n{}{}",
        naive("float", "TILE_DIM"),
        host("k", "float")
    );
    let (text, desc) = staged(&src);
    assert!(
        text.contains("    __shared__ float tile[TILE_DIM][TILE_DIM + 1];\n"),
        "{text}"
    );
    assert!(desc.contains("`tile[TILE_DIM][TILE_DIM + 1]`"), "{desc}");
    // The exchanged phase writes the macro as the kernel does.
    assert!(
        text.contains("int x = blockIdx.x * TILE_DIM + threadIdx.y;"),
        "{text}"
    );
}

#[test]
fn a_template_value_parameter_sizes_the_tile() {
    let src = format!(
        "template <typename T, int BS>\n{}{}",
        naive("T", "BS"),
        host("k<float, 16>", "float")
    );
    let (text, _) = staged(&src);
    assert!(
        text.contains("    __shared__ T tile[BS][BS + 1];\n"),
        "{text}"
    );
    assert!(
        text.starts_with("template <typename T, int BS>\n"),
        "{text}"
    );
}

#[test]
fn numbers_where_no_macro_gives_the_blocks_side() {
    // `blockDim.x`: nothing names the side.
    let (text, _) = staged(&format!(
        "{}{}",
        naive("float", "blockDim.x"),
        host("k", "float")
    ));
    assert!(
        text.contains("__shared__ float tile[16][16 + 1];"),
        "{text}"
    );
    // A macro of another value than the block's side is not the side.
    let src = format!(
        "#define N 16\n#define STEP 8\n{}{}",
        naive("float", "STEP"),
        host("k", "float")
    );
    let (text, _) = staged(&src);
    assert!(
        text.contains("__shared__ float tile[16][16 + 1];"),
        "{text}"
    );
}

#[test]
fn rows_are_padded_by_one_bank_word() {
    for (ty, row) in [
        ("__half", "16 + 2"),
        ("__nv_bfloat16", "16 + 2"),
        ("unsigned char", "16 + 4"),
        ("short", "16 + 2"),
        ("int", "16 + 1"),
        ("double", "16 + 1"),
    ] {
        let src = format!(
            "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n{}{}",
            naive(ty, "blockDim.x"),
            host("k", ty)
        );
        let (text, desc) = staged(&src);
        let decl = format!("__shared__ {ty} tile[16][{row}];");
        assert!(text.contains(&decl), "{ty}: {text}");
        assert!(desc.contains(&format!("`tile[16][{row}]`")), "{desc}");
    }
}
