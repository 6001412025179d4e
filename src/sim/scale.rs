//! Test launches from a parameter file written for a GPU (a 4096×4096
//! image, 2^24 elements), which is far beyond what the simulator runs in a
//! search's or a lint's budget. Its launch is scaled down before the
//! checks and the race search use it: every grid dimension of more than
//! one block divided by the same power of two, and the integer arguments
//! that count elements across the grid (at least as many as the blocks
//! taken away span) divided with it, so that the launch still covers its
//! data the way the file's does. Array lengths written as expressions
//! follow the arguments; a length written as a number follows them when
//! it is a small multiple of a product of them (`16777216` for a
//! 4096×4096 image), and stays otherwise.

use std::collections::BTreeMap;

use crate::cuda::launch::{TEST_BYTES, TEST_THREADS};
use crate::ir::{Kernel, Param};
use crate::sim::params::LaunchSpec;

/// A launch scaled down for testing, and what was changed (for the
/// kernel's assumptions line).
#[derive(Clone, Debug, PartialEq)]
pub struct Scaled {
    /// The launch the checks vary.
    pub spec: LaunchSpec,
    /// "grid 256×256 → 8×8, `width` 4096 → 128": empty when the launch is
    /// tested as written.
    pub changes: Vec<String>,
}

/// `spec` when it runs at most [`TEST_THREADS`] threads over arrays of at
/// most [`TEST_BYTES`] bytes each; else `spec` scaled down (see the module
/// documentation). A launch whose arguments cannot be scaled (a length
/// expression that fails on the smaller values) is kept as written.
pub fn for_testing(kernel: &Kernel, spec: &LaunchSpec) -> Scaled {
    let as_written = Scaled {
        spec: spec.clone(),
        changes: Vec::new(),
    };
    let block: u64 = spec.block.iter().product::<u64>().max(1);
    let blocks: u64 = spec.grid.iter().product::<u64>().max(1);
    let bytes = largest_array_bytes(kernel, spec);
    let threads = blocks.saturating_mul(block);
    if threads <= TEST_THREADS && bytes <= TEST_BYTES {
        return as_written;
    }
    // Per grid dimension: the power of two that brings the blocks under
    // the thread limit when every spread dimension is divided by it.
    let spread = spec.grid.iter().filter(|&&g| g > 1).count() as u32;
    let wanted_blocks = (TEST_THREADS / block).max(1);
    let mut per_dim = 1u64;
    while spread > 0 && per_dim.saturating_pow(spread).saturating_mul(wanted_blocks) < blocks {
        per_dim *= 2;
    }
    // A small grid over large arrays (a grid-stride loop): the arguments
    // alone are divided, by the arrays' excess.
    let factor = if per_dim > 1 {
        per_dim
    } else {
        bytes.div_ceil(TEST_BYTES).next_power_of_two()
    };
    let largest_block_dim = spec.block.iter().copied().max().unwrap_or(1);
    let threshold = factor.saturating_mul(largest_block_dim) as f64;
    let mut scaled = spec.clone();
    let mut changes = Vec::new();
    let grid: Vec<u64> = spec.grid.iter().map(|g| g.div_ceil(per_dim)).collect();
    if grid != spec.grid {
        changes.push(format!("grid {} → {}", dims(&spec.grid), dims(&grid)));
        scaled.grid = grid;
    }
    for (name, &value) in &spec.args {
        if value.fract() != 0.0 || value < threshold || !integer_param(kernel, name) {
            continue;
        }
        let smaller = (value / factor as f64).ceil();
        match scaled.with_arg(name, smaller) {
            Ok(s) => {
                scaled = s;
                changes.push(format!("`{name}` {value} → {smaller}"));
            }
            Err(_) => return as_written,
        }
    }
    for (name, a) in scaled.arrays.iter_mut() {
        if a.len_expr.is_some() {
            continue;
        }
        if let Some(len) = literal_length(a.len, &spec.args, &scaled.args) {
            changes.push(format!("`{name}` {} → {len} elements", a.len));
            a.len = len;
        }
    }
    Scaled {
        spec: scaled,
        changes,
    }
}

