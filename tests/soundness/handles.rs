//! Generated kernels that pass their scalar parameter by address and read
//! texture objects: `&n` handed to `__device__` functions that read or
//! lower it (so the loop's bound is read from memory each iteration),
//! pointers to `n` read and written in the kernel, and `tex1Dfetch<float>`,
//! `tex2D<float>` and `tex3D<float>` on `cudaTextureObject_t` parameters
//! (integer and floating coordinates, in and out of range), and surface
//! objects read and written with `surf2Dread`/`surf2Dwrite` and the 1-D
//! forms, directly, through a device function, and in conditions; in
//! counted, block-strided and grid-strided loops over `n`.

use copper::sim::params::SplitMix;

use super::Generated;

/// Loop bodies; `IDX` is an index expression. Each keeps its reads inside
/// the 64 elements of `a`, `out` and the 1-D texture `t` (the 2-D texture
/// `u` and the 3-D one `v`, of 64 elements too, clamp their coordinates;
/// the 8×8 surface `s` and the 1-D one `w` of 64 are accessed in range),
/// and never raises `n` (the loops end).
const BODIES: [&str; 19] = [
    "acc += tex1Dfetch<float>(t, (IDX) % 64);",
    "acc += fetch(t, (IDX) % 64) * a[(IDX) % 64];",
    "if (tex1Dfetch<float>(t, (IDX) % 64) > 0.0f) { acc += 1.0f; } else { out[(IDX) % 64] = acc; }",
    "shrink(&n, c); acc += a[(IDX) % 64];",
    "int *pn = &n; acc += a[(*pn + IDX) % 64];",
    "int *pn = &n; if (c % 5 == 4) { *pn = *pn - 2; } acc += 1.0f;",
    "acc += a[(IDX) % 64]; if (peek(&n) > 200) { shrink(&n, 3); }",
    "shrink(&n, c); acc += tex1Dfetch<float>(t, (IDX + n) % 64);",
    "int *pn = &n; acc += fetch(t, (IDX) % 64); *pn -= (c & 1);",
    "acc += a[(IDX) % 64] + tex1Dfetch<float>(t, (c * 7) % 64);",
    "acc += tex2D<float>(u, (IDX) % 11 - 1.5f, c * 0.75f);",
    "acc += tex2D<float>(u, IDX, (IDX) / 9 - 1);",
    "acc += fetch2(u, IDX, c - 2) * a[(IDX) % 64];",
    "if (tex2D<float>(u, c, threadIdx.x) > 0.0f) { acc += tex3D<float>(v, IDX, c % 5, 2.5f); }",
    "shrink(&n, c); acc += tex3D<float>(v, threadIdx.x * 0.5f, (IDX) % 7, c - 1);",
    "float sv; surf2Dread(&sv, s, ((IDX) % 8) * 4, c % 8); acc += sv;",
    "acc += surf2Dread<float>(s, (c % 8) * sizeof(float), (IDX) % 8); surf2Dwrite(acc, s, (threadIdx.x % 8) * 4, (IDX) / 8 % 8);",
    "if (c % 3 == 0) { surf1Dwrite(acc + a[(IDX) % 64], w, ((IDX) % 64) * 4); } else { acc += surf1Dread<float>(w, (c % 64) * 4); }",
    "acc += average(s, (IDX) % 7, c % 7);",
];

/// Index expressions: per thread, per iteration and both.
const INDICES: [&str; 4] = ["threadIdx.x", "c", "threadIdx.x + c", "threadIdx.x * 3 + c"];

/// Loop heads over the counter `c` and the bound `n`.
const LOOPS: [&str; 3] = [
    "for (int c = 0; c < n; c++)",
    "for (int c = threadIdx.x; c < n; c += blockDim.x)",
    "for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < n; c += blockDim.x * gridDim.x)",
];

const BLOCKS: [[u64; 3]; 4] = [[32, 1, 1], [64, 1, 1], [33, 2, 1], [16, 4, 1]];

const GRIDS: [[u64; 3]; 3] = [[1, 1, 1], [3, 1, 1], [40, 1, 1]];

/// Generated launch `i`.
pub fn generate(i: u64) -> Generated {
    let mut g = SplitMix::new(0x4A1D ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut pick = |n: u64| g.next_u64() % n.max(1);
    let index = INDICES[pick(INDICES.len() as u64) as usize];
    let body = BODIES[pick(BODIES.len() as u64) as usize].replace("IDX", index);
    let head = LOOPS[pick(LOOPS.len() as u64) as usize];
    // A texture object parameter only where it is fetched: one never
    // fetched is refused.
    let texture: String = ["t", "u", "v"]
        .iter()
        .filter(|t| body.contains(&format!("({t},")))
        .map(|t| format!("cudaTextureObject_t {t}, "))
        .chain(
            ["s", "w"]
                .iter()
                .filter(|t| body.contains(&format!("({t},")) || body.contains(&format!(", {t},")))
                .map(|t| format!("cudaSurfaceObject_t {t}, ")),
        )
        .collect();
    let src = format!(
        "__device__ float fetch(cudaTextureObject_t tex, int i) {{ return tex1Dfetch<float>(tex, i); }}\n\
         __device__ float fetch2(cudaTextureObject_t tex, int x, int y) {{ return tex2D<float>(tex, x + 0.5f, y + 0.5f); }}\n\
         __device__ float average(cudaSurfaceObject_t surf, int x, int y) {{ float p, q; surf2Dread(&p, surf, x * 4, y); surf2Dread(&q, surf, (x + 1) * 4, y + 1); return 0.5f * (p + q); }}\n\
         __device__ void shrink(int *m, int c) {{ if (c % 4 == 3) {{ *m -= 1; }} }}\n\
         __device__ int peek(const int *m) {{ return *m; }}\n\
         __global__ void k(float *a, float *out, {texture}int n) {{\n\
         float acc = 0;\n\
         {head} {{ {body} }}\n\
         out[threadIdx.x % 64] = acc;\n\
         }}"
    );
    Generated {
        src,
        grid: GRIDS[pick(GRIDS.len() as u64) as usize],
        block: BLOCKS[pick(BLOCKS.len() as u64) as usize],
        n: pick(400) as i64,
    }
}
