//! Halo tiles for 1-D and 2-D sliding windows. A kernel whose threads each read
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
//! halo's indices cannot overflow). A clamped read makes the same
//! function of the position (`min`, `max` and `?:` on the position and
//! fixed `int`s) in every thread; the tile then holds at position `j`
//! what that function makes of `(int)j`, the element the original reads
//! there (the position is one some thread computed as an `int`).
//! Conditions on the way that are the same
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
//! `return` (a `continue` guard aside, see below); every read of the array in it is `a[i + k]` (or `a[j]` with
//! `int j = i + k;` at the top of the body), or every one the same clamp
//! of it (`a[min(max(i + k, 0), n - 1)]`, a `?:`, or through the local:
//! `if (j < 0) j = 0; if (j >= n) j = n - 1;`, see below), evaluated unconditionally in
//! its statement, standing only under `if`s whose conditions are
//! conjunctions of bounds `i + k < m`, `i + k >= m` (…) with `m` an `int`
//! literal, local constant or fixed `int` parameter, the same bounds for
//! every read; the conditions on the way to the loop are `i < n` (also as
//! `if (i >= n) return;`), `i >= m` (then some thread of the block must be
//! `i >= m`, and `j - S >= m`), or the same in every thread. A radius from
//! a parameter (dynamic shared memory sized at the launch) is refused.
//!
//! # 2-D windows
//!
//! Box blurs, mean filters and Jacobi-like stencils
//!
//! ```c
//! int x = blockIdx.x * blockDim.x + threadIdx.x;
//! int y = blockIdx.y * blockDim.y + threadIdx.y;
//! if (x < w && y < h)
//!     for (int dy = -R; dy <= R; dy++)
//!         for (int dx = -R; dx <= R; dx++) {
//!             int yy = y + dy, xx = x + dx;
//!             if (yy >= 0 && yy < h && xx >= 0 && xx < w) s += in[yy * w + xx];
//!         }
//! ```
//!
//! read each pixel in `(2R + 1)²` threads. The block loads the pixels its
//! windows cover into a `__shared__` tile of `(blockDim.y + 2R) ×
//! (blockDim.x + 2R)` by a strided loop over the tile's rows and, in it,
//! its columns (all threads, those outside the image too), waits at one
//! barrier, and the windows read `tile[threadIdx.y + (dy + R)][threadIdx.x
//! + (dx + R)]`.
//!
//! The proof is the 1-D one along each axis: the threads that reach the
//! loops are those whose `x` passes the bounds on `x` and whose `y` passes
//! those on `y` (a product, since no condition on the way mixes them), and
//! each reads the positions `(y + dy, x + dx)` under bounds on `y + dy`
//! and on `x + dx` separately, so the positions read are the product of
//! the rows and the columns the 1-D proof gives. Tile element `(ty, tx)`
//! is position `(jy, jx) = (by + ty + Sy, bx + tx + Sx)` (`by = y -
//! threadIdx.y`, in `long long`), loaded when both axes' conditions hold
//! at it; the element loaded is the one the original reads there,
//! `in[Y * w + X]` with `Y` and `X` what the reads make of the position
//! (itself, or a clamp `min(max(jy, 0), h - 1)`) computed from `(int)jy`
//! and `(int)jx`: a position some thread reads is one it computed as an
//! `int`. The loops may come in either order, the row loop outside or
//! inside.
//!
//! The tile is static, sized for blocks up to 32 × 32 (the usual 16 × 16,
//! 32 × 8 and 32 × 32 included), its rows padded to 16 words past a
//! multiple of 32 so that the two rows a warp of a 16-wide block reads
//! fall in different banks; the rewritten body runs under `blockDim.x <=
//! 32 && blockDim.y <= 32 && blockDim.z == 1`, any other block (64 × 4,
//! a 3-D block) runs the original body. A tile over 48 KiB with the
//! kernel's own shared memory and the dynamic shared memory its launches
//! in the file ask for ([`crate::shared_budget`]) is refused, and so is a
//! tile whose threads read no more elements each than the rounds of its
//! load a warp may run on the block analyzed for (4 on any block: a
//! 5-point cross without its center reads 4): each round is an access
//! to the warp's rows as each read is, so the tile touches no fewer
//! sectors and adds a barrier.
//!
//! What qualifies, besides the 1-D conditions on each loop (constant
//! ranges, no jumps, the loops not in another loop): top-level `int`
//! indices `x` along x and `y` along y as above; the outer loop's body is
//! declarations and then the inner loop, perhaps under an `if` on bounds
//! of the outer position (the normal form of a row skipped by `if (yy <
//! 0 || yy >= h) continue;` before the inner loop, whose bounds then
//! guard the reads as the inner loop's own do); every read of the array in the
//! inner loop is `a[Y * w + X]` (the terms in any order, `X` perhaps
//! written as `x + dx` split around the row term), the same `Y`, `w` and
//! `X` in every read, `w` a fixed `int`; `Y` is `y + dy`, a local copy of
//! it (`int yy = y + dy;` in either loop's body) or `min`/`max` of one of
//! those with a fixed `int`, `X` the same with `x + dx`; the reads stand
//! under bounds on `y + dy` and `x + dx` (or their copies) only; the
//! conditions on the way bound `x` or `y` alone (`x < w`, `y >= R`, also
//! `if (x >= w || y >= h) return;`) or are the same in every thread.
//! Bounds `i > c` and `i <= c` count as `i >= c + 1` and `i < c + 1`
//! (`c + 1` folded for a constant, else computed in `long long`). A
//! clamp may also be written with `?:` (`xx < 0 ? 0 : (xx > w - 1 ? w - 1
//! : xx)`): any nest of `min`, `max` and `?:` on comparisons whose
//! operands are the position or fixed `int`s is a function of the
//! position alone, and the tile loads what it makes of each position.
//!
//! # Bounds and clamps as statements
//!
//! The loops are recognized in normal form ([`normalize`]): updates of a
//! local right after its declaration (`int xx = x + dx; if (xx < 0) xx =
//! 0; if (xx >= w) xx = w - 1;`, `xx = min(max(xx, 0), w - 1);`) folded
//! into it, and `if (C) continue;` read as the guard `if (!C)` of the rest
//! of the body (`if (xx < 0 || xx >= w) continue;` as `xx >= 0 && xx <
//! w`). Both keep the elements read and the conditions under which each
//! is read, so the proofs above apply as they are; the rewrite edits the
//! kernel as written (the loops and reads are the same nodes), and drops
//! from the tiled loop the locals it leaves unused with their updates.
//!
//! # Windows written out
//!
//! Most students write a stencil as its neighbour reads, with no offset
//! loop:
//!
//! ```c
//! if (i > 0 && i < n - 1) out[i] = (in[i - 1] + in[i] + in[i + 1]) / 3.0f;
//! if (x > 0 && x < w - 1 && y > 0 && y < h - 1) {
//!     int idx = y * w + x;
//!     out[idx] = 0.25f * (in[idx - 1] + in[idx + 1] + in[idx - w] + in[idx + w]);
//! }
//! ```
//!
//! Each read's index, with constants folded and the `int` locals never
//! assigned replaced by their values (`idx`), must be the thread's own
//! element plus a constant: `i + c` in 1-D, `(y + dy) * w + (x + dx)` in
//! 2-D (`w` a fixed `int` parameter, a top-level `const int W = width;`
//! copy of one or a local constant `const int N = 512;` kept by name,
//! declared before the tile's load; `in[(y - 1) * w + x + 1]`,
//! `in[idx - w - 1]` and the like). The radius along each axis is the largest
//! offset; the same tiles, guards and barrier as for the loops serve the
//! reads (`tile[threadIdx.x + (c - S)]`). The reads must all stand in
//! straight-line statements of one statement list (reached through `if`s
//! without `else` and blocks, the same conditions on the way as for a
//! loop), none in a loop, none conditional within its expression
//! (`i > 0 ? in[i - 1] : 0` is refused), no `return` between them; so
//! every thread that reaches them reads every offset.
//!
//! A 1-D read may be clamped at the ends (`in[max(i - 1, 0)]`,
//! `in[min(n - 1, i + 1)]`, both), each read on either side or not at
//! all, every clamp on one side against the same fixed `int` bound. The
//! tile then holds `in[min(max((int)j, lo), hi)]` at position `j` (only
//! the bounds some read uses), which must be what every read makes of `j`
//! for every thread that reaches it (`written::clamp`):
//! a read without the lower clamp needs `i + c >= lo`, one without the
//! upper `i + c <= hi`, and with both bounds `lo <= hi` (then a read
//! clamped below only reads `max(j, lo) <= hi`, and either nesting of the
//! two clamps is the same). Each is proved from the bounds of the threads
//! that reach the reads, `i >= 0` (the global index) or `i >= m` and `i <
//! b`, as a constant difference (`hi - b + 1 - c >= 0` for `hi = n - 1`
//! against `i < n`); else the reads are refused with the reason.
//!
//! A 2-D read may clamp its row and its column the same way, each on its
//! own (`in[max(y - 1, 0) * w + min(x + 1, w - 1)]`, `int yu = y > 0 ?
//! y - 1 : 0; … in[yu * w + xl]`): the clamp must be of the whole row
//! position `y + dy` or the whole column position `x + dx` (checked with
//! each clamp as a name of its own, so `(max(y - 1, 0) + 1) * w` is
//! refused), and the proof above is made along each axis from that
//! axis's bounds. The tile holds `in[(long long)Cy(jy) * w + Cx(jx)]` at
//! position `(jy, jx)`, `Cy` and `Cx` the clamps of the rows and the
//! columns; a read at that position makes the same row and the same
//! column, so the same element, whichever way it writes its index. A
//! clamp is monotone, so an element loaded between two reads of a thread
//! is still between the elements they read.
//!
//! What is loaded. The offsets a thread reads need not fill the tile's
//! rectangle: a 5-point cross has no corners, `in[i + 2] - in[i - 2]`
//! skips three. The loaded set is a union of boxes of offsets (a first and
//! last offset per axis; [`window::Served::boxes`]), each box tested as
//! the loops' whole range is: position `j` is loaded for box `[s, e]` when
//! some thread of the block that reaches the reads has `j` in `[i + s, i +
//! e]` (the 1-D proof with `s`, `e` for `S`, `E`, and `t >= s - S`, `t <
//! blockDim + e - S` on the tile position `t`), along each axis for a
//! 2-D box (a product again). The boxes cover the offsets read and, past
//! them, only offsets lying between two that one thread reads in the same
//! row or the same column: the center of the cross (between `x - 1` and
//! `x + 1`), the skipped `i - 1 … i + 1`. Such an element is safe to
//! load: its index lies between the indices of two elements that one
//! thread reads through the same pointer (in the same row: `Y * w + X`
//! grows with `X`; in the same column: `Y * w` is monotone in `Y`, whatever
//! the sign of `w`), and an allocation is contiguous, so it is inside the
//! allocation both are in; the array is not written by the kernel (or
//! declared `__restrict__` in the diff), so the value loaded is never
//! stale, and no thread reads it from the tile. Corners (`(y - 1, x - 1)`
//! for the cross) are not between two reads of one thread whatever `w`
//! is, and are never loaded. A position read in 2-D is loaded as
//! `in[jy * w + jx]` computed in `long long`: the number the original
//! computes without overflow, however it writes the index.

