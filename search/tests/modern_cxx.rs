//! Modern CUDA C++ of real suites (`testdata/modern/`): kernel templates
//! launched from host function templates, cooperative groups, pointer
//! parameters moved and local pointers; read, bounded and checked against
//! the simulator.

mod common;

use common::{copper_in, root, text, Scratch};

/// `copper ARGS` in `testdata/modern/`: its exit status and output.
fn run(args: &[&str]) -> (i32, String) {
    let o = copper_in(&root().join("testdata/modern"), args);
    (o.status.code().unwrap_or(-1), text(&o))
}

/// `copper simulate --dump` of the scratch file `NAME.cu` holding `src`
/// with `params` as its parameter file: the exit status, the output and
/// the final arrays (`Null` when none were written).
fn simulated(name: &str, src: &[u8], params: &str) -> (i32, String, serde_json::Value) {
    let scratch = Scratch::new();
    let cu = scratch.file(&format!("{name}.cu"), src);
    scratch.file(&format!("{name}.toml"), params.as_bytes());
    let dump = cu.with_extension("json");
    let (status, out) = run(&[
        "simulate",
        "--dump",
        &dump.to_string_lossy(),
        &cu.to_string_lossy(),
    ]);
    let json = serde_json::from_str(&std::fs::read_to_string(&dump).unwrap_or_default())
        .unwrap_or_default();
    (status, out, json)
}

/// The integers of a dumped array.
fn dumped(array: &serde_json::Value) -> Vec<i64> {
    array
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(serde_json::Value::as_f64)
                .map(|x| x as i64)
                .collect()
        })
        .unwrap_or_default()
}

/// `copper analyze --check FILE` exits 0, names every kernel of `kernels`
/// with a bound for every metric, and each bound is at least the worst
/// warp the simulator measured on the parameter file's inputs (at least
/// `checks` such rows).
fn assert_bounded_and_sound(file: &str, kernels: &[&str], checks: usize) {
    let (status, out) = run(&["analyze", "--check", file]);
    assert_eq!(status, 0, "{out}");
    assert!(!out.contains("error") && !out.contains("no bound"), "{out}");
    for k in kernels {
        assert!(out.contains(&format!("kernel {k}:")), "{k} missing:\n{out}");
    }
    let mut rows = 0;
    for line in out.lines().filter(|l| l.contains("simulated worst warp")) {
        let nums: Vec<f64> = line
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter_map(|w| w.parse().ok())
            .collect();
        let (bound, sim) = (nums[0], nums[1]);
        assert!(bound >= sim, "bound below the simulator: {line}\n{out}");
        rows += 1;
    }
    assert!(rows >= checks, "{rows} checks:\n{out}");
}

#[test]
fn host_templates_instantiate_the_kernels_they_launch() {
    let (status, out) = run(&["parse", "host_templates.cu"]);
    assert_eq!(status, 0, "{out}");
    for k in [
        "kernel scale_kernel<float>(",
        "kernel shift_kernel<int, 128>(",
        "kernel shift_kernel<float, 128>(",
    ] {
        assert!(out.contains(k), "{k} missing:\n{out}");
    }
    // No instantiation with the host template's parameter left in it.
    assert!(!out.contains("<T>") && !out.contains("<T,"), "{out}");
    assert_bounded_and_sound(
        "host_templates.cu",
        &[
            "scale_kernel<float>",
            "shift_kernel<int, 128>",
            "shift_kernel<float, 128>",
        ],
        15,
    );
}

#[test]
fn a_host_template_nobody_calls_leaves_the_kernel_to_instantiate() {
    let scratch = Scratch::new();
    let file = scratch.file(
        "uncalled_driver.cu",
        b"template <typename T>\n__global__ void inc(T *a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i] += (T)1;\n}\ntemplate <typename T>\nvoid run_inc(T *d, int n) { inc<T><<<(n + 255) / 256, 256>>>(d, n); }\n",
    );
    let path = file.to_string_lossy().to_string();
    let (status, out) = run(&["parse", &path]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("template never instantiated"), "{out}");
    let (status, out) = run(&["analyze", "--instantiate", "inc<double>", &path]);
    assert_eq!(status, 0, "{out}");
    assert!(
        out.contains("kernel inc<double>:") && !out.contains("error"),
        "{out}"
    );
}

