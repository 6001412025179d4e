//! The rewrite before and after, on odd blocks too, and the trees it
//! leaves alone with the reason ([`crate::fixture`]). The fixture checks
//! every candidate against the original by simulation, every array
//! compared (the partial sums the original leaves in its input too).

use super::GlobalTreeToShared;
use crate::fixture::{check, check_not_applicable, rewrites, try_propose};

const POINTER: &str = r#"__global__ void reduce_global(int *in, int *out) {
    unsigned tid = threadIdx.x;
    int *p = in + blockIdx.x * blockDim.x;
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) p[tid] += p[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = p[0];
}
"#;

const POINTER_AFTER: &str = r#"__global__ void reduce_global(int *in, int *out) {
    unsigned tid = threadIdx.x;
    int *p = in + blockIdx.x * blockDim.x;
    __shared__ int p_tree[1024];
    if (blockDim.x <= 1024 && blockDim.y == 1 && blockDim.z == 1) {
        if (tid < blockDim.x / 2 * 2) {
            p_tree[tid] = p[tid];
        }
        __syncthreads();
        for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (tid < s) {
                p_tree[tid] += p_tree[tid + s];
            }
            __syncthreads();
        }
        if (tid < blockDim.x / 2) {
            p[tid] = p_tree[tid];
        }
        __syncthreads();
    } else {
        for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
            if (tid < s) p[tid] += p[tid + s];
            __syncthreads();
        }
    }
    if (tid == 0) out[blockIdx.x] = p[0];
}
"#;

const INDEXED: &str = r#"__global__ void block_max(float *data, float *maxima, int n) {
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (tid < stride) {
            data[i] = fmaxf(data[i + stride], data[i]);
        }
        __syncthreads();
    }
    if (tid == 0) maxima[blockIdx.x] = data[i];
}
"#;

#[test]
fn a_tree_through_a_block_pointer_runs_in_shared_memory() {
    let desc = check(&GlobalTreeToShared, [256, 1, 1], POINTER, POINTER_AFTER);
    assert!(
        desc.starts_with(
            "the tree reduction of `p` at line 4 runs in the `__shared__` array `p_tree`"
        ),
        "{desc}"
    );
    assert!(
        desc.contains("stores its final partial result back to `p` once, so global memory ends as the original leaves it"),
        "{desc}"
    );
}

#[test]
fn a_tree_indexing_the_input_directly_keeps_its_operands_order() {
    let found = rewrites(&GlobalTreeToShared, INDEXED, [256, 1, 1]);
    assert_eq!(found.len(), 1, "{found:#?}");
    let text = &found[0].1;
    assert!(text.contains("__shared__ float data_tree[1024];"), "{text}");
    assert!(text.contains("data_tree[tid] = data[i];"), "{text}");
    assert!(
        text.contains("data_tree[tid] = fmaxf(data_tree[tid + stride], data_tree[tid]);"),
        "{text}"
    );
    assert!(
        text.contains("if (tid < blockDim.x / 2) {\n            data[i] = data_tree[tid];"),
        "{text}"
    );
    let inline = INDEXED
        .replace(
            "data[i + stride]",
            "data[blockIdx.x * blockDim.x + tid + stride]",
        )
        .replace("data[i] = ", "data[blockIdx.x * blockDim.x + tid] = ")
        .replace(", data[i])", ", data[blockIdx.x * blockDim.x + tid])");
    let found = rewrites(&GlobalTreeToShared, &inline, [256, 1, 1]);
    assert_eq!(found.len(), 1, "{inline}");
}

#[test]
fn the_rewrite_is_checked_on_odd_blocks() {
    // Blocks whose halves are odd drop elements in the original's tree;
    // the copy keeps the same tree, and the fixture compares every array.
    for block in [
        [32, 1, 1],
        [96, 1, 1],
        [100, 1, 1],
        [1000, 1, 1],
        [1024, 1, 1],
    ] {
        for src in [POINTER, INDEXED] {
            let p = try_propose(&GlobalTreeToShared, src, block).expect("checkable");
            assert_eq!(p.candidates.len(), 1, "{block:?}");
        }
    }
}

#[test]
fn a_constant_start_sizes_the_copy_and_the_block_test() {
    let src = POINTER.replace("s = blockDim.x / 2;", "s = 64;");
    for block in [[128, 1, 1], [256, 1, 1]] {
        let found = rewrites(&GlobalTreeToShared, &src, block);
        assert_eq!(found.len(), 1, "{found:#?}");
        let text = &found[0].1;
        assert!(text.contains("__shared__ int p_tree[128];"), "{text}");
        assert!(
            text.contains("if (blockDim.x >= 128 && blockDim.y == 1 && blockDim.z == 1) {"),
            "{text}"
        );
        assert!(text.contains("if (tid < 64 * 2) {"), "{text}");
    }
}

