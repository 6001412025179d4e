//! The every-caller promise for kernel templates: each instantiation a
//! file launches (its template arguments, such as `blockSize`, fixed by
//! the launch) is searched as the file launches it, and its rewrite is
//! simulated against the original on the blocks of those launches (the
//! shapes the instantiation is written for: `blockDim.x == blockSize` for
//! `reduce6`) and on [`OTHER_BLOCKS`] (other code may launch an
//! instantiation with another block: a template's rewrite runs under a
//! test of its block, the original code on any other), each on grids
//! smaller and larger than its data and on
//! sizes from one element to many grid-stride rounds, a partial last
//! block among them. Wherever the original runs cleanly the arrays must
//! be the same bit for bit: the rewrites these kernels get keep the order
//! of their additions, so floating-point sums are compared exactly too.
//!
//! The files' templates are checked, and generated `reduce5`/`reduce6`
//! variants (see [`generated_reduce6`]): `COPPER_EVERY_CALLER_REDUCE6=N`
//! of them (10 by default); `COPPER_EVERY_CALLER_ROUNDS=N` sets how many
//! grid-stride rounds the largest size takes (3 by default).

use std::path::Path;

use copper::cuda::parse::{parse_path, parse_source, ParsedFile};
use copper::ir::lower::lower_kernel;
use copper::sim::params::LaunchSpec;
use copper::source::SourceFile;
use copper_search::pipeline::{Cache, Settings};
use rayon::prelude::*;

use super::big_shared::compile;
use super::{check_named, count, cu_files, report, settings, Found, Rng};

/// Blocks every rewritten instantiation is checked on besides its
/// launches' (where the original runs cleanly on them).
const OTHER_BLOCKS: [[u64; 3]; 10] = [
    [32, 1, 1],
    [33, 1, 1],
    [64, 1, 1],
    [128, 1, 1],
    [256, 1, 1],
    [1024, 1, 1],
    [8, 8, 1],
    [32, 2, 1],
    [16, 16, 1],
    [64, 2, 2],
];

/// The instantiations of template kernels that `file` launches, each
/// with the distinct blocks of its launches, then [`OTHER_BLOCKS`].
fn instantiations(file: &ParsedFile) -> Vec<(String, Vec<[u64; 3]>)> {
    file.kernels()
        .filter(|f| f.template.is_some())
        .map(|f| {
            let mut blocks: Vec<[u64; 3]> = file
                .launches
                .iter()
                .filter(|l| l.kernel == f.name)
                .filter_map(|l| l.block)
                .collect();
            blocks.sort_unstable();
            blocks.dedup();
            (f.name.clone(), blocks)
        })
        .filter(|(_, blocks)| !blocks.is_empty())
        .map(|(name, mut blocks)| {
            let others = OTHER_BLOCKS.iter().filter(|b| !blocks.contains(b));
            blocks.extend(others.collect::<Vec<_>>());
            (name, blocks)
        })
        .collect()
}

/// The launches made of `spec` (a synthesized launch): grids of one and
/// three blocks, each with the integer arguments `ints` set to sizes from
/// 1 to `rounds` grid-stride rounds of two elements a thread (odd ones,
/// one partial block, one smaller than a block), the arrays long enough
/// for each.
fn sizes(ints: &[String], spec: LaunchSpec, rounds: u64) -> Vec<LaunchSpec> {
    let threads: u64 = spec.block.iter().product();
    let mut out = Vec::new();
    for grid in [1u64, 3] {
        let covered = 2 * threads * grid;
        for n in [
            1,
            threads / 2 + 1,
            threads + 1,
            covered - 1,
            covered * rounds.max(1) + 7,
        ] {
            let mut s = spec.clone();
            s.grid = vec![grid, 1, 1];
            for name in ints {
                s.args.insert(name.clone(), n as f64);
            }
            for a in s.arrays.values_mut() {
                a.len = a.len.max(n + 2 * threads);
                a.len_expr = None;
            }
            out.push(s);
        }
    }
    out
}

/// Every rewrite of the launched template instantiations of `file`,
/// searched as the file launches them and checked on their blocks at
/// every size of [`sizes`]; also how many instantiations were searched.
fn check_templates(file: &ParsedFile, settings: &Settings, cache: &Cache) -> (Vec<Found>, usize) {
    let names = instantiations(file);
    let rounds = count("COPPER_EVERY_CALLER_ROUNDS", 3);
    let mut found = Vec::new();
    for (name, blocks) in &names {
        let Ok(kernel) = lower_kernel(file, name) else {
            continue;
        };
        let ints: Vec<String> = kernel
            .scalar_params()
            .map(|v| &kernel.vars[v])
            .filter(|v| !v.ty.is_float())
            .map(|v| v.name.clone())
            .collect();
        let more = |spec: LaunchSpec| sizes(&ints, spec, rounds);
        found.extend(check_named(
            file,
            settings,
            cache,
            &[(name.clone(), blocks.clone())],
            &more,
        ));
    }
    (found, names.len())
}