#[test]
fn cooperative_groups_are_read_bounded_and_sound() {
    let (status, out) = run(&["parse", "coop_groups.cu"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("device function warp_total("), "{out}");
    assert_bounded_and_sound(
        "coop_groups.cu",
        &["block_sum", "tile_max", "warp_sums", "grid_scale"],
        20,
    );
}

#[test]
fn cooperative_group_reductions_compute_what_the_gpu_does() {
    let src = b"#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n__global__ void red(const int *in, int *out) {\n  auto tile = cg::tiled_partition<8>(cg::this_thread_block());\n  int v = in[threadIdx.x];\n  int s = cg::reduce(tile, v, cg::plus<int>());\n  int m = cg::reduce(tile, v, cg::less<int>());\n  out[threadIdx.x] = s * 1000 + m + 100 * tile.thread_rank();\n}\n";
    let values: Vec<i64> = (0..32).map(|i| (i * 7) % 13).collect();
    let list: Vec<String> = values.iter().map(i64::to_string).collect();
    let params = format!(
        "[kernel.red]\ngrid = [1]\nblock = [32]\n[kernel.red.arrays.in]\nlen = 32\ninit = \"values\"\nvalues = [{}]\n[kernel.red.arrays.out]\nlen = 32\n",
        list.join(", ")
    );
    let (status, out, json) = simulated("tile_reduce", src, &params);
    assert_eq!(status, 0, "{out}");
    let got = dumped(&json["red"]["out"]);
    let want: Vec<i64> = (0..32)
        .map(|i| {
            let tile = &values[i / 8 * 8..i / 8 * 8 + 8];
            tile.iter().sum::<i64>() * 1000
                + tile.iter().min().copied().unwrap_or(0)
                + 100 * (i as i64 % 8)
        })
        .collect();
    assert_eq!(got, want, "{json}");
}

#[test]
fn other_cooperative_groups_are_named_where_they_are_and_other_kernels_read() {
    let scratch = Scratch::new();
    let file = scratch.file(
        "coalesced.cu",
        b"#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n__global__ void odd(int *a) {\n  auto g = cg::coalesced_threads();\n  a[threadIdx.x] = 1;\n}\n__global__ void fine(int *a) {\n  cg::thread_block b = cg::this_thread_block();\n  a[b.thread_rank()] = 2;\n  b.sync();\n}\n",
    );
    let (status, out) = run(&["parse", &file.to_string_lossy()]);
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains(
            "coalesced.cu:4:12: error[unsupported]: not supported: `cg::coalesced_threads`"
        ),
        "{out}"
    );
    assert!(out.contains("kernel fine("), "{out}");
}

#[test]
fn moved_pointer_parameters_and_local_pointers_are_bounded_and_sound() {
    assert_bounded_and_sound(
        "pointer_moves.cu",
        &["copy_rows", "column_sums", "pair_swap"],
        15,
    );
}

