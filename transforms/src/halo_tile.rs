//! Halo tiles for 1-D sliding windows. A kernel whose threads each read
//! a window of an array around their own element
//!
//! ```c
//! int i = blockIdx.x * blockDim.x + threadIdx.x;
//! if (i < n) {
//!     for (int k = -R; k <= R; k++)
//!         if (i + k >= 0 && i + k < n) s += in[i + k];
//! }
//! ```
//!
//! reads each element from global memory in `2R + 1` threads. The block
//! instead loads the elements its windows cover into a `__shared__` tile
//! of `blockDim.x + 2R` elements together (a strided loop, right for every
//! block size), waits at one barrier, and the window reads
//! `tile[threadIdx.x + (k + R)]`.
//!
//! Exactly the elements the original reads are loaded. The threads of a
//! block that reach the loop are `i` in `[base, min(base + blockDim.x, n))`
//! (`base = i - threadIdx.x`); each reads `i + k` for every `k` of the
//! range under bounds on `i + k` alone, so the block reads the interval
//! `[base + S, min(base + blockDim.x, n) - 1 + E]` within those bounds:
//! tile element `t` is `j = base + S + t` and is loaded when `base < n`,
//! `j - E < n` and the bounds hold at `j` (computed in `long long`, so the
//! halo's indices cannot overflow). Conditions on the way that are the same
//! in every thread of the block guard the load as they are.
//!
//! Where the barrier goes: at the kernel's top level before the first
//! statement that holds a `return` or the loop, as for the cooperative
//! load ([`crate::coop_load`]), so every thread reaches it; threads past
//! `n` take part in the load.
//!
//! The tile is static, sized for the largest block (1024 threads plus the
//! halo); the rewritten body runs under `blockDim.x <= 1024 &&
//! blockDim.y == 1 && blockDim.z == 1`, any other block runs the original
//! body. The array is only read in the kernel and proved apart from the
//! written ones, or declared `__restrict__` in the diff
//! ([`crate::overlap`]). Each thread reads the same values in the same
//! order, so results are bit for bit the same.
//!
//! What qualifies, checked syntactically: a top-level `int i =
//! blockIdx.x * blockDim.x + threadIdx.x;` (operands in any order) never
//! assigned; a loop `for (int k = S; k <= E; k++)` (or `<`) with constant
//! bounds (macros and top-level `const int` locals included), not in
//! another loop or an `else`, whose body has no `break`, `continue` or
//! `return`; every read of the array in it is `a[i + k]` (or `a[j]` with
//! `int j = i + k;` at the top of the body), evaluated unconditionally in
//! its statement, standing only under `if`s whose conditions are
//! conjunctions of bounds `i + k < m`, `i + k >= m` (…) with `m` an `int`
//! literal, local constant or fixed `int` parameter, the same bounds for
//! every read; the conditions on the way to the loop are `i < n` (also as
//! `if (i >= n) return;`), `i >= m` (then some thread of the block must be
//! `i >= m`, and `j - S >= m`), or the same in every thread. A radius from
//! a parameter (dynamic shared memory sized at the launch) is refused.

mod build;
mod window;

use copper::cuda::ast::Type;

use crate::coop_load::static_shared_bytes;
use crate::tiled_shared::Staging;
use crate::{overlap, Candidate, Context, Proposals, Skip, Transform};

/// The largest block the tile is sized for (CUDA's limit on threads per
/// block).
const MAX_BLOCK: u64 = 1024;
/// Static shared memory a block may declare, in bytes.
const SHARED_LIMIT: u64 = 48 * 1024;

/// Halo tiles for 1-D sliding windows.
pub struct HaloTile;

impl Transform for HaloTile {
    fn name(&self) -> &'static str {
        "halo tile"
    }

    fn propose(&self, cx: &Context) -> Proposals {
        let f = cx.function;
        let mut out = Proposals::default();
        let staging = Staging::of(f);
        let indices = window::global_indices(f);
        let k = window::Kernel {
            f,
            fixed: staging.fixed.clone(),
            consts: window::local_consts(f),
        };
        let used = static_shared_bytes(f);
        for l in &staging.loops {
            let line = cx.line(l.meta.span);
            let read_here = crate::ast_util::Effects::of(&crate::tiled_shared::loop_body(l)).reads;
            for p in window::written_windows(f, l, &indices, &staging.effects) {
                out.skipped.push(Skip {
                    span: l.meta.span,
                    reason: format!(
                        "`{p}` is not loaded into a halo tile for the loop at line {line}: the kernel writes it, so a tile could hold stale values"
                    ),
                });
            }
            for p in staging
                .arrays
                .iter()
                .filter(|p| read_here.contains(&p.name))
                .filter(|p| window::looks_like_window(f, l, &p.name, &indices))
            {
                let left_alone = format!(
                    "`{}` is not loaded into a halo tile for the loop at line {line}",
                    p.name
                );
                let mut refuse = |why: String| {
                    out.skipped.push(Skip {
                        span: l.meta.span,
                        reason: format!("{left_alone}: {why}"),
                    })
                };
                let mut found = None;
                let mut first_why = None;
                for &(at, ref i) in &indices {
                    match window::recognize(&k, l, &p.name, (at, i)) {
                        Ok(w) => {
                            found = Some(w);
                            break;
                        }
                        Err(why) => {
                            first_why.get_or_insert(why.to_string());
                        }
                    }
                }
                let Some(w) = found else {
                    refuse(
                        first_why.unwrap_or_else(|| "copper lost track of the window".to_string()),
                    );
                    continue;
                };
                let elem = Type {
                    is_const: false,
                    pointers: Vec::new(),
                    ..p.ty.clone()
                };
                let bytes =
                    u64::from(elem.base.size_bytes().unwrap_or(u32::MAX)) * build::tile_len(&w);
                match used {
                    None => {
                        refuse("the kernel's shared arrays have sizes copper cannot read as constants, so the tile may not fit".into());
                        continue;
                    }
                    Some(u) if u + bytes > SHARED_LIMIT => {
                        refuse(format!("a tile of {} elements takes {bytes} bytes, and with the kernel's {u} bytes of shared memory more than {SHARED_LIMIT}", build::tile_len(&w)));
                        continue;
                    }
                    Some(_) => {}
                }
                let function = build::rewrite(f, l.meta.id, &p.name, elem, &w);
                let halo = w.last.abs_diff(w.first);
                let description = format!(
                    "loaded the elements of `{}` that a block's windows read in the loop at line {line} (`{}` for `{}` from {} to {}) into a `__shared__` tile of blockDim.x + {halo} elements, each once, by the whole block and only where the original reads it; the loop reads the tile. Blocks that are not 1-D or have more than {MAX_BLOCK} threads run the original code",
                    p.name,
                    copper::cuda::print::expression(&crate::ast_util::index(&p.name, w.element())),
                    w.counter,
                    w.first,
                    w.last,
                );
                let c = Candidate::new(self.name(), function, description);
                let pairs: Vec<(String, String)> = staging
                    .effects
                    .array_writes
                    .iter()
                    .map(|wr| (p.name.clone(), wr.clone()))
                    .collect();
                let why = (
                    left_alone.as_str(),
                    "the kernel writes one of them while the tile holds the other",
                );
                overlap::offer(cx, c, &pairs, &mut out, l.meta.span, why);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
