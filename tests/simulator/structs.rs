//! The simulator on vector types and structs: costs from byte addresses,
//! fields filled and updated one by one, the size limit.

use super::*;

/// One warp of `src` (kernel `k`) with `a` filled 0, 1, 2, … component by
/// component, `out` 32 floats and `b` (when it has one) 32 elements: its
/// sectors, conflicts and `out`.
fn vector_run(src: &str, a_len: u32) -> (f64, f64, Vec<Value>) {
    let values: Vec<String> = (0..a_len * 8).map(|i| i.to_string()).collect();
    let mut params = format!(
        "[kernel.k]\ngrid=[1]\nblock=[32]\n[kernel.k.arrays.a]\nlen={a_len}\ninit=\"values\"\nvalues=[{}]\n[kernel.k.arrays.out]\nlen=32\n",
        values.join(",")
    );
    if src.contains("*b") {
        params.push_str("[kernel.k.arrays.b]\nlen=32\n");
    }
    let r = run(src, &params).unwrap_or_else(|e| panic!("{}", e.message));
    (
        metric(&r, "sectors"),
        metric(&r, "conflicts"),
        array(&r, "out"),
    )
}

#[test]
fn vector_and_struct_accesses_are_costed_from_byte_addresses() {
    // A warp copying consecutive float4s: one 16-byte access per lane,
    // 512 bytes = 16 sectors for the read and 16 for the write.
    let (sectors, _, out) = vector_run(
        "__global__ void k(const float4 *a, float4 *b, float *out) { int t = threadIdx.x; b[t] = a[t]; out[t] = a[t].w; }",
        32,
    );
    // + `.w` alone: 4 bytes every 16, still 16 sectors; `out`: 4.
    assert_eq!(sectors, 16.0 + 16.0 + 16.0 + 4.0);
    assert_eq!(out[3], Value::F(15.0)); // a[3].w is component 4·3 + 3
                                        // struct { int start; int count; }: 8 bytes per element, `.count` of
                                        // 32 consecutive nodes spans 256 bytes = 8 sectors.
    let (sectors, _, out) = vector_run(
        "struct Node { int start; int count; };\n__global__ void k(const Node *a, float *out) { int t = threadIdx.x; out[t] = a[t].count; }",
        32,
    );
    assert_eq!(sectors, 8.0 + 4.0);
    assert_eq!(out[5], Value::F(11.0)); // component 2·5 + 1
                                        // struct { float m; float4 v; }: v at offset 16 (its alignment), 32
                                        // bytes per element; `.v.x` of each lane lies in its own sector.
    let (sectors, _, out) = vector_run(
        "typedef struct { float m; float4 v; } P;\n__global__ void k(const P *a, float *out) { int t = threadIdx.x; out[t] = a[t].v.x; }",
        32,
    );
    assert_eq!(sectors, 32.0 + 4.0);
    assert_eq!(out[3], Value::F(16.0)); // components m, v.x, …: 5·3 + 1
                                        // Shared float4: a warp's 16-byte store is served in four quarter-warp
                                        // phases of 32 words each, one per bank (degree 1, no conflict);
                                        // reading `.x` (words 0, 4, …, 124, one phase) puts 4 words in each
                                        // of 8 banks (degree 4, conflicts 3), and `.w` likewise.
    let (_, conflicts, out) = vector_run(
        "__global__ void k(const float *a, float *out) { __shared__ float4 s[32]; int t = threadIdx.x; s[t] = make_float4(a[t], 0.0f, 1.0f, 2.0f); out[t] = s[t].x + s[t].w; }",
        32,
    );
    assert_eq!(conflicts, 0.0 + 3.0 + 3.0);
    assert_eq!(out[7], Value::F(9.0));
}

#[test]
fn unsupported_type_constructs_are_named() {
    let lower_err = |src: &str| {
        let parsed = parse_source(SourceFile::new("t.cu", src));
        let name = parsed.kernels().next().expect("a kernel").name.clone();
        lower_kernel(&parsed, &name).unwrap_err().message
    };
    assert!(
        lower_err("__global__ void k(float **rows) { rows[0][0] = 1.0f; }")
            .contains("pointer to pointer (parameter `rows`)")
    );
    assert!(
        lower_err("__global__ void k(float4 *a, float *o) { o[0] = a[0]; }")
            .contains("a `float4` element used as a scalar")
    );
    assert!(lower_err("__global__ void k(float4 *a) { a[0].q = 1.0f; }")
        .contains("`float4` has no member `q`"));
}