mod build;
mod build2d;
mod kernel;
mod key;
mod normalize;
mod window;
mod window2d;
mod written;

use std::collections::BTreeSet;

use copper::cuda::ast::{Function, NodeId, Param, Stmt, Type};
use copper::source::Span;

use crate::shared_budget::{self, Budget};
use crate::tiled_shared::Staging;
use crate::{overlap, Candidate, Context, Proposals, Skip, Transform};

/// The largest block the tile is sized for (CUDA's limit on threads per
/// block).
const MAX_BLOCK: u64 = copper::launch::MAX_BLOCK_THREADS;
/// The largest block side a 2-D tile is sized for: blocks up to 32 × 32.
const MAX_SIDE: u64 = 32;

/// Halo tiles for 1-D and 2-D sliding windows.
pub struct HaloTile;

/// What the windows of one kernel are found against.
struct Search<'a, 'f> {
    cx: &'a Context<'f>,
    /// The kernel as written, which the rewrite edits; the others see it
    /// in normal form ([`normalize`]).
    original: &'f Function,
    staging: Staging<'f>,
    k: kernel::Kernel<'f>,
    /// The shared memory the kernel takes before a tile (its own arrays
    /// and its launches' dynamic sizes), or why it is not known.
    used: Budget,
}

impl Search<'_, '_> {
    /// The array `p`'s element type.
    fn element(p: &Param) -> Type {
        Type {
            is_const: false,
            pointers: Vec::new(),
            ..p.ty.clone()
        }
    }