#[test]
fn a_moved_pointer_parameter_reads_at_its_offset() {
    let scratch_dir = tempfile::tempdir().unwrap();
    let dump = scratch_dir.path().join("moved.json");
    let (status, out) = run(&[
        "simulate",
        "--kernel",
        "copy_rows",
        "--dump",
        &dump.to_string_lossy(),
        "pointer_moves.cu",
    ]);
    assert_eq!(status, 0, "{out}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&dump).unwrap_or_default())
            .unwrap_or_default();
    let k = &json["copy_rows"];
    assert_eq!(k["dst"].as_array().map(Vec::len), Some(32000), "{out}");
    assert_eq!(k["src"], k["dst"], "every row copied to its own place");
}

#[test]
fn pointers_to_locals_passed_to_device_functions_are_bounded_and_sound() {
    assert_bounded_and_sound("local_address.cu", &["window_stats"], 5);
}

#[test]
fn texture_objects_fetched_in_one_dimension_are_bounded_and_sound() {
    assert_bounded_and_sound(
        "texture_fetch.cu",
        &["scale_fetch", "smooth_fetch", "count_fetch"],
        15,
    );
    // Other fetches stay refused, each with its reason.
    let src = b"__global__ void k(cudaTextureObject_t t, float *o) { o[0] = tex2DLod<float>(t, 0.5f, 0.5f, 0.0f); }\n\
                __global__ void j(cudaTextureObject_t t, float *o) { o[0] = 1.0f; }\n\
                texture<float, 1, cudaReadModeElementType> r;\n\
                __global__ void l(float *o) { o[0] = tex1Dfetch(r, 0); }\n";
    let scratch = Scratch::new();
    scratch.file("tex2d.cu", src);
    let o = copper_in(scratch.path(), &["analyze", "tex2d.cu"]);
    let out = text(&o);
    assert_ne!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("tex2d.cu:1:61: error[unsupported]: textures and surfaces (`tex2DLod`)"),
        "{out}"
    );
    assert!(
        out.contains("tex2d.cu:2:19: error[lower]: texture object `t` is not read with `tex1Dfetch<T>(t, i)`"),
        "{out}"
    );
    assert!(
        out.contains("tex2d.cu:4:49: error[lower]: `r` is not a texture object parameter: legacy texture references"),
        "{out}"
    );
}

#[test]
fn textures_read_in_two_and_three_dimensions_are_bounded_and_sound() {
    assert_bounded_and_sound(
        "texture_2d.cu",
        &["copy_texels", "box_filter", "label_rows", "volume_slice"],
        20,
    );
    // What the reads are bounded as, and the model's assumptions, are said
    // at each texture.
    let (_, out) = run(&["analyze", "texture_2d.cu"]);
    assert!(
        out.contains("texture_2d.cu:9:29: warning[texture]: texture `src` is bounded as global reads of a 2-D array of `float` whose extents (`src.width`, `src.height`) the launch gives: unnormalized coordinates, point filtering and clamp addressing are assumed"),
        "{out}"
    );
    assert!(
        out.contains("texture `vol` is bounded as global reads of a 3-D array of `float` whose extents (`vol.width`, `vol.height`, `vol.depth`)"),
        "{out}"
    );
    assert!(out.contains("a 2-D array of `int`"), "{out}");
}

#[test]
fn texture_reads_clamp_their_coordinates_into_the_parameter_files_extents() {
    // A 3×2 texture read at x − 0.5 (floored: −1 … 3) in rows 0, 1, 2 (2
    // clamps to 1); a 2×2×2 volume read at integer coordinates.
    let src = b"__global__ void k(cudaTextureObject_t t, cudaTextureObject_t v, float *out, int *deep) {\n\
                int x = threadIdx.x, y = blockIdx.x;\n\
                out[y * 5 + x] = tex2D<float>(t, x - 0.5f, y + 0.5f);\n\
                deep[y * 5 + x] = tex3D<int>(v, x - 2, y, x);\n\
                }\n";
    let params = "[kernel.k]\ngrid = [3]\nblock = [5]\n\
                  args = { t = { width = 3, height = 2 }, v = { width = 2, height = 2, depth = 2 } }\n\
                  [kernel.k.arrays.t]\nlen = \"t.width * t.height\"\ninit = \"values\"\nvalues = [1, 2, 3, 4, 5, 6]\n\
                  [kernel.k.arrays.v]\nlen = 8\ninit = \"values\"\nvalues = [0, 1, 2, 3, 4, 5, 6, 7]\n\
                  [kernel.k.arrays.out]\nlen = 15\n[kernel.k.arrays.deep]\nlen = 15\n";
    let (status, out, json) = simulated("texture_clamp", src, params);
    assert_eq!(status, 0, "{out}");
    assert_eq!(
        dumped(&json["k"]["out"]),
        [1, 1, 2, 3, 3, 4, 4, 5, 6, 6, 4, 4, 5, 6, 6],
        "{json}"
    );
    // Element (z·2 + y)·2 + x of x = clamp(tid − 2), y = clamp(block),
    // z = clamp(tid).
    let want: Vec<i64> = (0..15)
        .map(|i| {
            let (tid, y) = (i % 5, (i / 5).min(1));
            let x = (tid - 2).clamp(0, 1);
            let z = tid.min(1);
            (z * 2 + y) * 2 + x
        })
        .collect();
    assert_eq!(dumped(&json["k"]["deep"]), want, "{json}");
    // An extent the parameter file does not give is named.
    let (status, out, _) = simulated(
        "texture_no_extent",
        src,
        &params.replace(", height = 2 }, v", " }, v"),
    );
    assert_eq!(status, 2, "{out}");
    assert!(out.contains("t.height"), "{out}");
}

