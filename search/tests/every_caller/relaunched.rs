//! The every-caller promise for rewrites that change the launch with the
//! kernel: one warp per row where the file's own host code launches the
//! row kernel, so the grid gets 32 times the blocks in x. The rewrite is
//! compared on each launch so changed (the host code's edit), the original
//! on the launch as it is, on every block of [`SHAPES`] and the file's
//! own, at the sizes the checker synthesizes around them.

use std::path::Path;

use copper::bound::Outcome;
use copper::cuda::parse::{parse_path, parse_source, ParsedFile};
use copper::cuda::relaunch::Reshape;
use copper::source::SourceFile;
use copper_search::pipeline::{optimize_target, Analyzed, Cache, Settings, Verdict};
use copper_search::rank::{Ranker, Ranking};
use rayon::prelude::*;

use super::{check_named, count, generated_rows, report, searched, settings, Found, Rng, SHAPES};

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
/// multiple of 32; rows of 100 elements, long enough for 32 times the
/// warps to do less work in all. At least one in two must get one row per
/// warp with the launch changed, and every rewrite must be right on every
/// block.
#[test]
fn relaunched_rows_of_generated_kernels_are_right_for_every_block() {
    let n: u64 = count("COPPER_EVERY_CALLER_RELAUNCHED", 8);
    let (settings, cache) = (reassociating(), Cache::default());
    let found: Vec<Found> = (0..n)
        .into_par_iter()
        .flat_map_iter(|seed| {
            let src = launched_rows(seed, 100);
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

/// One generated row kernel searched at the sizes of its launch: the
/// total work of the original and of the version chosen, and how the
/// chosen one is launched.
struct Total {
    /// The kernel's seed and its rows' length.
    case: (u64, u64),
    /// The original's bound per warp times its warps, at the sizes.
    original: f64,
    /// The chosen version's.
    chosen: f64,
    /// How the chosen version's launch differs from the original's.
    reshape: Option<Reshape>,
    /// Whether a candidate was refused for running more warps.
    refused_for_warps: bool,
}

/// [`launched_rows`] searched at its launch's sizes; `None` when the
/// search does not rank at sizes.
fn total(seed: u64, width: u64, settings: &Settings, cache: &Cache) -> Option<Total> {
    let src = launched_rows(seed, width);
    let file = parse_source(SourceFile::new(format!("totals-{seed}-{width}.cu"), &src));
    let (_, target) = searched(&file, "k")?;
    let result = optimize_target(&file, &file, &target, Ok(&[]), settings, cache).ok()?;
    let Ranker::At(sizes) = &result.ranker else {
        return None;
    };
    let launch = file.launches.iter().find(|l| l.kernel == "k")?;
    let (grid, block) = (launch.grid?, launch.block?);
    // Counted from the launch each version runs on, not from the factor
    // the ranking uses.
    let work = |a: &Analyzed| {
        let (g, b) = match a.lineage.reshape() {
            Some(r) => (r.grid(grid), r.block(block)),
            None => (grid, block),
        };
        let warps = g.iter().product::<u64>() * b.iter().product::<u64>().div_ceil(32);
        match &a.bounds[settings.rank_metric].work {
            Outcome::Bound(bound) => Some(bound.eval(&sizes.values)? * warps as f64),
            Outcome::NoBound(..) => None,
        }
    };
    let refused_for_warps = (result.steps.iter().flat_map(|s| &s.considered))
        .any(|c| matches!(&c.verdict, Verdict::NotBetter(why) if why.starts_with("it runs 32× the warps")));
    Some(Total {
        case: (seed, width),
        original: work(&result.original)?,
        chosen: work(&result.best)?,
        reshape: result.best.lineage.reshape(),
        refused_for_warps,
    })
}

/// Whatever the rows' length, the search at the sizes in use never
/// chooses a version that does more work in all than the original: its
/// bound per warp at the launch's sizes times its warps (the blocks of the
/// file's launch times the warps of each, reshaped as the rewrite
/// reshapes it) is at most the original's. Rows of a few elements refuse
/// one row per warp for its 32 times the warps; long rows take it.
/// `COPPER_EVERY_CALLER_TOTALS=N` kernels (4 by default), each at five
/// lengths.
#[test]
fn the_chosen_version_never_does_more_work_in_all_than_the_original() {
    let n = count("COPPER_EVERY_CALLER_TOTALS", 4);
    let settings = Settings {
        ranking: Ranking::default(),
        ..reassociating()
    };
    let cache = Cache::default();
    let cases: Vec<(u64, u64)> = (0..n)
        .flat_map(|seed| [3, 12, 40, 300, 2000].map(|width| (seed, width)))
        .collect();
    let totals: Vec<Total> = cases
        .par_iter()
        .filter_map(|&(seed, width)| total(seed, width, &settings, &cache))
        .collect();
    assert_eq!(
        totals.len(),
        cases.len(),
        "every case is ranked at its sizes"
    );
    for t in &totals {
        assert!(
            t.chosen <= t.original,
            "kernel {} with rows of {}: {} in all chosen over the original's {}",
            t.case.0,
            t.case.1,
            t.chosen,
            t.original
        );
    }
    let relaunched = totals.iter().filter(|t| t.reshape.is_some()).count();
    let refused = totals.iter().filter(|t| t.refused_for_warps).count();
    println!(
        "{relaunched} of {} relaunched, {refused} refused one row per warp for its warps",
        totals.len()
    );
    assert!(relaunched > 0, "no long rows took one row per warp");
    assert!(refused > 0, "no short rows refused one row per warp");
}

/// Kernel `seed` of [`generated_rows`] with rows of `width` elements (its
/// `#define M`, or the argument its `main` passes), launched by
/// [`generated_main`].
fn launched_rows(seed: u64, width: u64) -> String {
    let kernel = generated_rows(seed);
    let kernel = match kernel.split_once('\n') {
        Some((define, rest)) if define.starts_with("#define M ") => {
            format!("#define M {width}\n{rest}")
        }
        _ => kernel,
    };
    format!("{kernel}{}", generated_main(seed, &kernel, width))
}

/// A `main` launching `kernel`, the kernel `k` of [`generated_rows`]
/// (with `width` for its width `m` where it takes one, and rows of
/// `width` elements allocated): a number of rows, a block and a grid
/// drawn at random, the grid written as a number, a `dim3` at the launch
/// or a `dim3` variable.
fn generated_main(seed: u64, kernel: &str, width: u64) -> String {
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
    let args = match kernel.contains("int m)") {
        true => format!("a, x, y, rows, {width}"),
        false => "a, x, y, rows".to_string(),
    };
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
    cudaMalloc(&a, rows * {width} * sizeof({ty}));
    cudaMalloc(&x, {width} * sizeof({ty}));
    cudaMalloc(&y, rows * sizeof({ty}));
{launch}    cudaDeviceSynchronize();
    return 0;
}}
"
    )
}