    /// Offers `function`, which holds a tile of `tiles` elements of
    /// `p`, when the tile fits in shared memory; `left_alone` says what is
    /// not done otherwise.
    fn offer(
        &self,
        out: &mut Proposals,
        (span, left_alone): (Span, &str),
        (p, served, halos): (&Param, &window::Served, &[u64]),
        tiles: u64,
        (function, description): (Function, String),
    ) {
        let bytes = u64::from(Self::element(p).base.size_bytes().unwrap_or(u32::MAX)) * tiles;
        let why = self
            .used
            .refusal(&format!("a tile of {tiles} elements"), bytes);
        let why = why.or_else(|| self.no_read_saved(served, halos));
        if let Some(why) = why {
            out.skipped.push(Skip {
                span,
                reason: format!("{left_alone}: {why}"),
            });
            return;
        }
        let c = Candidate::new(HaloTile.name(), function, description);
        let pairs: Vec<(String, String)> = self
            .staging
            .effects
            .array_writes
            .iter()
            .map(|wr| (p.name.clone(), wr.clone()))
            .collect();
        let why = (
            left_alone,
            "the kernel writes one of them while the tile holds the other",
        );
        overlap::offer(self.cx, c, &pairs, out, span, why);
    }

    /// Why a 2-D tile serving `served`, `halos` (along y and x) longer
    /// than the block, saves no read on the block the kernel is analyzed
    /// for: when a thread reads no more elements than the rounds of the
    /// tile's load a warp may run (`⌈(blockDim.y + Hy) / blockDim.y⌉ ×
    /// ⌈(blockDim.x + Hx) / blockDim.x⌉`, 4 on every block with a halo
    /// along both axes: a 5-point cross without its center). Each round
    /// is, as each read is, one access of the warp to the rows its
    /// threads cover, so the load touches about as many sectors per warp
    /// as the reads did, and adds a barrier and the tests of the load.
    /// `None` for a 1-D tile (a block at least as long as the halo loads
    /// it in 2 rounds, the second only at the block's end), when the
    /// block is not known, or when the tile does not serve it.
    fn no_read_saved(&self, served: &window::Served, halos: &[u64]) -> Option<String> {
        let [bx, by, bz] = self.cx.block?.to_array();
        let [hy, hx] = halos else {
            return None;
        };
        if bx > MAX_SIDE || by > MAX_SIDE || bz != 1 {
            return None;
        }
        let rounds = (bx + hx).div_ceil(bx) * (by + hy).div_ceil(by);
        let reads = reads_per_thread(served);
        (reads <= rounds).then(|| {
            format!(
                "each thread reads {reads} elements of it, and on a {bx}×{by} block a warp may run {rounds} rounds of the tile's load, each an access to the rows of the warp's threads as a read is: the tile would touch no fewer sectors than the reads, and adds a barrier and the load's tests"
            )
        })
    }