#[test]
fn surfaces_read_and_written_are_bounded_and_sound() {
    assert_bounded_and_sound(
        "surface_2d.cu",
        &["brighten", "downsample", "copy_counts"],
        15,
    );
    let (_, out) = run(&["analyze", "surface_2d.cu"]);
    assert!(
        out.contains("surface_2d.cu:10:26: warning[surface]: surface `img` is bounded as global reads and writes of a 2-D array of `float` whose extents (`img.width`, `img.height`) the launch gives, `x` in bytes: a coordinate out of range is an out-of-bounds access (`cudaBoundaryModeTrap`"),
        "{out}"
    );
    assert!(
        out.contains("surface `to` is bounded as global reads and writes of a 1-D array of `int`, `x` in bytes"),
        "{out}"
    );
}

#[test]
fn surface_accesses_use_byte_columns_and_trap_out_of_range() {
    // A 3×2 surface read into a variable and written back ×10 at byte
    // column 4·x, row y; a 1-D surface written at element x.
    let src = b"__global__ void k(cudaSurfaceObject_t s, cudaSurfaceObject_t r, int shift) {\n\
                int x = threadIdx.x, y = blockIdx.x;\n\
                float v;\n\
                surf2Dread(&v, s, x * sizeof(float), y);\n\
                surf2Dwrite(v * 10.0f, s, x * sizeof(float), y);\n\
                if (y == 0) surf1Dwrite(surf1Dread<int>(r, x * 4) + x, r, (x + shift) * 4);\n\
                }\n";
    let params = "[kernel.k]\ngrid = [2]\nblock = [3]\n\
                  args = { shift = 0, s = { width = 3, height = 2 } }\n\
                  [kernel.k.arrays.s]\nlen = 6\ninit = \"values\"\nvalues = [1, 2, 3, 4, 5, 6]\n\
                  [kernel.k.arrays.r]\nlen = 3\ninit = \"values\"\nvalues = [7, 8, 9]\n";
    let (status, out, json) = simulated("surface_values", src, params);
    assert_eq!(status, 0, "{out}");
    assert_eq!(dumped(&json["k"]["s"]), [10, 20, 30, 40, 50, 60], "{json}");
    assert_eq!(dumped(&json["k"]["r"]), [7, 9, 11], "{json}");
    // Past the last column (a 2×2 surface read 3 wide), and before the
    // first byte of a 1-D one: out of bounds, at the access.
    let narrow = params.replace("width = 3, height = 2", "width = 2, height = 2");
    let (status, out, _) = simulated("surface_trap", src, &narrow);
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains("surface_trap.cu:4:16: error[sim]: out-of-bounds access `s[-1]`"),
        "{out}"
    );
    let (status, out, _) = simulated(
        "surface_trap_1d",
        src,
        &params.replace("shift = 0", "shift = -1"),
    );
    assert_eq!(status, 1, "{out}");
    assert!(out.contains("out-of-bounds access `r[-1]`"), "{out}");
    // Other boundary modes, and a surface accessed as two types, are
    // refused where they are.
    let other = b"__global__ void k(cudaSurfaceObject_t s) {\n\
                  surf2Dwrite(1.0f, s, 0, 0, cudaBoundaryModeClamp);\n\
                  }\n\
                  __global__ void j(cudaSurfaceObject_t s) {\n\
                  surf2Dwrite(1.0f, s, 0, 0);\n\
                  surf2Dwrite(1, s, 4, 0);\n\
                  }\n";
    let launch = "[kernel.k]\ngrid = [1]\nblock = [1]\n[kernel.j]\ngrid = [1]\nblock = [1]\n";
    let (status, out, _) = simulated("surface_modes", other, launch);
    assert_ne!(status, 0, "{out}");
    assert!(
        out.contains("surface_modes.cu:2:28: error[lower]: `surf2Dwrite` with a boundary mode other than `cudaBoundaryModeTrap`"),
        "{out}"
    );
    assert!(
        out.contains("surface_modes.cu:6:13: error[lower]: surface object `s` is accessed as `float` and as `int`"),
        "{out}"
    );
}

