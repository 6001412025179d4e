//! A rewrite copper offers for a kernel whose launch it does not know
//! must be right for every launch the original handles: the search may
//! steer by the block it assumes, but the code it offers may not depend
//! on it unless it says so in the code (a guard on the block).
//!
//! For every `testdata/` kernel (and the students' files), searched as if
//! its file launched nothing and it had no parameter file, the offered
//! version is simulated against the original on launches of twelve block
//! shapes (one- and two-dimensional, 32 to 1024 threads, odd ones among
//! them), each at the sizes the checker synthesizes around the block (a
//! partial last block, sizes above the block and above any constant of
//! the kernel): wherever the original runs cleanly, the arrays must be
//! the same bit for bit. `COPPER_EVERY_CALLER_FILES=N` takes only the
//! first N files (all by default); `COPPER_EVERY_CALLER_SEEDS=N` also
//! checks each synthesized launch with N other seeds of its random data
//! (and the variants the checker makes of each), for long runs.

use std::path::{Path, PathBuf};

use copper::bound::Config;
use copper::cost::{Hardware, Metric, BUILTIN_METRICS};
use copper::cuda::parse::{parse_path, ParsedFile};
use copper::ir::lower::lower_kernel;
use copper::sim::params::{InitKind, LaunchSpec};
use copper::sim::test_launch::synthesized;
use copper_search::launch::{assume_block, launch_shape};
use copper_search::pipeline::{optimize_kernel, Cache, Settings};
use copper_search::rank::{Ranking, DEFAULT_EPSILON};
use copper_transforms::check::{Checker, Terms};
use rayon::prelude::*;

/// Block shapes every offered rewrite is checked on.
const SHAPES: [[u64; 3]; 12] = [
    [32, 1, 1],
    [96, 1, 1],
    [128, 1, 1],
    [256, 1, 1],
    [512, 1, 1],
    [1024, 1, 1],
    [1, 32, 1],
    [8, 8, 1],
    [24, 4, 1],
    [16, 16, 1],
    [32, 8, 1],
    [32, 32, 1],
];

fn cu_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    files.sort();
    files
}

fn settings(metrics: &[Metric]) -> Settings {
    Settings {
        config: Config::default(),
        metrics: metrics.to_vec(),
        rank_metric: metrics.iter().position(|m| m.name == "wsteps").unwrap(),
        ranking: Ranking::Heuristic {
            epsilon: DEFAULT_EPSILON,
        },
        transforms: copper_transforms::all(),
        compiler: None,
        allow_reassociation: false,
    }
}

/// The file as if it launched nothing.
fn without_launches(path: &Path) -> ParsedFile {
    let mut file = parse_path(path).unwrap();
    file.launches.clear();
    file
}

#[test]
fn a_rewrite_for_an_assumed_block_is_right_for_every_block() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let mut files = cu_files(&root);
    files.extend(cu_files(&root.join("students")));
    let limit = std::env::var("COPPER_EVERY_CALLER_FILES")
        .ok()
        .and_then(|n| n.parse().ok());
    files.truncate(limit.unwrap_or(usize::MAX));
    let metrics: Vec<Metric> = BUILTIN_METRICS
        .iter()
        .filter_map(|m| Metric::builtin(m))
        .collect();
    let settings = settings(&metrics);
    let cache = Cache::default();
    let found: Vec<Found> = files
        .par_iter()
        .flat_map_iter(|path| check_file(path, &settings, &cache))
        .collect();
    let rewrites = found.len();
    let shapes_run: usize = found.iter().map(|f| f.blocks).sum();
    let triples: usize = found.iter().map(|f| f.launches).sum();
    let wrong: Vec<&String> = found.iter().flat_map(|f| &f.wrong).collect();
    println!(
        "{rewrites} rewrites of {} files checked on {shapes_run} (rewrite, block) pairs: {triples} (rewrite, shape, size) launches",
        files.len()
    );
    let wrong: Vec<&str> = wrong.iter().map(|w| w.as_str()).collect();
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(
        rewrites >= 10 || limit.is_some(),
        "only {rewrites} rewrites offered"
    );
}

/// One offered rewrite, checked on every block of [`SHAPES`].
struct Found {
    /// Blocks the original runs cleanly on.
    blocks: usize,
    /// Launches of those blocks the rewrite was compared on.
    launches: usize,
    /// What differed, one line each.
    wrong: Vec<String>,
}

/// Every rewrite copper offers for the non-template kernels of `path`,
/// searched as if the file launched nothing, checked on every block.
fn check_file(path: &Path, settings: &Settings, cache: &Cache) -> Vec<Found> {
    let file = without_launches(path);
    let names: Vec<String> = file
        .kernels()
        .filter(|f| f.template.is_none())
        .map(|f| f.name.clone())
        .collect();
    let mut out = Vec::new();
    for name in names {
        let Ok(kernel) = lower_kernel(&file, &name) else {
            continue;
        };
        let shape = assume_block(&file, &kernel, launch_shape(None, None, &file, None, &name));
        let Ok(result) = optimize_kernel(&file, &file, &name, None, &shape, settings, cache) else {
            continue;
        };
        if !result.improved() {
            continue;
        }
        let applied: Vec<&str> = result.applied.iter().map(|a| a.transform).collect();
        let mut found = Found {
            blocks: 0,
            launches: 0,
            wrong: Vec::new(),
        };
        let seeds: u64 = std::env::var("COPPER_EVERY_CALLER_SEEDS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        for block in SHAPES {
            let measure = |base: Option<&LaunchSpec>| {
                Checker::measuring(
                    &file,
                    &name,
                    base,
                    Some(block),
                    None,
                    Hardware::default(),
                    vec![],
                )
            };
            // The synthesized launches, then each with other random data.
            let mut checkers = vec![measure(None)];
            for seed in 1..=seeds {
                for mut spec in synthesized(&kernel, block) {
                    for a in spec
                        .arrays
                        .values_mut()
                        .filter(|a| a.init == InitKind::Random)
                    {
                        a.seed = a.seed.wrapping_mul(1_000_003).wrapping_add(seed);
                    }
                    checkers.push(measure(Some(&spec)));
                }
            }
            // Where the original does not run cleanly there is nothing to
            // compare.
            let checkers: Vec<Checker> = checkers.into_iter().flatten().collect();
            if !checkers.is_empty() {
                found.blocks += 1;
            }
            for checker in checkers {
                found.launches += checker.launches();
                let terms = Terms {
                    reassociated: result.best.lineage.reassociated,
                    ..Terms::default()
                };
                if let Err(e) = checker.check_kernel(&result.best.kernel, terms) {
                    found.wrong.push(format!(
                        "{}: `{name}` rewritten for {:?} ({}): block {block:?}: {e}",
                        path.display(),
                        shape.block,
                        applied.join(", ")
                    ));
                }
            }
        }
        out.push(found);
    }
    out
}