#[test]
fn rewrites_of_the_files_templates_are_right_for_every_launch() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let mut files = cu_files(&root);
    files.extend(cu_files(&root.join("students")));
    let settings = settings();
    let cache = Cache::default();
    let checked: Vec<(Vec<Found>, usize)> = files
        .par_iter()
        .map(|path| check_templates(&parse_path(path).unwrap(), &settings, &cache))
        .collect();
    let searched: usize = checked.iter().map(|c| c.1).sum();
    let found: Vec<Found> = checked.into_iter().flat_map(|c| c.0).collect();
    let rewrites = report(
        &found,
        &format!("{searched} launched template instantiations"),
    );
    // reduce6_template.cu launches three instantiations, each rewritten,
    // students/reduce6_switch.cu five (32 to 512), reduce6_switch_all.cu
    // ten (512 down to 1), of which the five from 32 up are rewritten when
    // their search leads (one led by a block under a warp refuses: its
    // block is no multiple of 32), the rewrite then checked for all ten.
    assert!(rewrites >= 13, "only {rewrites} rewrites of {searched}");
    let shuffles = found
        .iter()
        .filter(|f| f.applied.contains(&"warp-shuffle reduction"))
        .count();
    assert!(shuffles >= 13, "only {shuffles} warp-shuffle rewrites");
    // Blocks under a warp (`reduce6<16>` … `<1>`) keep their steps.
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        found
            .iter()
            .any(|f| words(&f.text).contains(
                "if (blockSize >= 32) { float warp_sum = sdata[tid]; if (blockSize >= 64) {"
            ) && words(&f.text).contains("} else { warpReduce<blockSize>(sdata, tid); }")),
        "no tail kept for blocks under a warp"
    );
    // `reduce6<32>`'s tail skips the `+ 32` step, and so do its shuffles.
    assert!(
        found
            .iter()
            .any(|f| f.text.contains("float warp_sum = sdata[tid];")
                && f.text.contains("if (blockSize >= 64) {")),
        "no guarded first step"
    );
    assert_guarded(&found);
    // The guards read template parameters (`blockDim.x == blockSize`).
    let guarded: Vec<&Found> = found
        .iter()
        .filter(|f| f.applied.contains(&"block guard"))
        .collect();
    if let Some(compiled) = compile(&guarded) {
        println!("{compiled} guarded template rewrites compiled with nvcc");
    }
    assert!(found.iter().all(|f| !f.reassociated), "compared inexactly");
}

/// Every shuffle rewrite of a template runs under a test of its block
/// (other code may launch the template with another).
fn assert_guarded(found: &[Found]) {
    for f in found {
        assert!(
            !f.applied.contains(&"warp-shuffle reduction") || f.applied.contains(&"block guard"),
            "a template's shuffles without a block guard:\n{}",
            f.text
        );
    }
}

/// Generated `reduce5`/`reduce6` variants: at least one in two of their
/// launched instantiations must get its tail in shuffles (a refused one
/// is counted), and every rewrite must be right for every launch.
#[test]
fn rewrites_of_generated_reduce6_variants_are_right_for_every_launch() {
    let n: u64 = count("COPPER_EVERY_CALLER_REDUCE6", 10);
    let settings = settings();
    let cache = Cache::default();
    let checked: Vec<(Vec<Found>, usize)> = (0..n)
        .into_par_iter()
        .map(|seed| {
            let src = generated_reduce6(seed);
            let file = parse_source(SourceFile::new(format!("reduce6-{seed}.cu"), &src));
            let checked = check_templates(&file, &settings, &cache);
            assert!(checked.1 > 0, "nothing instantiated in\n{src}");
            checked
        })
        .collect();
    let searched: usize = checked.iter().map(|c| c.1).sum();
    let found: Vec<Found> = checked.into_iter().flat_map(|c| c.0).collect();
    report(
        &found,
        &format!("{searched} instantiations of {n} generated reduce6 variants"),
    );
    let shuffled = found
        .iter()
        .filter(|f| f.applied.contains(&"warp-shuffle reduction"))
        .count();
    assert_guarded(&found);
    // Variants launched for a block of 32 too: their shuffles' first step
    // keeps its guard, and the rewrite holds for that block.
    assert!(
        found
            .iter()
            .any(|f| f.text.contains("if (blockSize >= 64) {")),
        "no variant launched for a block of 32 was rewritten"
    );
    // The tails keep their additions' order: floats compared bit for bit.
    assert!(found.iter().all(|f| !f.reassociated), "compared inexactly");
    println!(
        "{shuffled} of them got shuffles, {} refused",
        searched - shuffled
    );
    assert!(
        shuffled * 2 >= searched,
        "only {shuffled} of {searched} instantiations got shuffles"
    );
}

