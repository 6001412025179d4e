//! Structs with fixed-size array members (`struct Cell { float v[4]; int
//! n; }`), hand-computed: a member element is read and written at its C
//! address (`i·sizeof(Cell) + offsetof(v) + 4k`), in every metric; a member
//! index out of range is an error like any out-of-bounds access, never a
//! read of the next field; nested members (`float m[3][3]`) hold their
//! values in row-major order; hostile sizes and pointers to pointers get
//! one diagnostic naming the construct.

use copper::cuda::parse::parse_source;
use copper::ir::lower::lower_kernel;
use copper::ir::Value;
use copper::source::SourceFile;

mod common;
use common::{array, metric, simulate_source as run};

const CELL: &str = "struct Cell { float v[4]; int n; };\n";

/// The rendered lowering error of the kernel in `src`.
fn lower_err(src: &str) -> String {
    let parsed = parse_source(SourceFile::new("t.cu", src));
    let name = parsed.kernels().next().expect("a kernel").name.clone();
    lower_kernel(&parsed, &name).unwrap_err().render()
}

/// One warp; `cells` of 64 `Cell`s numbered in memory order (component
/// `c` of element `e` holds `5e + c`), `out` of 32 floats.
fn params(k: i64) -> String {
    let values: Vec<String> = (0..64 * 5).map(|v| v.to_string()).collect();
    format!(
        "[kernel.k]\ngrid=[1]\nblock=[32]\n[kernel.k.args]\nk={k}\n\
         [kernel.k.arrays.cells]\nlen=64\ninit=\"values\"\nvalues=[{}]\n\
         [kernel.k.arrays.out]\nlen=32\n",
        values.join(",")
    )
}

#[test]
fn member_elements_are_read_at_their_c_address() {
    // `cells[t].v[k]`: bytes 20t + 4k, the value 5t + k; 32 lanes span
    // 640 bytes = 20 sectors (whatever k), and the store 4.
    let src = format!(
        "{CELL}__global__ void k(const Cell *cells, float *out, int k) {{ int t = threadIdx.x; out[t] = cells[t].v[k]; }}"
    );
    for k in 0..4 {
        let r = run(&src, &params(k)).unwrap();
        assert_eq!(array(&r, "out")[7], Value::F((5 * 7 + k) as f64));
        assert_eq!(metric(&r, "sectors"), 24.0, "k = {k}");
    }
    // `cells[t / 4].v[t % 4]`: four consecutive floats of each of 8 cells,
    // bytes 20q + 4r: 160 bytes from 0, 5 sectors (the same loads as
    // through a flat float array would need 4).
    let src = format!(
        "{CELL}__global__ void k(const Cell *cells, float *out, int k) {{ int t = threadIdx.x; out[t] = cells[t / 4].v[t % 4]; }}"
    );
    let r = run(&src, &params(0)).unwrap();
    assert_eq!(array(&r, "out")[6], Value::F(5.0 + 2.0));
    assert_eq!(metric(&r, "sectors"), 9.0);
}

#[test]
fn member_elements_in_shared_memory_use_the_bank_layout() {
    // `s[t].v[1]`: word 5t + 1, an odd stride of words: conflict free.
    // `s[t / 4].v[t % 4]`: words 5q + r; words 35..38 share banks 3, 5 and
    // 6 with words 3, 5 and 6: a 2-way conflict on the write and the read.
    let conflicts = |index: &str| {
        let src = format!(
            "{CELL}__global__ void k(const Cell *cells, float *out, int k) {{ __shared__ Cell s[32]; int t = threadIdx.x; {index} = (float)t; out[t] = {index}; }}"
        );
        let r = run(&src, &params(0)).unwrap();
        assert_eq!(array(&r, "out")[9], Value::F(9.0));
        metric(&r, "conflicts")
    };
    assert_eq!(conflicts("s[t].v[1]"), 0.0);
    assert_eq!(conflicts("s[t / 4].v[t % 4]"), 2.0);
}

#[test]
fn member_writes_and_atomics_reach_their_component() {
    // Writing `v[k]` and the atomic on `v[t % 4]` change that component
    // only; `n` (component 4) keeps its value.
    let src = format!(
        "{CELL}__global__ void k(Cell *cells, float *out, int k) {{ int t = threadIdx.x; cells[t].v[k] = -1.0f; atomicAdd(&cells[0].v[t % 4], 1.0f); out[t] = (float)cells[t].n; }}"
    );
    let r = run(&src, &params(2)).unwrap();
    let cells = array(&r, "cells");
    assert_eq!(cells[0], Value::F(0.0 + 8.0));
    assert_eq!(cells[2], Value::F(-1.0 + 8.0));
    assert_eq!(cells[5 * 3 + 2], Value::F(-1.0));
    assert_eq!(cells[5 * 3 + 1], Value::F(16.0));
    assert_eq!(cells[5 * 3 + 4], Value::I(19));
    assert_eq!(array(&r, "out")[3], Value::F(19.0));
}