    /// The read-only arrays loop `l` reads.
    fn arrays_read(&self, l: &Stmt) -> Vec<&Param> {
        let read_here = crate::ast_util::Effects::of(&crate::tiled_shared::loop_body(l)).reads;
        self.staging
            .arrays
            .iter()
            .copied()
            .filter(|p| read_here.contains(&p.name))
            .collect()
    }

    /// 2-D windows of loop `l` over the rows or columns of a window: a
    /// candidate or a reason for each array, and the arrays and loops
    /// dealt with (so the 1-D search leaves them alone).
    fn windows_2d(&self, l: &Stmt, out: &mut Proposals, done: &mut BTreeSet<(NodeId, String)>) {
        let f = self.k.f;
        let Some((_, inner, _)) = window2d::inner_loop(l) else {
            return;
        };
        let line = self.cx.line(l.meta.span);
        let (ys, xs) = (
            window::global_indices(f, "y"),
            window::global_indices(f, "x"),
        );
        let names =
            |v: &[(usize, String)]| -> Vec<String> { v.iter().map(|(_, n)| n.clone()).collect() };
        let (y_names, x_names) = (names(&ys), names(&xs));
        for p in self.arrays_read(l) {
            if !window2d::looks_like_window(l, &p.name, &y_names, &x_names) {
                continue;
            }
            done.insert((l.meta.id, p.name.clone()));
            done.insert((inner.meta.id, p.name.clone()));
            let left_alone = format!(
                "`{}` is not loaded into a 2-D halo tile for the loops at line {line}",
                p.name
            );
            let pairs = ys.iter().flat_map(|y| xs.iter().map(move |x| (y, x)));
            let found = first_window(pairs, |(y, x)| {
                window2d::recognize(&self.k, l, &p.name, (y.0, &y.1), (x.0, &x.1))
            });
            let Some(w) = recognized_or_skipped(found, out, l.meta.span, &left_alone) else {
                continue;
            };
            let function = build2d::rewrite(self.original, &p.name, Self::element(p), &w);
            let [ty, tx] = build2d::tile_dims(&w);
            let description = format!(
                "loaded the elements of `{}` that a block's windows read in the loops at line {line} (`{}` for {} and {}) into a `__shared__` tile of (blockDim.y + {}) × (blockDim.x + {}) elements, each once, by the whole block and only where the original reads it; the loops read the tile. Blocks wider or taller than {MAX_SIDE} or 3-D run the original code",
                p.name,
                w.served.reads.first().map(|(r, _)| copper::cuda::print::expression(r)).unwrap_or_default(),
                w.served.along(0, &w.rows),
                w.served.along(1, &w.cols),
                w.rows.halo(),
                w.cols.halo(),
            );
            self.offer(
                out,
                (l.meta.span, &left_alone),
                (p, &w.served, &[w.rows.halo(), w.cols.halo()]),
                ty * tx,
                (function, description),
            );
        }
    }

