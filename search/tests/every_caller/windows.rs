//! The every-caller promise over generated sliding windows, the halo
//! tiles' kernels: 1-D windows around or ahead of each element, and 2-D
//! box blurs, mean filters and Jacobi-like stencils in the ways students
//! write them.

use copper::cuda::parse::parse_source;
use copper::sim::params::LaunchSpec;
use copper::source::SourceFile;
use copper_search::pipeline::Cache;
use rayon::prelude::*;

use super::{check_kernels_on, check_kernels_varied, count, report, settings, Found, Rng};

/// Block shapes the halo tiles are checked on: the odd and extreme 1-D
/// blocks a tile sized from `blockDim.x` must handle, and 2-D blocks,
/// which must run the original code.
pub(super) const WINDOW_SHAPES: [[u64; 3]; 9] = [
    [1, 1, 1],
    [31, 1, 1],
    [32, 1, 1],
    [33, 1, 1],
    [256, 1, 1],
    [1024, 1, 1],
    [16, 16, 1],
    [32, 4, 1],
    [1, 32, 1],
];

/// The same promise over generated sliding windows
/// (`COPPER_EVERY_CALLER_WINDOWS=N` of them, 12 by default; see
/// [`generated_window`]): at least one in three must get a halo tile (a
/// window of radius 1 or 2 does not pay for it), and every rewrite must be
/// right on every block of [`WINDOW_SHAPES`], at sizes smaller than, equal
/// to and bigger than the grid, reading no element past what the original
/// reads (the checker's launch with arrays shrunk to what the original
/// accesses).
#[test]
fn halo_tiles_of_generated_windows_are_right_for_every_block() {
    let n: u64 = count("COPPER_EVERY_CALLER_WINDOWS", 12);
    let settings = settings();
    let cache = Cache::default();
    let found: Vec<Found> = (0..n)
        .into_par_iter()
        .flat_map_iter(|seed| {
            let src = generated_window(seed);
            let file = parse_source(SourceFile::new(format!("window-{seed}.cu"), &src));
            check_kernels_on(&file, &settings, &cache, &WINDOW_SHAPES)
        })
        .collect();
    report(&found, &format!("{n} generated window kernels"));
    let tiled = tiled(&found);
    println!("{tiled} of them halo tiles");
    assert!(
        tiled * 3 >= n as usize,
        "only {tiled} of {n} generated window kernels got a halo tile"
    );
}

/// Kernel `seed` summing a window of radius `R` from 1 to 8 (a macro or a
/// local `const int`; the element `i + k` written out or copied into a
/// local, perhaps clamped to the array there by `if`s, `min`/`max` or
/// `?:`) around each thread's element (`k = -R … R`, with a
/// lower bound on `i + k` and maybe an upper one, unless clamped) or ahead of it
/// (`k = 0 … 2R - 1`, guarded by `i + k < n` or not at all), under
/// `if (i < n)`, after `if (i >= n) return;`, under `if (i >= R && i <
/// n - R)`, or for every thread.
fn generated_window(seed: u64) -> String {
    let mut r = Rng(seed.wrapping_mul(0xbb67_ae85_84ca_a73b) ^ 0x4a10);
    let ty = r.pick(&["int", "float"]);
    let radius = 1 + r.below(8);
    let (define, local) = if r.below(3) == 0 {
        (String::new(), format!("const int R = {radius};\n    "))
    } else {
        (format!("#define R {radius}\n"), String::new())
    };
    let idx = r.pick(&[
        "blockIdx.x * blockDim.x + threadIdx.x",
        "threadIdx.x + blockIdx.x * blockDim.x",
    ]);
    let (copy, el) = r.pick(
        &[
            &("", "i + k"),
            &("", "k + i"),
            &("int j = i + k;\n            ", "j"),
            // Clamped to the array through the local: no guard.
            &(
                "int j = i + k;\n            if (j < 0) j = 0;\n            if (j >= n) j = n - 1;\n            ",
                "j",
            ),
            &(
                "int j = i + k;\n            j = min(max(j, 0), n - 1);\n            ",
                "j",
            ),
            &(
                "int j = i + k;\n            j = j < 0 ? 0 : (j > n - 1 ? n - 1 : j);\n            ",
                "j",
            ),
        ][..],
    );
    let clamped = copy.contains("n - 1");
    let (range, guard) = if clamped {
        let range = r.pick(&["int k = -R; k <= R; k++", "int k = 0; k < 2 * R; k++"]);
        (range, "")
    } else if r.below(2) == 0 {
        let guard = r.pick(&[
            "if ({el} >= 0 && {el} < n)",
            "if (0 <= {el} && n > {el})",
            "if ({el} >= 0)",
            "if ({el} < 0 || {el} >= n) continue;",
        ]);
        ("int k = -R; k <= R; k++", guard)
    } else {
        let guard = r.pick(&["if ({el} < n)", ""]);
        ("int k = 0; k < 2 * R; k++", guard)
    };
    let guard = guard.replace("{el}", el);
    let (open, close) = r.pick(
        &[
            &("if (i < n) {", "}"),
            &("if (i >= n) return;\n    {", "}"),
            &("if (i >= R && i < n - R) {", "}"),
            &("{", "}"),
        ][..],
    );
    format!(
        "{define}__global__ void k(const {ty} *in, {ty} *out, int n) {{
    {local}int i = {idx};
    {open}
        {ty} s = 0;
        for ({range}) {{
            {copy}{guard} s += in[{el}];
        }}
        out[i] = s;
    {close}
}}
"
    )
}

