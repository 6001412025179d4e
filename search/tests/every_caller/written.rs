//! The every-caller promise over generated stencils written out as
//! neighbour reads (`in[i - 1] + in[i] + in[i + 1]`, `in[idx - w] + …`),
//! 1-D and 2-D: random sets of offsets, index forms and guards, each
//! rewrite checked on every block of the loop-form windows' shapes.

use copper::cuda::parse::parse_source;
use copper::sim::params::LaunchSpec;
use copper::source::SourceFile;
use copper_search::pipeline::{Cache, Settings};
use rayon::prelude::*;

use super::windows::{not_square, tiled, WINDOW_2D_SHAPES, WINDOW_SHAPES};
use super::{check_kernels_on, check_kernels_varied, count, report, settings, Found, Rng};

/// The search's settings, ranked by sectors: a tile over one or two
/// neighbours seldom pays on `wsteps`, the default ranking, and a rewrite
/// that is never chosen is never checked.
fn by_sectors() -> Settings {
    let mut s = settings();
    if let Some(m) = s.metrics.iter().position(|m| m.name == "sectors") {
        s.rank_metric = m;
    }
    s
}

/// Generated 1-D stencils written out (`COPPER_EVERY_CALLER_WINDOWS=N`
/// of them, 12 by default; see [`generated_written`]), ranked by sectors:
/// at least one in four must get a halo tile, and every rewrite must be
/// right on every block of [`WINDOW_SHAPES`], reading no element past
/// what the original reads.
#[test]
fn halo_tiles_of_generated_written_windows_are_right_for_every_block() {
    let n: u64 = count("COPPER_EVERY_CALLER_WINDOWS", 12);
    let settings = by_sectors();
    let cache = Cache::default();
    let found: Vec<Found> = (0..n)
        .into_par_iter()
        .flat_map_iter(|seed| {
            let src = generated_written(seed);
            let file = parse_source(SourceFile::new(format!("written-{seed}.cu"), &src));
            check_kernels_on(&file, &settings, &cache, &WINDOW_SHAPES)
        })
        .collect();
    report(&found, &format!("{n} generated 1-D stencils written out"));
    let tiled = tiled(&found);
    println!("{tiled} of them halo tiles");
    assert!(
        tiled * 4 >= n as usize,
        "only {tiled} of {n} generated stencils written out got a halo tile"
    );
}

/// `+ v`, `- v` or nothing, for offset `c` of `name` (`2 * w`).
fn plus(c: i64, name: &str) -> String {
    let v = match (c.unsigned_abs(), name) {
        (0, _) => return String::new(),
        (a, "") => a.to_string(),
        (1, n) => n.to_string(),
        (a, n) => format!("{a} * {n}"),
    };
    format!(" {} {v}", if c < 0 { '-' } else { '+' })
}

/// The offsets to read: a random non-empty subset of `-r … r` (for each
/// of `axes` axes) with an offset other than 0, the extremes `-r` or `r`
/// among them.
fn offsets(r: &mut Rng, radius: i64, axes: usize) -> Vec<Vec<i64>> {
    let all: Vec<Vec<i64>> = match axes {
        1 => (-radius..=radius).map(|x| vec![x]).collect(),
        _ => (-radius..=radius)
            .flat_map(|y| (-radius..=radius).map(move |x| vec![y, x]))
            .collect(),
    };
    let mut picked: Vec<Vec<i64>> = all.iter().filter(|_| r.below(2) == 0).cloned().collect();
    let edge = if axes == 1 {
        vec![radius * if r.below(2) == 0 { -1 } else { 1 }]
    } else {
        vec![radius * if r.below(2) == 0 { -1 } else { 1 }, 0]
    };
    if !picked.contains(&edge) {
        picked.push(edge);
    }
    picked
}