/// The length an array written with the number `len` gets when `len`
/// is a small multiple `c·x·y…` (c ≤ 16) of one, two or three integer
/// arguments, some of which were scaled (`was` → `now`): `c` times their
/// new product (`w * h` of a 4096×4096 image, written 16777216). The
/// multiple whose arguments' product is largest wins; `None` when no
/// scaled argument divides it so.
fn literal_length(
    len: u64,
    was: &BTreeMap<String, f64>,
    now: &BTreeMap<String, f64>,
) -> Option<u64> {
    let ints: Vec<(u64, u64)> = was
        .iter()
        .filter(|(_, v)| v.fract() == 0.0 && **v >= 1.0)
        .map(|(k, v)| (*v as u64, now.get(k).map_or(*v, |n| *n) as u64))
        .collect();
    let mut best: Option<(u64, u64)> = None;
    let mut consider = |picked: &[(u64, u64)]| {
        let old = picked
            .iter()
            .try_fold(1u64, |p, (o, _)| p.checked_mul(*o))?;
        let new: u64 = picked.iter().map(|(_, n)| n).product();
        let scaled = picked.iter().any(|(o, n)| o != n);
        let c = len / old;
        if scaled && len.is_multiple_of(old) && c <= 16 && best.is_none_or(|(p, _)| old > p) {
            best = Some((old, c * new));
        }
        Some(())
    };
    for i in 0..ints.len() {
        consider(&ints[i..=i]);
        for j in i + 1..ints.len() {
            consider(&[ints[i], ints[j]]);
            for k in j + 1..ints.len() {
                consider(&[ints[i], ints[j], ints[k]]);
            }
        }
    }
    best.map(|(_, len)| len)
}

/// The bytes of the launch's largest array (elements of unknown size
/// count one byte).
fn largest_array_bytes(kernel: &Kernel, spec: &LaunchSpec) -> u64 {
    spec.arrays
        .iter()
        .map(|(name, a)| {
            let size = kernel
                .arrays
                .iter()
                .find(|k| &k.name == name)
                .map_or(1, |k| u64::from(k.layout.size).max(1));
            a.len.saturating_mul(size)
        })
        .max()
        .unwrap_or(0)
}

/// Whether `name` is an integer scalar parameter of `kernel`.
fn integer_param(kernel: &Kernel, name: &str) -> bool {
    kernel.params.iter().any(|p| match p {
        Param::Scalar(v) => {
            let var = &kernel.vars[*v];
            var.name == name && !var.ty.is_float()
        }
        _ => false,
    })
}