#[test]
fn trees_it_cannot_move_say_why() {
    let reason =
        |why: &str| format!("the tree reduction of `p` at line 5 stays in global memory: {why}");
    check_not_applicable(
        &GlobalTreeToShared,
        [256, 1, 1],
        &POINTER.replace(
            "unsigned tid = threadIdx.x;",
            "unsigned tid = threadIdx.x;\n    if (blockIdx.x > 4096) return;",
        ),
        &reason("a thread may return before it, so not every thread reaches its barriers"),
    );
    let line4 =
        |why: &str| format!("the tree reduction of `p` at line 4 stays in global memory: {why}");
    check_not_applicable(
        &GlobalTreeToShared,
        [256, 1, 1],
        &POINTER.replace("s = blockDim.x / 2;", "s = blockDim.x / 4;"),
        &line4("its stride starts neither at `blockDim.x / 2` nor at a constant of 1 to 512"),
    );
    check_not_applicable(
        &GlobalTreeToShared,
        [1024, 1, 1],
        &POINTER.replace("s = blockDim.x / 2;", "s = 1024;"),
        &line4("its stride starts neither at `blockDim.x / 2` nor at a constant of 1 to 512"),
    );
    check_not_applicable(
        &GlobalTreeToShared,
        [256, 1, 1],
        &POINTER.replace(
            "unsigned s = blockDim.x / 2;",
            "unsigned char s = blockDim.x / 2;",
        ),
        &line4("its stride `s` may not hold its start (512)"),
    );
    check_not_applicable(
        &GlobalTreeToShared,
        [256, 1, 1],
        &POINTER
            .replace("int *in", "volatile int *in")
            .replace("int *p", "volatile int *p"),
        &line4("`p` is `volatile` (or `const`)"),
    );
    check_not_applicable(
        &GlobalTreeToShared,
        [256, 1, 1],
        &POINTER.replace("int *", "short *"),
        &line4("its elements are `short`, not a 32- or 64-bit number type"),
    );
}

#[test]
fn trees_not_on_one_slice_per_block_are_not_matched() {
    use copper::cuda::parse::parse_source;
    use copper::source::SourceFile;
    // Each thread's own pointer, an index that is not the thread's plus
    // an offset alike in the block, a pointer assigned again, a stride in
    // the offset: the thread's partner is not the element a copy indexed
    // by `tid` holds. The unchanged kernel is matched.
    let cases = [
        (POINTER.to_string(), true),
        (
            POINTER.replace(
                "blockIdx.x * blockDim.x;",
                "blockIdx.x * blockDim.x + tid % 2;",
            ),
            false,
        ),
        (
            POINTER.replace(
                "if (tid < s) p[tid] += p[tid + s];",
                "if (tid < s) p[2 * tid] += p[2 * tid + s];",
            ),
            false,
        ),
        (
            POINTER.replace("if (tid == 0) out", "p = in;\n    if (tid == 0) out"),
            false,
        ),
        (INDEXED.to_string(), true),
        (
            INDEXED.replace(
                "int i = blockIdx.x * blockDim.x",
                "int i = threadIdx.x * blockDim.x",
            ),
            false,
        ),
        (
            INDEXED
                .replace("int i = blockIdx.x", "int i = n + blockIdx.x")
                .replace("float *maxima, int n", "float *maxima, int n, int m")
                .replace("if (tid == 0)", "n = m;\n    if (tid == 0)"),
            false,
        ),
    ];
    for (src, matched) in cases {
        let file = parse_source(SourceFile::new("t.cu", &src));
        let f = file.kernels().next().expect("a kernel");
        let found = f
            .body
            .iter()
            .filter_map(|s| super::find::global_tree(f, s))
            .count();
        assert_eq!(found, usize::from(matched), "{src}");
    }
}

const WHILE: &str = r#"__global__ void reduce_global(int *in, int *out) {
    unsigned tid = threadIdx.x;
    int *p = in + blockIdx.x * blockDim.x;
    int s = blockDim.x / 2;
    while (s > 0) {
        if (tid < s) p[tid] += p[tid + s];
        __syncthreads();
        s >>= 1;
    }
    if (tid == 0) out[blockIdx.x] = p[0];
}
"#;