    /// 1-D windows of loop `l`, but for the arrays in `done`.
    fn windows_1d(&self, l: &Stmt, out: &mut Proposals, done: &BTreeSet<(NodeId, String)>) {
        let f = self.k.f;
        let indices = window::global_indices(f, "x");
        let line = self.cx.line(l.meta.span);
        for p in window::written_windows(f, l, &indices, &self.staging.effects) {
            out.skipped.push(Skip {
                span: l.meta.span,
                reason: format!(
                    "`{p}` is not loaded into a halo tile for the loop at line {line}: the kernel writes it, so a tile could hold stale values"
                ),
            });
        }
        for p in self
            .arrays_read(l)
            .into_iter()
            .filter(|p| !done.contains(&(l.meta.id, p.name.clone())))
            .filter(|p| window::looks_like_window(l, &p.name, &indices))
        {
            let left_alone = format!(
                "`{}` is not loaded into a halo tile for the loop at line {line}",
                p.name
            );
            let found = first_window(&indices, |&(at, ref i)| {
                window::recognize(&self.k, l, &p.name, (at, i))
            });
            let Some(w) = recognized_or_skipped(found, out, l.meta.span, &left_alone) else {
                continue;
            };
            let function = build::rewrite(self.original, &p.name, Self::element(p), &w);
            let a = &w.axis;
            let description = format!(
                "loaded the elements of `{}` that a block's windows read in the loop at line {line} (`{}` for {}) into a `__shared__` tile of blockDim.x + {} elements, each once, by the whole block and only where the original reads it; the loop reads the tile. Blocks that are not 1-D or have more than {MAX_BLOCK} threads run the original code",
                p.name,
                w.served.reads.first().map(|(r, _)| copper::cuda::print::expression(r)).unwrap_or_default(),
                w.served.along(0, a),
                a.halo(),
            );
            self.offer(
                out,
                (l.meta.span, &left_alone),
                (p, &w.served, &[a.halo()]),
                build::tile_len(&w),
                (function, description),
            );
        }
    }
}

