//! Generated kernels that read and write their `float` arrays through
//! vector views: `reinterpret_cast<float4 *>(a)[i]`, C casts to `float2`
//! pointers, `*(const float4 *)(a + 4·i)`, local view pointers, and stores
//! of a whole vector or of one member, at indices from the thread, from
//! the loop counter or both, in counted, block-strided and grid-strided
//! loops; some accumulate through a pointer to a local (`add_to(&acc, …)`).

use copper::sim::params::SplitMix;

use super::Generated;

/// Accesses through a view; `IDX` is the index expression. Each keeps the
/// view inside the 64 floats of `a` and `out`.
const ACCESSES: [&str; 9] = [
    "float4 v = reinterpret_cast<float4 *>(a)[(IDX) % 16]; acc += v.x + v.w;",
    "acc += ((const float2 *)a)[(IDX) % 32].y;",
    "acc += (*(const float4 *)(a + 4 * ((IDX) % 16))).z;",
    "const float4 *v4 = reinterpret_cast<const float4 *>(a); acc += v4[(IDX) % 16].y;",
    "reinterpret_cast<float2 *>(out)[(IDX) % 32] = make_float2(acc, 1.0f);",
    "float4 *o4 = reinterpret_cast<float4 *>(out); o4[(IDX) % 16].x += acc;",
    "if (((const float4 *)a)[(IDX) % 16].x > 0.0f) { acc += 1.0f; }",
    "add_to(&acc, ((const float2 *)a)[(IDX) % 32].x);",
    "float *p = &acc; add_to(p, reinterpret_cast<const float4 *>(a)[(IDX) % 16].w); *p *= 0.5f;",
];

/// Index expressions: per thread, per iteration, both, strided, and one
/// the same in every lane of a row.
const INDICES: [&str; 5] = [
    "threadIdx.x",
    "c",
    "threadIdx.x + c",
    "threadIdx.x * 5 + c",
    "threadIdx.y",
];

/// Loop heads over the counter `c`.
const LOOPS: [&str; 3] = [
    "for (int c = 0; c < n; c++)",
    "for (int c = threadIdx.x; c < n; c += blockDim.x)",
    "for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < n; c += blockDim.x * gridDim.x)",
];

const BLOCKS: [[u64; 3]; 4] = [[32, 1, 1], [64, 1, 1], [33, 2, 1], [16, 4, 1]];

const GRIDS: [[u64; 3]; 3] = [[1, 1, 1], [3, 1, 1], [40, 1, 1]];

/// Generated launch `i`.
pub fn generate(i: u64) -> Generated {
    let mut g = SplitMix::new(0x7EC4 ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut pick = |n: u64| g.next_u64() % n.max(1);
    let index = INDICES[pick(INDICES.len() as u64) as usize];
    let access = ACCESSES[pick(ACCESSES.len() as u64) as usize].replace("IDX", index);
    let head = LOOPS[pick(LOOPS.len() as u64) as usize];
    let src = format!(
        "__device__ void add_to(float *d, float x) {{ *d += x; }}\n\
         __global__ void k(float *a, float *out, int n) {{\n\
         float acc = 0;\n\
         {head} {{ {access} }}\n\
         out[threadIdx.x % 64] = acc;\n\
         }}"
    );
    Generated {
        src,
        grid: GRIDS[pick(GRIDS.len() as u64) as usize],
        block: BLOCKS[pick(BLOCKS.len() as u64) as usize],
        n: pick(300) as i64,
    }
}