#[test]
fn a_while_tree_runs_in_shared_memory_as_its_for_form() {
    let commented = WHILE.replace(
        "int s = blockDim.x / 2;",
        "int s = blockDim.x / 2; // half the block",
    );
    for src in [commented.clone(), commented.replace("s >>= 1;", "s /= 2;")] {
        for block in [[256, 1, 1], [100, 1, 1], [1024, 1, 1]] {
            let found = rewrites(&GlobalTreeToShared, &src, block);
            assert_eq!(found.len(), 1, "{src}");
            let (desc, text) = &found[0];
            assert!(
                desc.starts_with(
                    "the `while` loop at line 5 is the tree reduction `for (s = …; …; …)`"
                ) && desc.contains(
                    "the tree reduction of `p` at line 5 runs in the `__shared__` array `p_tree`"
                ),
                "{desc}"
            );
            assert!(text.contains("__shared__ int p_tree[1024];"), "{text}");
            assert!(
                text.contains("if (tid < s) {\n                p_tree[tid] += p_tree[tid + s];"),
                "{text}"
            );
            // Other blocks run the loop as written: a `while`, its
            // comments kept.
            let other = text.split("} else {").nth(1).unwrap_or_default();
            assert_eq!(text.matches("while (s > 0)").count(), 1, "{text}");
            assert!(
                other.contains("int s = blockDim.x / 2; // half the block\n")
                    && other.contains("while (s > 0)"),
                "{text}"
            );
        }
    }
    // With the barrier first, the loop is a barrier and the `for` form
    // with one barrier more after it.
    let first = WHILE.replace(
        "if (tid < s) p[tid] += p[tid + s];\n        __syncthreads();",
        "__syncthreads();\n        if (tid < s) p[tid] += p[tid + s];",
    );
    let found = rewrites(&GlobalTreeToShared, &first, [256, 1, 1]);
    assert_eq!(found.len(), 1, "{first}");
    assert!(
        found[0]
            .0
            .contains("its leading barrier placed before the loop"),
        "{}",
        found[0].0
    );
}

#[test]
fn a_while_tree_whose_counter_is_used_after_it_is_not_matched() {
    let src = WHILE.replace("out[blockIdx.x] = p[0];", "out[blockIdx.x] = p[0] + s;");
    let p = try_propose(&GlobalTreeToShared, &src, [256, 1, 1]).expect("checkable");
    assert!(p.candidates.is_empty() && p.skipped.is_empty(), "{src}");
}

#[test]
fn a_copy_that_overflows_the_static_shared_memory_is_refused() {
    let line5 =
        |why: &str| format!("the tree reduction of `p` at line 5 stays in global memory: {why}");
    let with = |decl: &str| {
        POINTER.replace(
            "unsigned tid = threadIdx.x;",
            &format!("unsigned tid = threadIdx.x;\n    {decl}"),
        )
    };
    // 45060 + 4096 bytes is more than 48 KiB.
    check_not_applicable(
        &GlobalTreeToShared,
        [256, 1, 1],
        &with("__shared__ int big[11265];"),
        &line5("its copy of 1024 elements takes 4096 bytes, and with the kernel's 45060 bytes of shared memory more than 49152"),
    );
    // A copy of doubles takes 8 KiB.
    check_not_applicable(
        &GlobalTreeToShared,
        [256, 1, 1],
        &with("__shared__ float big[10 * 1024 + 1];").replace("int *", "double *"),
        &line5("its copy of 1024 elements takes 8192 bytes, and with the kernel's 40964 bytes of shared memory more than 49152"),
    );
    check_not_applicable(
        &GlobalTreeToShared,
        [256, 1, 1],
        &with("extern __shared__ int dyn[];"),
        &line5("the kernel's `extern __shared__` array takes what each launch gives it and no launch in the file says how much, so its copy of 1024 elements may not fit beside it"),
    );
    // The launches in the file size the dynamic array: 45 KiB leave no
    // room for the copy, 1 KiB does.
    let launched = |bytes: u32| {
        format!(
            "{}\nvoid host(int *in, int *out) {{ reduce_global<<<64, 256, {bytes}>>>(in, out); }}\n",
            with("extern __shared__ int dyn[];")
        )
    };
    check_not_applicable(
        &GlobalTreeToShared,
        [256, 1, 1],
        &launched(45 * 1024 + 4),
        &line5("its copy of 1024 elements takes 4096 bytes, and with the kernel's 0 bytes of shared memory and the 46084 bytes of dynamic shared memory the launch at line 12 asks for more than 49152"),
    );
    assert_eq!(
        rewrites(&GlobalTreeToShared, &launched(1024), [256, 1, 1]).len(),
        1
    );
    // Exactly 48 KiB in all fits.
    let found = rewrites(
        &GlobalTreeToShared,
        &with("__shared__ int big[11264];"),
        [256, 1, 1],
    );
    assert_eq!(found.len(), 1, "{found:#?}");
}