impl Search<'_, '_> {
    /// Windows written out (`in[i - 1] + in[i] + in[i + 1]`, `in[idx -
    /// w] + in[idx + 1]`): a 2-D window where the reads make one, else a
    /// 1-D window; a candidate or a reason for each array.
    fn windows_written(&self, out: &mut Proposals) {
        let f = self.k.f;
        let written = written::Written::new(&self.k);
        let (ys, xs) = (
            window::global_indices(f, "y"),
            window::global_indices(f, "x"),
        );
        let pairs: Vec<[Declared; 2]> = ys
            .iter()
            .flat_map(|y| {
                xs.iter()
                    .map(move |x| [(y.0, y.1.as_str()), (x.0, x.1.as_str())])
            })
            .collect();
        for p in f.params.iter().filter(|p| p.ty.pointers.len() == 1) {
            let a = p.name.as_str();
            let pairs_2d: Vec<_> = pairs
                .iter()
                .filter(|[y, x]| written.looks_like_window(a, &[y.1, x.1]))
                .collect();
            let xs_1d: Vec<_> = xs
                .iter()
                .filter(|x| written.looks_like_window(a, &[&x.1]))
                .collect();
            let Some(span) = first_read(f, a).filter(|_| !pairs_2d.is_empty() || !xs_1d.is_empty())
            else {
                continue;
            };
            let line = self.cx.line(span);
            let left_alone =
                format!("`{a}` is not loaded into a halo tile for its reads at line {line}");
            if self.staging.effects.array_writes.contains(a) {
                out.skipped.push(Skip {
                    span,
                    reason: format!(
                        "{left_alone}: the kernel writes it, so a tile could hold stale values"
                    ),
                });
                continue;
            }
            if !self.staging.arrays.iter().any(|q| q.name == a) {
                continue;
            }
            if !pairs_2d.is_empty() {
                let found = first_window(pairs_2d, |[y, x]| written.window_2d(a, *y, *x));
                let Some(w) = recognized_or_skipped(found, out, span, &left_alone) else {
                    continue;
                };
                let function = build2d::rewrite(self.original, a, Self::element(p), &w);
                let [ty, tx] = build2d::tile_dims(&w);
                let description = format!(
                    "loaded the elements of `{a}` that a block's threads read at line {line} ({}; {} along y and {} along x) into a `__shared__` tile of (blockDim.y + {}) × (blockDim.x + {}) elements, each once, by the whole block and only where the original reads it; the reads use the tile. Blocks wider or taller than {MAX_SIDE} or 3-D run the original code",
                    reads_in_words(&w.served),
                    w.served.along(0, &w.rows),
                    w.served.along(1, &w.cols),
                    w.rows.halo(),
                    w.cols.halo(),
                );
                self.offer(
                    out,
                    (span, &left_alone),
                    (p, &w.served, &[w.rows.halo(), w.cols.halo()]),
                    ty * tx,
                    (function, description),
                );
                continue;
            }
            let found = first_window(xs_1d, |x| written.window(a, (x.0, &x.1)));
            let Some(w) = recognized_or_skipped(found, out, span, &left_alone) else {
                continue;
            };
            let function = build::rewrite(self.original, a, Self::element(p), &w);
            let description = format!(
                "loaded the elements of `{a}` that a block's threads read at line {line} ({}; {}) into a `__shared__` tile of blockDim.x + {} elements, each once, by the whole block and only where the original reads it; the reads use the tile. Blocks that are not 1-D or have more than {MAX_BLOCK} threads run the original code",
                reads_in_words(&w.served),
                w.served.along(0, &w.axis),
                w.axis.halo(),
            );
            self.offer(
                out,
                (span, &left_alone),
                (p, &w.served, &[w.axis.halo()]),
                build::tile_len(&w),
                (function, description),
            );
        }
    }
}

