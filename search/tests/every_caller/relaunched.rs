//! The every-caller promise for rewrites that change the launch with the
//! kernel: one warp per row where the file's own host code launches the
//! row kernel, so the grid gets 32 times the blocks in x. The rewrite is
//! compared on each launch so changed (the host code's edit), the original
//! on the launch as it is, on every block of [`SHAPES`] and the file's
//! own, at the sizes the checker synthesizes around them.

use std::path::Path;

use copper::cuda::parse::{parse_path, parse_source, ParsedFile};
use copper::cuda::relaunch::Reshape;
use copper::source::SourceFile;
use copper_search::pipeline::{Cache, Settings};
use rayon::prelude::*;

use super::{check_named, count, generated_rows, report, settings, Found, Rng, SHAPES};

/// The search's settings with `--allow-reassociation`.
fn reassociating() -> Settings {
    Settings {
        allow_reassociation: true,
        ..settings()
    }
}

/// Every rewrite of the kernels of `file` (launches kept), each checked
/// on [`SHAPES`] and the blocks of the file's launches of it.
fn check_launched(file: &ParsedFile, settings: &Settings, cache: &Cache) -> Vec<Found> {
    let names: Vec<(String, Vec<[u64; 3]>)> = file
        .kernels()
        .map(|f| {
            let mut shapes = SHAPES.to_vec();
            shapes.extend(
                file.launches
                    .iter()
                    .filter(|l| l.kernel == f.name)
                    .filter_map(|l| l.block),
            );
            shapes.dedup();
            (f.name.clone(), shapes)
        })
        .collect();
    check_named(file, settings, cache, &names, &|_| Vec::new())
}

/// How many of `found` got one row per warp on a launch with 32 times the
/// blocks in x.
fn one_row_per_warp(found: &[Found]) -> usize {
    found
        .iter()
        .filter(|f| {
            f.applied.contains(&"one warp per row") && f.reshape == Some(Reshape::ScaleGridX(32))
        })
        .count()
}

/// The row kernels launched by their own files (`testdata/*_launched.cu`
/// and a student's `main_row_sums.cu`) all get one row per warp with the
/// launch changed, right on every block.
#[test]
fn relaunched_rows_of_testdata_are_right_for_every_block() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let files = [
        root.join("matvec_launched.cu"),
        root.join("row_sum_launched.cu"),
        root.join("row_max_norm_launched.cu"),
        root.join("students/main_row_sums.cu"),
    ];
    let (settings, cache) = (reassociating(), Cache::default());
    let found: Vec<Found> = files
        .par_iter()
        .flat_map_iter(|p| check_launched(&parse_path(p).unwrap(), &settings, &cache))
        .collect();
    report(&found, "row files launched by their own main");
    assert_eq!(
        one_row_per_warp(&found),
        5,
        "every launched row kernel gets one row per warp: {:?}",
        found.iter().map(|f| &f.applied).collect::<Vec<_>>()
    );
}

/// Generated row kernels ([`generated_rows`]) each launched by a generated
/// `main` (`COPPER_EVERY_CALLER_RELAUNCHED=N` of them, 8 by default; see
/// [`generated_main`]): rows not a multiple of 32 and fewer than 32,
/// grids larger than the rows need, 2-D blocks, blocks whose x is not a
/// multiple of 32. At least one in two must get one row per warp with the
/// launch changed, and every rewrite must be right on every block.
#[test]
fn relaunched_rows_of_generated_kernels_are_right_for_every_block() {
    let n: u64 = count("COPPER_EVERY_CALLER_RELAUNCHED", 8);
    let (settings, cache) = (reassociating(), Cache::default());
    let found: Vec<Found> = (0..n)
        .into_par_iter()
        .flat_map_iter(|seed| {
            let kernel = generated_rows(seed);
            let src = format!("{kernel}{}", generated_main(seed, &kernel));
            let file = parse_source(SourceFile::new(format!("relaunched-{seed}.cu"), &src));
            check_launched(&file, &settings, &cache)
        })
        .collect();
    report(&found, &format!("{n} generated row kernels with a main"));
    let relaunched = one_row_per_warp(&found);
    println!("{relaunched} of them got one row per warp");
    assert!(
        relaunched * 2 >= n as usize,
        "only {relaunched} of {n} launched row kernels got one row per warp"
    );
}

/// A `main` launching `kernel`, the kernel `k` of [`generated_rows`]
/// (with 40 for its width `m` where it takes one): a number of rows, a
/// block and a grid drawn at random, the grid written as a number, a
/// `dim3` at the launch or a `dim3` variable.
fn generated_main(seed: u64, kernel: &str) -> String {
    let mut r = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x3e1a);
    let rows = *r.pick(&[&7u64, &31, &32, &100, &333, &1000][..]);
    let (bx, by) = *r.pick(
        &[
            &(32u64, 1u64),
            &(64, 1),
            &(96, 1),
            &(128, 1),
            &(256, 1),
            &(32, 4),
            &(64, 2),
            &(48, 1),
        ][..],
    );
    let extra = *r.pick(&[&0u64, &0, &3][..]);
    let threads = bx;
    let blocks = format!("(rows + {threads} - 1) / {threads} + {extra}");
    let block = match by {
        1 => format!("{bx}"),
        _ => format!("dim3({bx}, {by})"),
    };
    let width = if kernel.contains("int m)") {
        ", 40"
    } else {
        ""
    };
    let args = format!("a, x, y, rows{width}");
    let launch = match r.below(3) {
        0 => format!("    k<<<{blocks}, {block}>>>({args});\n"),
        1 => format!("    k<<<dim3({blocks}), {block}>>>({args});\n"),
        _ => format!("    dim3 grid({blocks});\n    k<<<grid, {block}>>>({args});\n"),
    };
    let ty = kernel
        .split("const ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .unwrap_or("int")
        .to_string();
    format!(
        "
int main() {{
    int rows = {rows};
    {ty} *a, *x, *y;
    cudaMalloc(&a, rows * 40 * sizeof({ty}));
    cudaMalloc(&x, 40 * sizeof({ty}));
    cudaMalloc(&y, rows * sizeof({ty}));
{launch}    cudaDeviceSynchronize();
    return 0;
}}
"
    )
}