#[test]
fn generic_thread_groups_are_bounded_sound_and_rank_as_the_gpu_does() {
    assert_bounded_and_sound("thread_groups.cu", &["block_sum", "tile_ranks"], 10);
    let scratch = Scratch::new();
    let dump = scratch.path().join("thread-groups.json");
    let (status, out) = run(&[
        "simulate",
        "--dump",
        &dump.to_string_lossy(),
        "thread_groups.cu",
    ]);
    assert_eq!(status, 0, "{out}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&dump).unwrap_or_default())
            .unwrap_or_default();
    // 96 threads a block: 16-wide tiles, three warps.
    let want_rank: Vec<i64> = (0..192).map(|i| i % 96 % 16 + 1600).collect();
    let want_warps: Vec<i64> = (0..192).map(|i| i % 96 / 32 * 1000 + 3).collect();
    assert_eq!(dumped(&json["tile_ranks"]["rank"]), want_rank, "{json}");
    assert_eq!(dumped(&json["tile_ranks"]["warps"]), want_warps, "{json}");
}

#[test]
fn vector_views_are_bounded_and_sound() {
    assert_bounded_and_sound(
        "vector_views.cu",
        &["scale4", "add4", "swap_pairs", "invert_rgba", "sum_pairs"],
        25,
    );
}

/// The `sectors` row of kernel `k` in `analyze --check` output: bound and
/// simulated worst warp.
fn sectors_of(out: &str, k: &str) -> (f64, f64) {
    let at = out.find(&format!("kernel {k}:")).unwrap_or(0);
    let line = out[at..]
        .lines()
        .find(|l| l.trim_start().starts_with("sectors") && l.contains("simulated"))
        .unwrap_or("");
    let nums: Vec<f64> = line
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|w| w.parse().ok())
        .collect();
    (
        nums.first().copied().unwrap_or(-1.0),
        nums.get(1).copied().unwrap_or(-1.0),
    )
}

#[test]
fn a_float4_view_is_one_16_byte_access_per_lane() {
    let (status, out) = run(&["analyze", "--check", "vector_views.cu"]);
    assert_eq!(status, 0, "{out}");
    // A warp reads 32 consecutive `float4`s (512 bytes, 16 sectors) and
    // writes as many: 32, not the 4-byte accesses' 8 nor 4 × 32 requests.
    assert_eq!(sectors_of(&out, "scale4"), (32.0, 32.0), "{out}");
    // Two reads and a write of 16 bytes per lane.
    assert_eq!(sectors_of(&out, "add4"), (48.0, 48.0), "{out}");
    // An `int2` read (8 sectors) and two 4-byte member writes at an
    // 8-byte stride (8 each).
    assert_eq!(sectors_of(&out, "swap_pairs"), (24.0, 24.0), "{out}");
    // `uchar4`: 4 bytes per lane, 4 sectors each way.
    assert_eq!(sectors_of(&out, "invert_rgba"), (8.0, 8.0), "{out}");
}