/// The reads a tile serves, as written (`in[i - 1]`, `in[i + 1]`).
fn reads_in_words(served: &window::Served) -> String {
    let mut seen = Vec::new();
    for (r, _) in &served.reads {
        let r = format!("`{}`", copper::cuda::print::expression(r));
        if !seen.contains(&r) {
            seen.push(r);
        }
    }
    seen.join(", ")
}

/// How many elements of the array each thread reads: every offset of the
/// window loops' box, or the distinct offsets written out.
fn reads_per_thread(served: &window::Served) -> u64 {
    let counted = served
        .reads
        .iter()
        .any(|(_, o)| o.iter().any(|x| matches!(x, window::Offset::Counter(_))));
    if counted {
        return served
            .boxes
            .first()
            .map_or(0, |b| b.iter().map(|(s, e)| e.abs_diff(*s) + 1).product());
    }
    let mut seen: Vec<Vec<i64>> = Vec::new();
    for (_, o) in &served.reads {
        let at: Vec<i64> = o
            .iter()
            .filter_map(|x| match x {
                window::Offset::Const(c) => Some(*c),
                window::Offset::Counter(_) => None,
            })
            .collect();
        if !seen.contains(&at) {
            seen.push(at);
        }
    }
    seen.len() as u64
}

/// A top-level index declaration: its position and its name.
type Declared<'a> = (usize, &'a str);

/// Where the first read of `array` in `f` stands.
fn first_read(f: &Function, array: &str) -> Option<Span> {
    let mut found = None;
    for s in &f.body {
        crate::ast_util::visit_stmt_exprs(s, &mut |e| {
            if let copper::cuda::ast::ExprKind::Index(base, _) = &e.kind {
                if matches!(&base.kind, copper::cuda::ast::ExprKind::Ident(n) if n == array) {
                    found.get_or_insert(e.meta.span);
                }
            }
        });
    }
    found
}

/// The first of `candidates` (the index declarations a window may be
/// read through) that `recognize` takes, or the reason the first one was
/// refused.
fn first_window<C, W, E: std::fmt::Display>(
    candidates: impl IntoIterator<Item = C>,
    mut recognize: impl FnMut(C) -> Result<W, E>,
) -> Result<W, String> {
    let mut first_why = None;
    for c in candidates {
        match recognize(c) {
            Ok(w) => return Ok(w),
            Err(why) => {
                first_why.get_or_insert(why.to_string());
            }
        }
    }
    Err(first_why.unwrap_or_else(|| "copper lost track of the window".to_string()))
}

/// The window `found`, or `None` with its refusal (after `left_alone`)
/// recorded at `span`.
fn recognized_or_skipped<W>(
    found: Result<W, String>,
    out: &mut Proposals,
    span: Span,
    left_alone: &str,
) -> Option<W> {
    found
        .map_err(|why| {
            out.skipped.push(Skip {
                span,
                reason: format!("{left_alone}: {why}"),
            })
        })
        .ok()
}

impl Transform for HaloTile {
    fn name(&self) -> &'static str {
        "halo tile"
    }

    fn propose(&self, cx: &Context) -> Proposals {
        let normal = normalize::function(cx.function);
        let f = &normal;
        let staging = Staging::of(f);
        let k = kernel::Kernel::new(f, staging.fixed.clone());
        let search = Search {
            cx,
            original: cx.function,
            used: shared_budget::in_use(cx, "the tile"),
            staging,
            k,
        };
        let mut out = Proposals::default();
        let mut done = BTreeSet::new();
        for l in &search.staging.loops {
            search.windows_2d(l, &mut out, &mut done);
        }
        for l in &search.staging.loops {
            search.windows_1d(l, &mut out, &done);
        }
        search.windows_written(&mut out);
        out
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests2d;
#[cfg(test)]
mod tests_clamp2d;
#[cfg(test)]
mod tests_normal;
#[cfg(test)]
mod tests_written;
