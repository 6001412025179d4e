//! The every-caller promise for tree reductions that also declare big
//! static `__shared__` arrays (4 to 30 KiB, one or two of them): the block
//! guard declares the arrays both sides declare alike once, before its
//! test (declared in each side they would take their bytes twice), and
//! refuses a rewrite whose sides' arrays do not fit together. Searched as
//! if nothing launched them (an assumed block: the guard) and as their
//! host code launches them; every rewrite must be right on every block it
//! is checked on, and its static shared memory, read from the printed
//! code, must fit in 48 KiB. The first few rewrites are compiled with
//! nvcc when there is one (`$COPPER_NVCC`, else `PATH`).

use std::process::Command;

use copper::cuda::parse::parse_source;
use copper::launch::MAX_STATIC_SHARED_BYTES;
use copper::source::SourceFile;
use copper_search::pipeline::Cache;
use copper_transforms::ast_util::FileConstants;
use copper_transforms::static_shared_bytes;
use rayon::prelude::*;

use super::{check_kernels, check_named, count, report, settings, Found, Rng};

/// How many rewrites are compiled with nvcc.
const COMPILED: usize = 4;

/// Reduction `seed` of a block's values in a `BLOCK`-sized `__shared__`
/// array, the values first staged in one or two big `__shared__` arrays
/// (`stage`, `stage2`; 4 to 30 KiB together with room for the tree):
/// declared at the top of the body, or after a statement that reads the
/// `__constant__` array of the same name they shadow; the tree a `for`
/// loop from `blockDim.x / 2` or `BLOCK / 2`; with host code that launches
/// the kernel with `BLOCK` threads (a `dim3` or an integer), or none.
pub(super) fn generated_big_shared(seed: u64) -> String {
    let mut r = Rng(seed.wrapping_mul(0x510e_527f_ade6_82d1) ^ 0xb165);
    let block = 64 << r.below(5);
    let ty = r.pick(&["int", "unsigned", "float"]);
    let two = r.below(3) == 0;
    let stage = if two {
        *r.pick(&[&1024u64, &2048, &4096, &5120][..])
    } else {
        *r.pick(&[&1024u64, &2048, &4096, &6144, &7680][..])
    };
    let shadow = r.below(3) == 0;
    let tree = format!("\t__shared__ {ty} sdata[BLOCK];\n");
    let mut arrays = format!("\t__shared__ {ty} stage[STAGE];\n");
    if two {
        arrays.push_str(&format!("\t__shared__ {ty} stage2[STAGE];\n"));
    }
    // Shadowing: the kernel reads the `__constant__` `stage` before its
    // own `stage` hides it.
    let (constant, before, scale) = if shadow {
        (
            format!("__constant__ {ty} stage[4];\n\n"),
            format!("\t{ty} scale = stage[1];\n"),
            " * scale",
        )
    } else {
        (String::new(), String::new(), "")
    };
    let decls = if r.below(2) == 0 {
        format!("{before}{tree}{arrays}")
    } else {
        format!("{tree}{before}{arrays}")
    };
    let (fill, read) = if two {
        (
            format!("\tstage[tid] = i < n ? in[i] : ({ty})0;\n\t__syncthreads();\n\tstage2[tid] = stage[tid]{scale} + ({ty})1;\n"),
            "stage2[tid]",
        )
    } else {
        (
            format!("\tstage[tid] = i < n ? in[i]{scale} : ({ty})0;\n"),
            "stage[tid]",
        )
    };
    let start = r.pick(&["blockDim.x / 2", "BLOCK / 2"]);
    let host = match r.below(3) {
        0 => String::new(),
        1 => format!(
            "\nvoid run(const {ty} *d_in, {ty} *d_out, int n) {{\n\tint blocks = (n + BLOCK - 1) / BLOCK;\n\tk<<<blocks, BLOCK>>>(d_in, d_out, n);\n}}\n"
        ),
        _ => format!(
            "\nvoid run(const {ty} *d_in, {ty} *d_out, int n) {{\n\tdim3 block(BLOCK);\n\tdim3 grid((n + BLOCK - 1) / BLOCK);\n\tk<<<grid, block>>>(d_in, d_out, n);\n}}\n"
        ),
    };
    format!(
        "// block sums, the input staged in shared memory first
#define BLOCK {block}
#define STAGE {stage}

{constant}__global__ void k(const {ty} *in, {ty} *out, int n) {{
{decls}\tunsigned tid = threadIdx.x;
	unsigned i = blockIdx.x * blockDim.x + tid;
{fill}	__syncthreads();
	sdata[tid] = {read};
	__syncthreads();
	for (unsigned s = {start}; s > 0; s >>= 1) {{
		if (tid < s) sdata[tid] += sdata[tid + s];
		__syncthreads();
	}}
	if (tid == 0) out[blockIdx.x] = sdata[0];
}}
{host}"
    )
}