/// Kernel `seed`: the sum of `in` at a random set of offsets from `-R`
/// to `R` (`R` from 1 to 3) around each thread's element, written out as
/// `in[i - 2]`, `in[1 + i]` or through a local `int l = i - 1;`, in one
/// expression or one statement per read, under `if (i >= R && i < n -
/// R)`, `if (i > R - 1 && i <= n - R - 1)` or after `if (i < R || i >= n
/// - R) return;`; or, one in three, the reads clamped at the ends
/// (`in[max(i - 2, 0)]`, `in[min(n - 1, i + 1)]`, both, or as a
/// conditional `(i + 1 >= n) ? n - 1 : i + 1`) under `if (i < n)`
/// or after `if (i >= n) return;`.
fn generated_written(seed: u64) -> String {
    let mut r = Rng(seed.wrapping_mul(0x9b05_688c_2b3e_6c1f) ^ 0x77e1);
    let ty = r.pick(&["int", "float"]);
    let radius = 1 + r.below(3) as i64;
    let idx = r.pick(&[
        "blockIdx.x * blockDim.x + threadIdx.x",
        "threadIdx.x + blockIdx.x * blockDim.x",
    ]);
    let mut locals = String::new();
    let picked = offsets(&mut r, radius, 1);
    let offsets_read: Vec<i64> = picked.iter().map(|o| o[0]).collect();
    let reads: Vec<String> = picked
        .into_iter()
        .enumerate()
        .map(|(n, o)| match r.below(3) {
            0 => format!("in[i{}]", plus(o[0], "")),
            1 if o[0] > 0 => format!("in[{} + i]", o[0]),
            _ => {
                locals.push_str(&format!("int l{n} = i{};\n        ", plus(o[0], "")));
                format!("in[l{n}]")
            }
        })
        .collect();
    // One in three clamps the reads at the ends instead of keeping the
    // threads off them (drawn apart, so the other choices of a seed stay
    // what they were).
    let mut c = Rng(seed ^ 0x9e37_79b9);
    let clamped = c.below(3) == 0;
    let reads: Vec<String> = match clamped {
        false => reads,
        true => reads
            .into_iter()
            .zip(offsets_read)
            .map(|(read, o)| {
                let inner = &read["in[".len()..read.len() - 1];
                let index = match (o.signum(), c.below(5)) {
                    (0, _) => inner.to_string(),
                    (_, 0) => format!("min(max({inner}, 0), n - 1)"),
                    (-1, 1) => format!("max({inner}, 0)"),
                    (-1, 2) => format!("max(0, {inner})"),
                    (-1, 3) => format!("({inner} < 0) ? 0 : {inner}"),
                    (-1, _) => format!("{inner} > 0 ? {inner} : 0"),
                    (_, 1) => format!("min({inner}, n - 1)"),
                    (_, 2) => format!("min(n - 1, {inner})"),
                    (_, 3) => format!("({inner} >= n) ? n - 1 : {inner}"),
                    _ => format!("{inner} < n - 1 ? {inner} : n - 1"),
                };
                format!("in[{index}]")
            })
            .collect(),
    };
    let body = if r.below(2) == 0 {
        format!("{ty} s = {};", reads.join(" + "))
    } else {
        let mut b = format!("{ty} s = 0;");
        for x in &reads {
            b.push_str(&format!("\n        s += {x};"));
        }
        b
    };
    let (open, close) = r.pick(
        &[
            &("if (i >= R && i < n - R) {", "}"),
            &("if (i > R - 1 && i <= n - R - 1) {", "}"),
            &("if (i < R || i >= n - R) return;\n    {", "}"),
        ][..],
    );
    let (open, close) = match (clamped, c.below(2)) {
        (false, _) => (*open, *close),
        (true, 0) => ("if (i < n) {", "}"),
        (true, _) => ("if (i >= n) return;\n    {", "}"),
    };
    format!(
        "#define R {radius}
__global__ void k(const {ty} *in, {ty} *out, int n) {{
    int i = {idx};
    {open}
        {locals}{body}
        out[i] = s;
    {close}
}}
"
    )
}