/// Block shapes the 2-D halo tiles are checked on: blocks a `32 × 32`
/// tile must handle (a single thread, odd widths, one row or column,
/// wide and tall), blocks past it (`33 × 3`) and a 3-D block, which must
/// run the original code.
pub(super) const WINDOW_2D_SHAPES: [[u64; 3]; 9] = [
    [1, 1, 1],
    [31, 1, 1],
    [16, 16, 1],
    [32, 8, 1],
    [8, 32, 1],
    [33, 3, 1],
    [32, 32, 1],
    [1, 32, 1],
    [8, 4, 2],
];

/// The same promise over generated 2-D windows
/// (`COPPER_EVERY_CALLER_WINDOWS_2D=N` of them, 12 by default; see
/// [`generated_window_2d`]): at least one in three must get a halo tile,
/// and every rewrite must be right on every block of
/// [`WINDOW_2D_SHAPES`], at the checker's image and grid sizes (partial
/// last blocks, grids smaller and larger than the image) and at images
/// not square ([`not_square`]), reading no element past what the
/// original reads.
#[test]
fn halo_tiles_of_generated_2d_windows_are_right_for_every_block() {
    let n: u64 = count("COPPER_EVERY_CALLER_WINDOWS_2D", 12);
    let settings = settings();
    let cache = Cache::default();
    let found: Vec<Found> = (0..n)
        .into_par_iter()
        .flat_map_iter(|seed| {
            let src = generated_window_2d(seed);
            let file = parse_source(SourceFile::new(format!("window2d-{seed}.cu"), &src));
            check_kernels_varied(&file, &settings, &cache, &WINDOW_2D_SHAPES, &not_square)
        })
        .collect();
    report(&found, &format!("{n} generated 2-D window kernels"));
    let tiled = tiled(&found);
    println!("{tiled} of them halo tiles");
    assert!(
        tiled * 3 >= n as usize,
        "only {tiled} of {n} generated 2-D window kernels got a halo tile"
    );
}

/// The synthesized launch `spec` with images wider than tall (`h` half
/// of `w`, plus one) and taller than wide (`h = w + 3`): the synthesized
/// ones are square, which would hide rows and columns taken for each
/// other.
pub(super) fn not_square(spec: LaunchSpec) -> Vec<LaunchSpec> {
    let Some(&w) = spec.args.get("w") else {
        return Vec::new();
    };
    [(w / 2.0).floor() + 1.0, w + 3.0]
        .into_iter()
        .map(|h| {
            let mut s = spec.clone();
            s.args.insert("h".to_string(), h);
            s
        })
        .collect()
}