#[test]
fn a_view_reads_and_writes_the_array_itself() {
    let scratch_dir = tempfile::tempdir().unwrap();
    let dump = scratch_dir.path().join("views.json");
    let (status, out) = run(&[
        "simulate",
        "--kernel",
        "sum_pairs",
        "--dump",
        &dump.to_string_lossy(),
        "vector_views.cu",
    ]);
    assert_eq!(status, 0, "{out}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&dump).unwrap_or_default())
            .unwrap_or_default();
    let k = &json["sum_pairs"];
    let (Some(ins), Some(outs)) = (k["in"].as_array(), k["out"].as_array()) else {
        panic!("no arrays dumped: {out}");
    };
    assert_eq!(outs.len(), 32768);
    for (i, o) in outs.iter().enumerate() {
        let want = ins[2 * i].as_f64().unwrap_or(0.0) + ins[2 * i + 1].as_f64().unwrap_or(0.0);
        // serde_json reads decimals to within an ulp or so.
        let got = o.as_f64().unwrap_or(f64::NAN);
        assert!(
            (got - want).abs() <= 1e-12 * want.abs().max(1.0),
            "out[{i}]: {got} vs {want}"
        );
    }
}

#[test]
fn an_unaligned_view_is_charged_as_unaligned_and_other_reinterpretations_are_refused() {
    let scratch = Scratch::new();
    let file = scratch.file(
        "views.cu",
        b"__global__ void shifted(const float *in, float *out, int n, int k) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i + 3 < n) {\n    float4 v = *(const float4 *)(in + i + k);\n    out[i] = v.x + v.w;\n  }\n}\n__global__ void punned(const float *in, int *out) {\n  out[threadIdx.x] = reinterpret_cast<const int2 *>(in)[threadIdx.x].x;\n}\n",
    );
    let (status, out) = run(&["analyze", "--block", "256", &file.to_string_lossy()]);
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains("views.cu:9:22: error[lower]: `reinterpret_cast` of a `float` array to `int2 *` is not supported (it reinterprets memory"),
        "{out}"
    );
    // 32 lanes 4 bytes apart reading 16 bytes each from any element (140
    // bytes: 6 sectors when the first lies 28 bytes into one), and an
    // aligned 4-byte write (4).
    let at = out.find("kernel shifted:").unwrap_or(0);
    assert!(
        out[at..].contains("sectors    per warp ≤ 10"),
        "{}",
        &out[at..]
    );
}

#[test]
fn unmodelled_surface_calls_are_named_where_they_are_and_other_kernels_read() {
    let scratch = Scratch::new();
    let file = scratch.file(
        "textures.cu",
        b"__global__ void fetch1d(cudaTextureObject_t tex, float *out, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) out[i] = tex1Dfetch<float>(tex, i);\n}\n__global__ void copy_surface(cudaSurfaceObject_t src, cudaSurfaceObject_t dst, int w) {\n  int x = blockIdx.x * blockDim.x + threadIdx.x;\n  float v;\n  surf3Dread(&v, src, x * sizeof(float), 0, 0);\n  surf3Dwrite(v, dst, x * sizeof(float), 0, 0);\n}\n__global__ void plain(float *a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i] *= 2.0f;\n}\n",
    );
    let (status, out) = run(&["parse", &file.to_string_lossy()]);
    assert_eq!(status, 1, "{out}");
    // A 1-D fetch from a texture object reads (texture_fetch.cu).
    assert!(out.contains("kernel fetch1d("), "{out}");
    assert!(!out.contains("`tex1Dfetch`"), "{out}");
    assert!(
        out.contains("textures.cu:8:3: error[unsupported]: textures and surfaces (`surf3Dread`) are not supported in kernels"),
        "{out}"
    );
    assert!(out.contains("kernel plain("), "{out}");
}

#[test]
fn fmt_whole_prints_cooperative_group_kernels_as_written_and_says_so() {
    let dir = root().join("testdata/modern");
    let src = std::fs::read_to_string(dir.join("coop_groups.cu")).expect("fixture");
    let o = copper_in(&dir, &["fmt", "--whole", "coop_groups.cu"]);
    assert!(o.status.success(), "{}", text(&o));
    // Reprinted, the groups would be desugared (`int block = 0;` and the
    // barriers and indices they stand for).
    assert_eq!(String::from_utf8_lossy(&o.stdout), src);
    let notes = String::from_utf8_lossy(&o.stderr);
    for (line, name) in [(13, "block_sum"), (51, "warp_total"), (71, "grid_scale")] {
        assert!(
            notes.contains(&format!(
                "coop_groups.cu:{line}:1: note: `{name}` is printed as written: it uses cooperative groups"
            )),
            "{notes}"
        );
    }
}