/// Generated 2-D stencils written out
/// (`COPPER_EVERY_CALLER_WINDOWS_2D=N` of them, 12 by default; see
/// [`generated_written_2d`]), ranked by sectors: at least one in four
/// must get a halo tile, and every rewrite must be right on every block
/// of [`WINDOW_2D_SHAPES`], at the checker's image and grid sizes, at
/// images not square and at images one pixel wide or high
/// ([`thin_or_not_square`]), reading no element past what the original
/// reads.
#[test]
fn halo_tiles_of_generated_written_2d_windows_are_right_for_every_block() {
    let n: u64 = count("COPPER_EVERY_CALLER_WINDOWS_2D", 12);
    let settings = by_sectors();
    let cache = Cache::default();
    let per_seed: Vec<(bool, Vec<Found>)> = (0..n)
        .into_par_iter()
        .map(|seed| {
            let src = generated_written_2d(seed);
            let file = parse_source(SourceFile::new(format!("written2d-{seed}.cu"), &src));
            let found = check_kernels_varied(
                &file,
                &settings,
                &cache,
                &WINDOW_2D_SHAPES,
                &thin_or_not_square,
            );
            let clamped = ["min(", "max(", " ? "].iter().any(|c| src.contains(c));
            (clamped, found)
        })
        .collect();
    let generated_clamped = per_seed.iter().filter(|(c, _)| *c).count();
    let tiled_clamped: usize = per_seed
        .iter()
        .filter(|(c, _)| *c)
        .map(|(_, f)| tiled(f))
        .sum();
    let found: Vec<Found> = per_seed.into_iter().flat_map(|(_, f)| f).collect();
    report(&found, &format!("{n} generated 2-D stencils written out"));
    let tiled = tiled(&found);
    println!("{tiled} of them halo tiles, {tiled_clamped} of the {generated_clamped} clamped at the borders");
    assert!(
        tiled_clamped * 4 >= generated_clamped,
        "only {tiled_clamped} of {generated_clamped} generated 2-D stencils clamped at the borders got a halo tile"
    );
    assert!(
        tiled * 4 >= n as usize,
        "only {tiled} of {n} generated 2-D stencils written out got a halo tile"
    );
}

/// Kernel `seed`: the sum of a `w × h` image of `int`s or `float`s at a
/// random set of offsets (a 5-point cross with or without its center, a
/// 9-point box, or any subset of the `(2R + 1)²` square, `R` 1 or 2)
/// around each thread's pixel, written as `in[idx - w + 1]` with `int idx
/// = y * w + x;`, `in[(y - 1) * w + (x + 1)]` or `in[(y - 1) * w + x +
/// 1]`, under the interior's bounds (`x >= R`, or `x > 0` for `R = 1`)
/// or after `if (… ) return;`. One in three names the row length through
/// a copy `const int W = w;` (drawn apart, so the other choices of a
/// seed stay what they were); one in three instead clamps the rows and
/// columns at the image's borders ([`clamped_2d`]).
fn generated_written_2d(seed: u64) -> String {
    let mut r = Rng(seed.wrapping_mul(0x1f83_d9ab_fb41_bd6b) ^ 0x5be0);
    let (copy, w) = match Rng(seed ^ 0x3c6e_f372).below(3) {
        0 => ("\n    const int W = w;", "W"),
        _ => ("", "w"),
    };
    let ty = r.pick(&["int", "float"]);
    let radius = 1 + r.below(2) as i64;
    let x = r.pick(&[
        "blockIdx.x * blockDim.x + threadIdx.x",
        "threadIdx.x + blockIdx.x * blockDim.x",
    ]);
    let y = r.pick(&[
        "blockIdx.y * blockDim.y + threadIdx.y",
        "threadIdx.y + blockDim.y * blockIdx.y",
    ]);
    let cross = |center: bool| -> Vec<Vec<i64>> {
        let mut v = vec![vec![-1, 0], vec![1, 0], vec![0, -1], vec![0, 1]];
        if center {
            v.push(vec![0, 0]);
        }
        v
    };
    let picked = match r.below(4) {
        0 => cross(r.below(2) == 0),
        1 => (-1..=1)
            .flat_map(|a| (-1..=1).map(move |b| vec![a, b]))
            .collect(),
        _ => offsets(&mut r, radius, 2),
    };
    let radius = picked.iter().flatten().map(|v| v.abs()).max().unwrap_or(1);
    let form = r.below(3);
    let reads: Vec<String> = picked
        .iter()
        .map(|o| match form {
            0 => format!("in[idx{}{}]", plus(o[0], w), plus(o[1], "")),
            1 => format!("in[(y{}) * {w} + (x{})]", plus(o[0], ""), plus(o[1], "")),
            _ => format!("in[(y{}) * {w} + x{}]", plus(o[0], ""), plus(o[1], "")),
        })
        .map(|s| s.replace("(y) *", "y *").replace("(x)", "x"))
        .collect();
    // One in three clamps the rows and columns at the image's borders
    // instead of keeping the threads off them (drawn apart, so the other
    // choices of a seed stay what they were).
    let mut c = Rng(seed ^ 0x6a09_e667);
    if c.below(3) == 0 {
        return clamped_2d(&mut c, (ty, x, y), (copy, w), &picked);
    }
    let interior = if radius == 1 && r.below(2) == 0 {
        format!("if (x > 0 && x < {w} - 1 && y > 0 && y < h - 1) {{")
    } else {
        format!("if (x >= {radius} && x < {w} - {radius} && y >= {radius} && y < h - {radius}) {{")
    };
    let (open, close) = match r.below(2) {
        0 => (interior, "}"),
        _ => (
            format!("if (x < {radius} || y < {radius} || x >= {w} - {radius} || y >= h - {radius}) return;\n    {{"),
            "}",
        ),
    };
    format!(
        "__global__ void k(const {ty} *in, {ty} *out, int w, int h) {{{copy}
    int x = {x};
    int y = {y};
    {open}
        int idx = y * {w} + x;
        {ty} s = {};
        out[idx] = s;
    {close}
}}
",
        reads.join(" + ")
    )
}