/// Kernel `seed` summing a `(2R + 1) × (2R + 1)` window (`R` from 1 to 3,
/// a macro or a local `const int`) around each thread's pixel of a `w ×
/// h` image of `int`s or `float`s: reads guarded by bounds on the row and
/// column (the positions copied into locals or written out, or `continue`
/// past the image), clamped with `min`/`max`, `?:` or `if`s on the
/// locals, a row or column skipped by `continue` in the outer loop, or
/// unguarded for interior pixels only; under `if (x < w
/// && y < h)`, after `if (x >= w || y >= h) return;` or under the
/// interior's bounds; the row loop outside or inside.
fn generated_window_2d(seed: u64) -> String {
    let mut r = Rng(seed.wrapping_mul(0x510e_527f_ade6_82d1) ^ 0x2d2d);
    let ty = r.pick(&["int", "float"]);
    let radius = 1 + r.below(3);
    let (define, local) = if r.below(3) == 0 {
        (String::new(), format!("const int R = {radius};\n    "))
    } else {
        (format!("#define R {radius}\n"), String::new())
    };
    let x = r.pick(&[
        "blockIdx.x * blockDim.x + threadIdx.x",
        "threadIdx.x + blockIdx.x * blockDim.x",
    ]);
    let y = r.pick(&[
        "blockIdx.y * blockDim.y + threadIdx.y",
        "threadIdx.y + blockDim.y * blockIdx.y",
    ]);
    let interior = ("if (x >= R && x < w - R && y >= R && y < h - R) {", "}");
    let guarded = [
        &("if (x < w && y < h) {", "}"),
        &("if (x >= w || y >= h) return;\n    {", "}"),
    ];
    // A row (or column) skipped in the outer loop, before the inner one.
    let mut outer_skip = None;
    let (copy, read, (open, close)) = match r.below(8) {
        0 => (
            "int yy = y + dy, xx = x + dx;\n                ",
            "if (yy >= 0 && yy < h && xx >= 0 && xx < w) s += in[yy * w + xx];",
            *r.pick(&guarded[..]),
        ),
        1 => (
            "",
            "if (y + dy >= 0 && y + dy < h && x + dx >= 0 && x + dx < w) s += in[(y + dy) * w + x + dx];",
            ("if (x < w && y < h) {", "}"),
        ),
        2 => (
            "int yy = min(max(y + dy, 0), h - 1);\n                int xx = min(max(x + dx, 0), w - 1);\n                ",
            r.pick(&["s += in[yy * w + xx];", "s += in[xx + yy * w];"]),
            *r.pick(&guarded[..]),
        ),
        // Clamps and guards through statements on the locals.
        3 => (
            "int xx = x + dx;\n                if (xx < 0) xx = 0;\n                if (xx >= w) xx = w - 1;\n                int yy = y + dy;\n                yy = yy < 0 ? 0 : (yy > h - 1 ? h - 1 : yy);\n                ",
            "s += in[yy * w + xx];",
            *r.pick(&guarded[..]),
        ),
        4 => (
            "int xx = x + dx, yy = y + dy;\n                if (xx < 0 || xx >= w) continue;\n                if (yy < 0 || yy >= h) continue;\n                ",
            "s += in[yy * w + xx];",
            *r.pick(&guarded[..]),
        ),
        5 => (
            "int xx = x + dx;\n                xx = min(max(xx, 0), w - 1);\n                int yy = y + dy;\n                if (yy < 0 || yy >= h) continue;\n                ",
            "s += in[yy * w + xx];",
            *r.pick(&guarded[..]),
        ),
        6 => (
            "",
            r.pick(&["s += in[(y + dy) * w + (x + dx)];", "s += in[(y + dy) * w + x + dx];"]),
            interior,
        ),
        _ => {
            outer_skip = Some(r.below(2) == 0);
            ("", "s += in[yy * w + xx];", *r.pick(&guarded[..]))
        }
    };
    let rows_outside = r.below(3) != 0;
    let (outer, inner) = if rows_outside {
        ("int dy = -R; dy <= R; dy++", "int dx = -R; dx <= R; dx++")
    } else {
        ("int dx = -R; dx <= R; dx++", "int dy = -R; dy <= R; dy++")
    };
    if let Some(inner_skips) = outer_skip {
        // `int yy = y + dy; if (yy < 0 || yy >= h) continue;` before the
        // inner loop, the inner position skipped or clamped in it.
        let skip = |p: &str, q: &str, m: &str| {
            format!("int {p} = {q};\n            if ({p} < 0 || {p} >= {m}) continue;")
        };
        let clamp = |p: &str, q: &str, m: &str| format!("int {p} = min(max({q}, 0), {m} - 1);");
        let [(op, oq, om), (ip, iq, im)] = if rows_outside {
            [("yy", "y + dy", "h"), ("xx", "x + dx", "w")]
        } else {
            [("xx", "x + dx", "w"), ("yy", "y + dy", "h")]
        };
        let in_inner = if inner_skips {
            skip(ip, iq, im)
        } else {
            clamp(ip, iq, im)
        };
        return format!(
            "{define}__global__ void k(const {ty} *in, {ty} *out, int w, int h) {{
    {local}int x = {x};
    int y = {y};
    {open}
        {ty} s = 0;
        for ({outer}) {{
            {}
            for ({inner}) {{
                {in_inner}
                {read}
            }}
        }}
        out[y * w + x] = s;
    {close}
}}
",
            skip(op, oq, om)
        );
    }
    format!(
        "{define}__global__ void k(const {ty} *in, {ty} *out, int w, int h) {{
    {local}int x = {x};
    int y = {y};
    {open}
        {ty} s = 0;
        for ({outer})
            for ({inner}) {{
                {copy}{read}
            }}
        out[y * w + x] = s;
    {close}
}}
"
    )
}

/// How many of `found` got a halo tile.
pub(super) fn tiled(found: &[Found]) -> usize {
    found
        .iter()
        .filter(|f| f.applied.contains(&"halo tile"))
        .count()
}