#[test]
fn a_member_index_out_of_range_is_an_out_of_bounds_access() {
    // `v[4]` would read `n` on the GPU; the simulator stops instead, in
    // global memory, in a struct local and for a negative index.
    let global = format!(
        "{CELL}__global__ void k(const Cell *cells, float *out, int k) {{ int t = threadIdx.x; out[t] = cells[t].v[k]; }}"
    );
    let local = format!(
        "{CELL}__global__ void k(const Cell *cells, float *out, int k) {{ int t = threadIdx.x; Cell c = cells[t]; out[t] = c.v[k + (t == 3)]; }}"
    );
    let e = run(&global, &params(4)).unwrap_err();
    assert!(
        e.message
            .contains("out-of-bounds access `cells[t].v[4]` (the array member has 4 elements)"),
        "{}",
        e.message
    );
    assert!(run(&global, &params(-1))
        .unwrap_err()
        .message
        .contains("`cells[t].v[-1]`"));
    let e = run(&local, &params(3)).unwrap_err();
    assert!(e.message.contains("`c.v[4]`"), "{}", e.message);
    assert_eq!(e.thread, [3, 0, 0]);
    // A constant index is checked when the kernel is read.
    let e = lower_err(&format!(
        "{CELL}__global__ void k(Cell *cells) {{ cells[0].v[4] = 1.0f; }}"
    ));
    assert!(
        e.contains("t.cu:2:")
            && e.contains("index 4 is out of the bounds of `cells[0].v` (4 elements)"),
        "{e}"
    );
}

#[test]
fn nested_members_are_row_major() {
    // `m[r][c]` of `struct Mat { float m[3][3]; char f; }` (40 bytes) is
    // component 3r + c; the identity times (1, 2, 3) plus `f`.
    let src = "struct Mat { float m[3][3]; char f; };\n\
               __global__ void k(const Mat *mats, const float *x, float *y) {\n\
               int r = threadIdx.x % 3;\n\
               float acc = 0.0f;\n\
               for (int c = 0; c < 3; ++c) acc += mats[0].m[r][c] * x[c];\n\
               y[threadIdx.x] = acc + (float)mats[0].f; }";
    let params = "[kernel.k]\ngrid=[1]\nblock=[3]\n\
                  [kernel.k.arrays.mats]\nlen=1\ninit=\"values\"\nvalues=[1,0,0,0,1,0,0,0,1,10]\n\
                  [kernel.k.arrays.x]\nlen=3\ninit=\"values\"\nvalues=[1,2,3]\n\
                  [kernel.k.arrays.y]\nlen=3\n";
    let r = run(src, params).unwrap();
    let y: Vec<Value> = array(&r, "y");
    assert_eq!(y, vec![Value::F(11.0), Value::F(12.0), Value::F(13.0)]);
    // m[1][3] is inside the member but past its row: an error too.
    let src = src.replace("m[r][c]", "m[r][c + 1]");
    let e = run(&src, params).unwrap_err();
    assert!(e.message.contains("`mats[0].m[r][3]`"), "{}", e.message);
}

#[test]
fn hostile_members_get_one_diagnostic() {
    // A member of 2^20 floats: one error naming it, nothing allocated.
    let e = lower_err(
        "struct Big { float a[1 << 20]; int n; };\n__global__ void k(Big *b) { b[0].n = 1; }",
    );
    assert!(
        e.contains("array member `a` of struct `Big` is too large")
            && e.contains("at most 4096 scalar components"),
        "{e}"
    );
    // A member used as a value, and a reference into one at a run-time
    // index.
    let e = lower_err(&format!(
        "{CELL}__global__ void k(Cell *cells, float *o) {{ o[0] = cells[0].v; }}"
    ));
    assert!(
        e.contains("an array member used as a value (index it)"),
        "{e}"
    );
    let e = lower_err(&format!(
        "{CELL}__global__ void k(Cell *cells, int j) {{ float &x = cells[0].v[j]; x = 1.0f; }}"
    ));
    assert!(e.contains("a reference to `cells[0].v[j]`"), "{e}");
}

#[test]
fn pointers_to_pointers_get_one_diagnostic_with_the_fix() {
    let e = lower_err("__global__ void k(int n,\n    float **rows) { rows[0][0] = 1.0f; }");
    assert!(e.starts_with("t.cu:2:5:"), "{e}");
    assert!(
        e.contains("unsupported: pointer to pointer (parameter `rows`)"),
        "{e}"
    );
    assert!(e.contains("rows[r * cols + c]"), "{e}");
}