fn dims(d: &[u64]) -> String {
    let used = d.iter().rposition(|&x| x > 1).map_or(1, |i| i + 1);
    d[..used]
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join("×")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::parse::parse_source;
    use crate::ir::lower::lower_kernel;
    use crate::sim::params::ParamFile;

    fn scaled(src: &str, params: &str, name: &str) -> Scaled {
        let file = parse_source(crate::source::SourceFile::new("t.cu", src));
        let kernel = lower_kernel(&file, name).unwrap();
        let p = ParamFile::from_toml(params).unwrap();
        for_testing(&kernel, &p.kernel[name])
    }

    const IMAGE: &str = "__global__ void k(const float *in, float *out, int w, int h, int k) {
        int r = blockIdx.x * blockDim.x + threadIdx.x;
        int c = blockIdx.y * blockDim.y + threadIdx.y;
        if (r < h && c < w) out[r * w + c] = in[r * w + c] * k;
    }";

    #[test]
    fn a_gpu_sized_image_keeps_its_shape_at_a_testable_size() {
        let s = scaled(
            IMAGE,
            "[kernel.k]\ngrid=[256,256]\nblock=[16,16]\n[kernel.k.args]\nw=4096\nh=4096\nk=3\n\
             [kernel.k.arrays.in]\nlen=\"w * h\"\n[kernel.k.arrays.out]\nlen=\"w * h\"\n",
            "k",
        );
        assert_eq!(s.spec.grid, vec![8, 8]);
        assert_eq!(
            (s.spec.args["w"], s.spec.args["h"], s.spec.args["k"]),
            (128.0, 128.0, 3.0)
        );
        assert_eq!(s.spec.arrays["in"].len, 128 * 128);
        assert_eq!(
            s.changes,
            vec!["grid 256×256 → 8×8", "`h` 4096 → 128", "`w` 4096 → 128"]
        );
    }

    #[test]
    fn a_length_written_as_a_number_follows_the_arguments_it_multiplies() {
        // 4096 * 4096 written out; a lookup table of 100 entries is no
        // multiple of a scaled argument and stays.
        let s = scaled(
            "__global__ void k(const float *in, float *out, const float *lut, int w, int h, int k) {
                int r = blockIdx.x * blockDim.x + threadIdx.x;
                int c = blockIdx.y * blockDim.y + threadIdx.y;
                if (r < h && c < w) out[r * w + c] = in[r * w + c] * lut[k];
            }",
            "[kernel.k]\ngrid=[256,256]\nblock=[16,16]\n[kernel.k.args]\nw=4096\nh=4096\nk=3\n\
             [kernel.k.arrays.in]\nlen=16777216\n[kernel.k.arrays.out]\nlen=33554432\n\
             [kernel.k.arrays.lut]\nlen=100\n",
            "k",
        );
        assert_eq!(s.spec.arrays["in"].len, 128 * 128);
        assert_eq!(s.spec.arrays["out"].len, 2 * 128 * 128, "twice w * h");
        assert_eq!(s.spec.arrays["lut"].len, 100);
        assert!(
            s.changes
                .contains(&"`in` 16777216 → 16384 elements".to_string()),
            "{:?}",
            s.changes
        );
    }

    #[test]
    fn a_small_launch_is_tested_as_written() {
        let p = "[kernel.k]\ngrid=[4,5]\nblock=[16,16]\n[kernel.k.args]\nw=70\nh=60\nk=3\n\
                 [kernel.k.arrays.in]\nlen=4200\n[kernel.k.arrays.out]\nlen=4200\n";
        let s = scaled(IMAGE, p, "k");
        assert!(s.changes.is_empty());
        assert_eq!(s.spec, ParamFile::from_toml(p).unwrap().kernel["k"]);
    }

    #[test]
    fn a_grid_stride_loop_over_large_arrays_gets_a_smaller_count() {
        let s = scaled(
            "__global__ void k(float *a, unsigned n) {
                for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a[i] *= 2.0f;
            }",
            "[kernel.k]\ngrid=[32]\nblock=[256]\n[kernel.k.args]\nn=16777216\n\
             [kernel.k.arrays.a]\nlen=\"n\"\n",
            "k",
        );
        assert_eq!(s.spec.grid, vec![32]);
        assert_eq!(s.spec.args["n"], 16777216.0 / 64.0);
        assert!(s.spec.arrays["a"].len * 4 <= TEST_BYTES);
    }

    #[test]
    fn a_one_dimensional_reduction_keeps_one_block_per_256_elements() {
        let s = scaled(
            "__global__ void k(const int *in, int *out, int n) {
                __shared__ int s[256];
                int i = blockIdx.x * blockDim.x + threadIdx.x;
                s[threadIdx.x] = i < n ? in[i] : 0;
                __syncthreads();
                if (threadIdx.x == 0) out[blockIdx.x] = s[0];
            }",
            "[kernel.k]\ngrid=[65536]\nblock=[256]\n[kernel.k.args]\nn=16777216\n\
             [kernel.k.arrays.in]\nlen=\"n\"\n[kernel.k.arrays.out]\nlen=65536\n",
            "k",
        );
        let blocks = s.spec.grid[0];
        assert!(blocks * 256 <= TEST_THREADS, "{blocks}");
        assert_eq!(s.spec.args["n"], (blocks * 256) as f64);
        assert_eq!(
            s.spec.arrays["out"].len, 65536,
            "a length written as a number stays"
        );
    }
}
