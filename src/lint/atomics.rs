//! Atomics the block-size proof of [`super::block_size`] cannot treat as
//! ordinary writes: their effect, or the value they return, depends on the
//! order in which threads reach them, and that order changes with the
//! block shape (and from run to run on a GPU).
//!
//! - An atomic whose old value the kernel uses (`slot = atomicAdd(cnt,
//!   1)`): which thread gets which slot depends on the order.
//! - A floating-point `atomicAdd`/`atomicSub`: rounding makes the sum
//!   depend on the order of its terms.
//! - `atomicExch`, `atomicCAS`, `atomicInc` and `atomicDec`: the last
//!   writer wins, or the update is not commutative (the wrap of `Inc` and
//!   `Dec` at operands that differ between threads).
//!
//! Integer `atomicAdd`, `atomicSub`, `atomicMin`, `atomicMax`, `atomicAnd`,
//! `atomicOr` and `atomicXor` whose result is unused commute, so their
//! final value does not depend on the order. A global element that one
//! thread updates atomically while another reads or writes it plainly is a
//! race the simulator's race search does not track (it records plain
//! accesses only), so such an array is reported here too (for an array of
//! structs, when the plain access can reach the atomic's field).

use crate::ir::{visit_exprs, visit_stmts, Access, AtomicOp, ExprKind, Kernel, Stmt};
use crate::source::Span;

/// The first atomic whose outcome depends on the order of the threads
/// (see the module documentation): why, and where.
pub fn order_dependent(kernel: &Kernel) -> Option<(String, Span)> {
    // The components of each array accessed plainly.
    let mut plain = Vec::new();
    visit_exprs(&kernel.body, &mut |e| {
        if let ExprKind::Load(a) = &e.kind {
            plain.push((a.array, components(a)));
        }
    });
    visit_stmts(&kernel.body, &mut |s| {
        if let Stmt::Store { access, .. } = s {
            plain.push((access.array, components(access)));
        }
    });
    let mut found = None;
    visit_stmts(&kernel.body, &mut |s| {
        let Stmt::Atomic {
            op,
            access,
            result,
            span,
            ..
        } = s
        else {
            return;
        };
        if found.is_some() {
            return;
        }
        let array = &kernel.arrays[access.array];
        let name = format!("`{}` on `{}`", op.name(), array.name);
        let float = array.slot_type(access.slot).is_float();
        let why = if result.is_some() {
            format!("it uses the value {name} returns, which depends on the order in which threads reach it, and so on the block shape")
        } else if float && matches!(op, AtomicOp::Add | AtomicOp::Sub) {
            format!("{name} accumulates floating-point values, whose rounded sum depends on the order in which threads add them, and so on the block shape")
        } else if !commutes(*op) {
            format!("{name} leaves a value that depends on the order in which threads reach it, and so on the block shape")
        } else if array.is_global()
            && plain.iter().any(|(a, (lo, hi))| {
                let (alo, ahi) = components(access);
                *a == access.array && *lo <= ahi && alo <= *hi
            })
        {
            format!("{name} updates an array the kernel also accesses plainly, which races with the atomic updates of other threads (the race search does not check atomics)")
        } else {
            return;
        };
        found = Some((why, *span));
    });
    found
}

/// The components of an element `a` may reach: its slot, and with run-time
/// indices into array members every element of those members.
fn components(a: &Access) -> (usize, usize) {
    let spread: usize = a
        .member
        .iter()
        .flat_map(|m| &m.dims)
        .map(|d| (d.len.max(1) as usize - 1) * d.slots)
        .sum();
    (a.slot, a.slot + spread)
}

/// Whether integer updates by `op` commute (their final value does not
/// depend on the order), given that no thread reads the old value.
fn commutes(op: AtomicOp) -> bool {
    use AtomicOp::*;
    match op {
        Add | Sub | Min | Max | And | Or | Xor => true,
        Exch | Cas | Inc | Dec => false,
    }
}