#[test]
fn struct_member_functions_are_listed_bounded_and_sound_and_not_rewritten() {
    assert_bounded_and_sound(
        "struct_methods.cu",
        &["nbody_step", "row_means", "rescale"],
        15,
    );
    let (status, out) = run(&["parse", "struct_methods.cu"]);
    assert_eq!(status, 0, "{out}");
    for sig in [
        "host/device function Vec3::dot(const Vec3 &o) const",
        "device function Vec3::scale(float s)",
        "device function Acc::add(float v)",
        "host/device function Body::kinetic() const",
    ] {
        assert!(out.contains(sig), "{sig} missing:\n{out}");
    }
    let (status, out) = run(&["optimize", "struct_methods.cu"]);
    assert_eq!(status, 0, "{out}");
    assert!(
        out.contains(
            "`row_means` calls member functions of structs, which the rewrites do not follow"
        ),
        "{out}"
    );
}

#[test]
fn template_struct_instances_are_structs_bounded_and_sound() {
    assert_bounded_and_sound(
        "template_structs.cu",
        &["power_sum", "pair_means", "weigh"],
        15,
    );
    let (status, out) = run(&["parse", "template_structs.cu"]);
    assert_eq!(status, 0, "{out}");
    for sig in [
        "kernel power_sum(const Complex__float *in, float *power, int n)",
        "device function Complex__double::add(const Complex__double &o) \
         (of the instance `Complex<double>`)",
        "device function Small__float__4::sum() const",
    ] {
        assert!(out.contains(sig), "{sig} missing:\n{out}");
    }
    // A reprint would write the instances' struct names: kept as written.
    let (status, out) = run(&["fmt", "template_structs.cu"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("    Complex<double> s = {0.0, 0.0};"), "{out}");
    assert!(!out.contains("Complex__"), "{out}");
    let (status, out) = run(&["optimize", "template_structs.cu"]);
    assert_eq!(status, 0, "{out}");
    for k in ["power_sum", "pair_means"] {
        let why = format!("`{k}` uses the template struct (or alias of an instance) `");
        assert!(out.contains(&why), "{why} missing:\n{out}");
    }
}

#[test]
fn template_structs_named_through_a_template_kernels_parameters_are_its_instances() {
    let kernels = [
        "minmax_range<float>",
        "minmax_range<double>",
        "window_sum<float, 8>",
        "row_mean<float>",
    ];
    assert_bounded_and_sound("template_struct_kernels.cu", &kernels, 20);
    let (status, out) = run(&["parse", "template_struct_kernels.cu"]);
    assert_eq!(status, 0, "{out}");
    // Each instantiation gets the instance its arguments give.
    for sig in [
        "device function MinMax__float::add(float v)",
        "device function MinMax__double::add(double v)",
        "device function Window__float__8::sum() const",
    ] {
        assert!(out.contains(sig), "{sig} missing:\n{out}");
    }
    assert!(!out.contains("error"), "{out}");
    let (status, out) = run(&["optimize", "template_struct_kernels.cu"]);
    assert_eq!(status, 0, "{out}");
}

#[test]
fn the_samples_shared_memory_accessor_is_the_launchs_dynamic_shared_memory() {
    assert_bounded_and_sound("shared_memory.cu", &["reduce<float>", "reduce<double>"], 10);
    let (status, out) = run(&["fmt", "shared_memory.cu"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("T *sdata = SharedMemory<T>();"), "{out}");
    let (status, out) = run(&["simulate", "shared_memory.cu"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("sdata[tid + s] (shared read)"), "{out}");
    let (status, out) = run(&["lint", "shared_memory.cu"]);
    assert!(status == 0 || status == 1, "{out}");
    assert!(
        out.contains("2 kernels") || out.contains("in 2 kernels"),
        "{out}"
    );
    // The warp-shuffle reduction leaves the accessor's array alone, and
    // says why.
    let (status, out) = run(&["optimize", "--explain", "shared_memory.cu"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("2 kernels in 1 file"), "{out}");
    assert!(
        out.contains("`sdata` is not a one-dimensional `__shared__` array"),
        "{out}"
    );
}