/// Variant `seed` of the CUDA samples' `reduce5`/`reduce6`: a template
/// on `blockSize` (and `nIsPow2`, or not), of `int`, `float` or
/// `unsigned`, in a static or an `extern` shared array; two elements a
/// thread loaded once or in a grid-stride loop; hand-unrolled steps for
/// 512, 256 and 128 threads, each present or not; the last warp inline on
/// a `volatile` pointer or in a `warpReduce<blockSize>` device template,
/// its guard `tid < 32` or a `#define`d `WARP`; launched by host code
/// (a switch, as the samples write it) with one to three block sizes
/// among the powers of two from 32 to 1024 (32 in about one draw in
/// four: the first step of its tail, `blockSize >= 64`, does not run),
/// one of them perhaps `#define`d.
pub(super) fn generated_reduce6(seed: u64) -> String {
    let mut r = Rng(seed.wrapping_mul(0xd1b5_4a32_d192_ed03) ^ 0x6ed6);
    let ty = r.pick(&["int", "float", "unsigned"]);
    let zero = if ty == "float" { "0.0f" } else { "0" };
    let pow2 = r.below(2) == 0;
    let (tparams, targs) = if pow2 {
        ("unsigned int blockSize, bool nIsPow2", ", true")
    } else {
        ("unsigned int blockSize", "")
    };
    // A block of 32 reads past its 32 elements in the last warp (lanes
    // whose sums nothing uses): the samples give it twice the shared
    // memory, and a static array is then twice the block.
    let mut sizes: Vec<u64> = (0..1 + r.below(3))
        .map(|_| match r.below(4) {
            0 => 32,
            _ => 64 << r.below(5),
        })
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let extern_shared = r.below(2) == 0;
    let shared = match (extern_shared, sizes.contains(&32)) {
        (true, _) => format!("extern __shared__ {ty} sdata[];"),
        (false, false) => format!("__shared__ {ty} sdata[blockSize];"),
        (false, true) => format!("__shared__ {ty} sdata[2 * blockSize];"),
    };
    let second = if pow2 {
        "nIsPow2 || i + blockSize < n"
    } else {
        "i + blockSize < n"
    };
    let load = if r.below(2) == 0 {
        format!(
            "unsigned int gridSize = blockSize * 2 * gridDim.x;
	{ty} mySum = {zero};
	// grid-stride: two elements a thread per round
	while (i < n) {{
		mySum += g_idata[i];
		if ({second})
			mySum += g_idata[i + blockSize];
		i += gridSize;
	}}"
        )
    } else {
        format!(
            "{ty} mySum = (i < n) ? g_idata[i] : {zero};
	if ({second})
		mySum += g_idata[i + blockSize];"
        )
    };
    let mut steps = String::new();
    for half in [256, 128, 64] {
        if r.below(6) != 0 {
            steps.push_str(&format!(
                "\tif (blockSize >= {}) {{ if (tid < {half}) {{ sdata[tid] += sdata[tid + {half}]; }} __syncthreads(); }}\n",
                2 * half
            ));
        }
    }
    let warp = if r.below(3) == 0 { "WARP" } else { "32" };
    let tail_steps = |a: &str, indent: &str| {
        [32, 16, 8, 4, 2, 1]
            .iter()
            .map(|o| {
                format!(
                    "{indent}if (blockSize >= {}) {a}[tid] += {a}[tid + {o}];\n",
                    2 * o
                )
            })
            .collect::<String>()
    };
    let (device, tail) = if r.below(2) == 0 {
        (
            format!(
                "template <unsigned int blockSize>\n__device__ void warpReduce(volatile {ty} *sdata, unsigned int tid) {{\n{}}}\n\n",
                tail_steps("sdata", "\t")
            ),
            format!("\tif (tid < {warp}) warpReduce<blockSize>(sdata, tid);\n"),
        )
    } else {
        (
            String::new(),
            format!(
                "\tif (tid < {warp}) {{\n\t\tvolatile {ty} *smem = sdata;\n{}\t}}\n",
                tail_steps("smem", "\t\t")
            ),
        )
    };
    let defined = sizes[sizes.len() - 1];
    let by_macro = r.below(2) == 0;
    let launches: String = sizes
        .iter()
        .map(|&b| {
            let b = if b == defined && by_macro {
                "THREADS".to_string()
            } else {
                b.to_string()
            };
            format!("\tcase {b}:\n\t\treduce<{b}{targs}><<<blocks, {b}, smem>>>(d_in, d_out, n);\n\t\tbreak;\n")
        })
        .collect();
    format!(
        "// reduce6 the way the slides go, typed by hand
#define WARP 32
#define THREADS {defined}

{device}template <{tparams}>
__global__ void reduce({ty} *g_idata, {ty} *g_odata, unsigned int n) {{
	{shared}
	unsigned int tid = threadIdx.x;
	unsigned int i = blockIdx.x * (blockSize * 2) + threadIdx.x;
	{load}
	sdata[tid] = mySum;
	__syncthreads();
{steps}{tail}	if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}}

void run(int threads, int blocks, {ty} *d_in, {ty} *d_out, unsigned int n) {{
	int smem = (threads <= 32) ? 2 * threads * sizeof({ty}) : threads * sizeof({ty});
	switch (threads) {{
{launches}	}}
}}
"
    )
}