/// A position `p + o` clamped into `[0, n - 1]` in one of the forms
/// students write (`max(p - 1, 0)`, `min(n - 1, p + 1)`, both, a
/// conditional), or as it is for `o = 0` one time in two.
fn clamp_form(c: &mut Rng, p: &str, o: i64, n: &str) -> String {
    let inner = format!("{p}{}", plus(o, ""));
    match (o.signum(), c.below(6)) {
        (0, 0..=2) => inner,
        (_, 0) => format!("min(max({inner}, 0), {n} - 1)"),
        (_, 1) => format!("max(min({inner}, {n} - 1), 0)"),
        (-1, 2) => format!("max({inner}, 0)"),
        (-1, 3) => format!("max(0, {inner})"),
        (-1, 4) => format!("({inner} < 0) ? 0 : {inner}"),
        (-1, _) => format!("{inner} > 0 ? {inner} : 0"),
        (_, 2) => format!("min({inner}, {n} - 1)"),
        (_, 3) => format!("min({n} - 1, {inner})"),
        (_, 4) => format!("({inner} >= {n}) ? {n} - 1 : {inner}"),
        _ => format!("{inner} < {n} - 1 ? {inner} : {n} - 1"),
    }
}

/// The body of [`generated_written_2d`]'s clamped kernels: each read's
/// row and column clamped into the image ([`clamp_form`]), inline
/// (`in[max(y - 1, 0) * w + min(x + 1, w - 1)]`) or through locals never
/// assigned (`int r0 = …;`), under `if (x < w && y < h)` or after `if (x
/// >= w || y >= h) return;`.
fn clamped_2d(
    c: &mut Rng,
    (ty, x, y): (&str, &str, &str),
    (copy, w): (&str, &str),
    picked: &[Vec<i64>],
) -> String {
    let in_locals = c.below(2) == 0;
    let mut locals = String::new();
    let mut reads = Vec::new();
    for (n, o) in picked.iter().enumerate() {
        let (row, col) = (clamp_form(c, "y", o[0], "h"), clamp_form(c, "x", o[1], w));
        let (row, col) = if in_locals {
            locals.push_str(&format!(
                "int r{n} = {row};\n        int c{n} = {col};\n        "
            ));
            (format!("r{n}"), format!("c{n}"))
        } else {
            (format!("({row})"), format!("({col})"))
        };
        reads.push(format!("in[{row} * {w} + {col}]"));
    }
    let (open, close) = match c.below(2) {
        0 => (format!("if (x < {w} && y < h) {{"), "}"),
        _ => (format!("if (x >= {w} || y >= h) return;\n    {{"), "}"),
    };
    format!(
        "__global__ void k(const {ty} *in, {ty} *out, int w, int h) {{{copy}
    int x = {x};
    int y = {y};
    {open}
        {locals}{ty} s = {};
        out[y * {w} + x] = s;
    {close}
}}
",
        reads.join(" + ")
    )
}

/// [`not_square`], and images one pixel wide, one pixel high or both:
/// every clamped read of a thread then reads the same column or row.
fn thin_or_not_square(spec: LaunchSpec) -> Vec<LaunchSpec> {
    let mut found = not_square(spec.clone());
    for (w, h) in [(Some(1.0), None), (None, Some(1.0)), (Some(1.0), Some(1.0))] {
        let mut s = spec.clone();
        for (name, v) in [("w", w), ("h", h)] {
            if let Some(v) = v {
                s.args.insert(name.to_string(), v);
            }
        }
        found.push(s);
    }
    found
}