/// Static `__shared__` bytes of kernel `k` in the printed file `text`.
fn static_bytes(text: &str) -> Option<u64> {
    let file = parse_source(SourceFile::new("rewritten.cu", text));
    static_shared_bytes(file.function("k")?, &FileConstants::of(&file))
}

/// Compiles each printed file of `found` with nvcc; `None` (with why
/// printed) when there is no nvcc.
pub(super) fn compile(found: &[&Found]) -> Option<usize> {
    let nvcc = std::env::var_os("COPPER_NVCC").unwrap_or_else(|| "nvcc".into());
    if !Command::new(&nvcc)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        assert!(
            std::env::var("COPPER_REQUIRE_NVCC").map_or(true, |v| v != "1"),
            "COPPER_REQUIRE_NVCC=1 but nvcc does not run"
        );
        println!("nvcc does not run: rewrites not compiled");
        return None;
    }
    let dir = std::env::temp_dir().join(format!("copper-big-shared-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (n, f) in found.iter().enumerate() {
        let path = dir.join(format!("rewritten-{n}.cu"));
        std::fs::write(&path, &f.text).unwrap();
        let out = Command::new(&nvcc)
            .args(["-arch=sm_90", "-Werror", "all-warnings", "-std=c++17", "-c"])
            .arg(&path)
            .args(["-o", "/dev/null"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "nvcc refuses\n{}\n{}",
            f.text,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    Some(found.len())
}

/// Generated reductions with big `__shared__` arrays
/// (`COPPER_EVERY_CALLER_BIG_SHARED=N` of them, 16 by default; see
/// [`generated_big_shared`]), each searched as its file launches it (an
/// assumed block when it launches nothing): every rewrite right on every
/// block (the launch's only, for a launched kernel: its rewrite says it
/// is written for that block), its static shared memory within 48 KiB;
/// at least one guarded rewrite hoists an array.
#[test]
fn rewrites_with_big_shared_arrays_fit_and_are_right_for_every_block() {
    let n: u64 = count("COPPER_EVERY_CALLER_BIG_SHARED", 16);
    let settings = settings();
    let cache = Cache::default();
    let found: Vec<(u64, Found)> = (0..n)
        .into_par_iter()
        .flat_map_iter(|seed| {
            let src = generated_big_shared(seed);
            let file = parse_source(SourceFile::new(format!("big-shared-{seed}.cu"), &src));
            let mut blocks: Vec<[u64; 3]> = file.launches.iter().filter_map(|l| l.block).collect();
            blocks.dedup();
            let found = match blocks.is_empty() {
                true => check_kernels(&file, &settings, &cache),
                false => check_named(&file, &settings, &cache, &[("k".into(), blocks)], &|_| {
                    Vec::new()
                }),
            };
            found.into_iter().map(move |f| (seed, f))
        })
        .collect();
    let (seeds, found): (Vec<u64>, Vec<Found>) = found.into_iter().unzip();
    report(
        &found,
        &format!("{n} generated reductions with big shared arrays"),
    );
    let mut guarded = 0;
    let mut hoisted = 0;
    for (seed, f) in seeds.iter().zip(&found) {
        let bytes = static_bytes(&f.text);
        assert!(
            bytes.is_some_and(|b| b <= MAX_STATIC_SHARED_BYTES),
            "variant {seed}: {bytes:?} static shared bytes in\n{}",
            f.text
        );
        if f.applied.contains(&"block guard") {
            guarded += 1;
            let before = f.text.find("if (blockDim.x ==").unwrap_or(0);
            hoisted += usize::from(f.text[..before].contains("stage[STAGE]"));
        }
    }
    println!(
        "{} rewrites of {n} variants: {guarded} guarded, {hoisted} of them with the big arrays declared once before the test",
        found.len()
    );
    assert!(
        n < 8 || hoisted > 0,
        "no guarded rewrite declares its big arrays once"
    );
    // Guarded ones first: they declare arrays on both sides.
    let mut order: Vec<&Found> = found.iter().collect();
    order.sort_by_key(|f| !f.applied.contains(&"block guard"));
    order.truncate(COMPILED);
    if let Some(compiled) = compile(&order) {
        println!("{compiled} rewrites compiled with nvcc");
    }
}