#[test]
fn struct_arrays_are_filled_per_field() {
    let src = "struct Node { int starting; int no_of_edges; };\n__global__ void k(const Node *a, int *out) { int t = threadIdx.x; out[t] = a[t].starting * 10 + a[t].no_of_edges; }";
    let params = "[kernel.k]\ngrid=[1]\nblock=[4]\n[kernel.k.arrays.a]\nlen=4\ninit=\"const\"\nvalue=3\n[kernel.k.arrays.a.fields.no_of_edges]\ninit=\"values\"\nvalues=[1, 2]\n[kernel.k.arrays.out]\nlen=4\n";
    let r = run(src, params).unwrap();
    let out: Vec<i64> = array(&r, "out").iter().map(|v| v.as_i64()).collect();
    assert_eq!(out, vec![31, 32, 31, 32]);
    // A field the struct does not have is an error naming its fields.
    let parsed = parse_source(SourceFile::new("t.cu", src));
    let kernel = lower_kernel(&parsed, "k").unwrap();
    let bad = params.replace("fields.no_of_edges", "fields.edges");
    let p = ParamFile::from_toml(&bad).unwrap();
    let e = inputs_from_spec(&kernel, &p.kernel["k"])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no field `edges`") && e.contains("starting, no_of_edges"),
        "{e}"
    );
}

/// Structs whose fields have different scalar types keep each field's C
/// semantics: an `unsigned` field wraps at 32 bits, a `char` field at 8, a
/// `float` field rounds to single precision, a `double` field does not;
/// accesses are costed at the field's bytes in the C layout.
#[test]
fn mixed_struct_fields_keep_their_c_semantics() {
    // struct Rec { char tag; double value; unsigned int count; float scale; }: tag
    // at 0, value at 8, count at 16, scale at 20, 24 bytes.
    let src = "struct Rec { char tag; double value; unsigned int count; float scale; };\n\
               __global__ void k(Rec *r, double *out) {\n\
                 int t = threadIdx.x;\n\
                 r[t].tag = r[t].tag + 100;\n\
                 r[t].count = r[t].count * 65536;\n\
                 r[t].scale = r[t].scale / 3.0f;\n\
                 r[t].value = r[t].value / 3.0;\n\
                 Rec c = r[t];\n\
                 out[t] = c.value + c.scale;\n\
               }";
    let params = "[kernel.k]\ngrid=[1]\nblock=[32]\n\
                  [kernel.k.arrays.r]\nlen=32\n\
                  [kernel.k.arrays.r.fields.tag]\ninit=\"const\"\nvalue=100\n\
                  [kernel.k.arrays.r.fields.value]\ninit=\"const\"\nvalue=1\n\
                  [kernel.k.arrays.r.fields.count]\ninit=\"const\"\nvalue=65536\n\
                  [kernel.k.arrays.r.fields.scale]\ninit=\"const\"\nvalue=1\n\
                  [kernel.k.arrays.out]\nlen=32\n";
    let r = run(src, params).unwrap_or_else(|e| panic!("{}", e.message));
    let rec = array(&r, "r");
    // 100 + 100 wraps to -56 in a (signed) char.
    assert_eq!(rec[0], Value::I(-56));
    // 1.0 / 3 in double precision.
    assert_eq!(rec[1], Value::F(1.0 / 3.0));
    // 65536 * 65536 wraps to 0 in an unsigned int.
    assert_eq!(rec[2], Value::I(0));
    // 1.0f / 3 rounded to single precision.
    assert_eq!(rec[3], Value::F((1.0f32 / 3.0f32) as f64));
    let out = array(&r, "out");
    assert_eq!(out[0], Value::F(1.0 / 3.0 + (1.0f32 / 3.0f32) as f64));
    // Per warp, each field read and written alone (24-byte stride: 768
    // bytes = 24 sectors for every 1-, 4- or 8-byte field), the whole copy
    // `c = r[t]` reads each field again (4 × 24), and `out` takes 8.
    assert_eq!(metric(&r, "sectors"), 8.0 * 24.0 + 4.0 * 24.0 + 8.0);
}

/// Device functions returning structs and vectors: the returned value is
/// copied, read by member (`f(a).x`), passed on to another call, and
/// returned from several places (the first `return` reached wins).
#[test]
fn device_functions_return_structs() {
    let src = "struct Pick { float v; int at; };\n\
               __device__ float2 cmul(float2 a, float2 b) { return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }\n\
               __device__ Pick smaller(Pick a, Pick b) { if (b.v < a.v) { return b; } return a; }\n\
               __global__ void k(const float2 *a, float *out, Pick *best) {\n\
                 int t = threadIdx.x;\n\
                 float2 z = cmul(a[t], cmul(a[t], a[t]));\n\
                 out[t] = z.x + cmul(z, make_float2(0.0f, 1.0f)).x;\n\
                 Pick p; p.v = a[t].x; p.at = t;\n\
                 Pick q; q.v = a[t].y; q.at = -t;\n\
                 best[t] = smaller(p, q);\n\
               }";
    let params = "[kernel.k]\ngrid=[1]\nblock=[4]\n\
                  [kernel.k.arrays.a]\nlen=4\ninit=\"values\"\nvalues=[1, 2, 3, -1, 0, 5, 2, 2]\n\
                  [kernel.k.arrays.out]\nlen=4\n[kernel.k.arrays.best]\nlen=4\n";
    let r = run(src, params).unwrap_or_else(|e| panic!("{}", e.message));
    // (1 + 2i)^3 = -11 - 2i; times i: 2 - 11i; -11 + 2 = -9.
    let out: Vec<f64> = array(&r, "out").iter().map(|v| v.as_f64()).collect();
    assert_eq!(out[0], -9.0);
    // (3 - i)^3 = 18 - 26i: 18 + 26 = 44.
    assert_eq!(out[1], 44.0);
    let best = array(&r, "best");
    // Lane 0: a = (1, 2), keeps p (1.0, 0); lane 1: (3, -1), q (-1.0, -1).
    assert_eq!(
        best[..4],
        [Value::F(1.0), Value::I(0), Value::F(-1.0), Value::I(-1)]
    );
    // A returned struct used as a scalar is an error naming its type.
    let bad = "__device__ float2 f(float x) { return make_float2(x, x); }\n\
               __global__ void k(float *o) { o[0] = f(1.0f); }";
    let parsed = parse_source(SourceFile::new("t.cu", bad));
    let e = lower_kernel(&parsed, "k").unwrap_err().message;
    assert!(
        e.contains("returns a `float2` value, used as a scalar"),
        "{e}"
    );
}

#[test]
fn atomics_on_struct_fields_update_that_field_only() {
    let src = "struct Cell { int count; float mass; };\n\
               __global__ void k(Cell *cells, float3 *acc, const int *c) {\n\
               int i = threadIdx.x;\n\
               atomicAdd(&cells[c[i]].count, 1);\n\
               atomicAdd(&cells[c[i]].mass, 0.5f);\n\
               atomicAdd(&acc[c[i]].y, 2.0f);\n\
               __shared__ Cell best;\n\
               if (i == 0) { best.count = 100; best.mass = 0.0f; }\n\
               __syncthreads();\n\
               atomicMin(&best.count, 7 + i);\n\
               __syncthreads();\n\
               if (i == 0) { cells[2].count = best.count; }\n}\n";
    let params = "[kernel.k]\ngrid=[1,1,1]\nblock=[32,1,1]\n\
                  [kernel.k.arrays.cells]\nlen=3\ninit=\"zero\"\n\
                  [kernel.k.arrays.acc]\nlen=2\ninit=\"zero\"\n\
                  [kernel.k.arrays.c]\nlen=32\ninit=\"values\"\nvalues=[0,1,1]\n";
    let r = run(src, params).unwrap();
    // c = 0, 1, 1, 0, 1, 1, …: 11 zeros and 21 ones.
    let cells: Vec<f64> = array(&r, "cells").iter().map(|v| v.as_f64()).collect();
    assert_eq!(cells, [11.0, 5.5, 21.0, 10.5, 7.0, 0.0]);
    let acc: Vec<f64> = array(&r, "acc").iter().map(|v| v.as_f64()).collect();
    assert_eq!(acc, [0.0, 22.0, 0.0, 0.0, 42.0, 0.0]);
}

#[test]
fn the_size_limit_counts_struct_components() {
    let src = "__global__ void k(float4 *a) { a[threadIdx.x].x = 1.0f; }\n";
    let parsed = parse_source(SourceFile::new("t.cu", src));
    let kernel = lower_kernel(&parsed, "k").unwrap();
    // 2^24 elements are under the limit of 2^25 values; their 2^26
    // components are not.
    let p = ParamFile::from_toml(
        "[kernel.k]\ngrid=[1,1,1]\nblock=[32,1,1]\n[kernel.k.arrays.a]\nlen=16777216\ninit=\"zero\"\n",
    )
    .unwrap();
    let e = inputs_from_spec(&kernel, &p.kernel["k"]).unwrap_err();
    assert!(e.to_string().contains("67108864 values"), "{e}");
}
