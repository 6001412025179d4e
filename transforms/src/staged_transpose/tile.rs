//! The staged transposition's shared tile: its side written as the kernel
//! writes the block's side (a macro such as `TILE_DIM`, `-D BLOCK=16`, or
//! a template's value parameter `BS`, where one multiplies a `blockIdx`
//! field and equals the block's side; the number otherwise), and its
//! padding.
//!
//! A macro cannot be written as a name in the candidate's AST: the
//! candidate is printed, re-parsed and compared with itself, and parsing
//! expands macros, so `Ident("TILE")` comes back as the number 32. The
//! side is therefore the kernel's own expansion of the macro (a number
//! whose [`Meta::macro_text`] is the invocation), which prints as `TILE`
//! and parses back equal.
//!
//! Padding: a tile column's elements must fall in different banks. A bank
//! is a 4-byte word, so a row padded by one 4-byte word (one `float`, two
//! `__half`s, four `char`s) shifts each row by one bank; an 8-byte
//! element (`double`) is served in half warps (two banks per lane), and
//! one element of padding shifts each row by two banks, which keeps the 16
//! lanes of a half warp in distinct bank pairs.

use copper::cuda::ast::{BaseType, BinOp, Expr, ExprKind, Function, Meta, Stmt, Type};
use copper::cuda::print;

use crate::ast_util::{self, bin, int};

/// A padded `S×(S + pad)` shared tile.
pub(super) struct Tile {
    /// The tile's name (`tile`).
    pub name: String,
    /// The side `S` as the tile is declared with (`TILE`, `BS` or `16`).
    pub side: Expr,
    /// Elements of padding per row.
    pub pad: u64,
    /// The element type.
    pub elem: BaseType,
}

impl Tile {
    /// The tile of kernel `f` for a block of side `side`, of elements of
    /// type `elem` taking `bytes` bytes each.
    pub fn new(f: &Function, name: String, side: u64, elem: BaseType, bytes: u32) -> Tile {
        Tile {
            name,
            side: side_expr(f, side),
            pad: pad(bytes),
            elem,
        }
    }

    /// The elements of one row, `S + pad`.
    fn row(&self) -> Expr {
        bin(BinOp::Add, self.side.clone(), int(self.pad))
    }

    /// `__shared__ T tile[S][S + pad];`
    pub fn decl(&self) -> Stmt {
        ast_util::shared_decl(
            Type::scalar(self.elem.clone()),
            &self.name,
            vec![self.side.clone(), self.row()],
        )
    }

    /// `tile[S][S + pad]`, for descriptions.
    pub fn text(&self) -> String {
        format!(
            "{}[{}][{}]",
            self.name,
            print::expression(&self.side),
            print::expression(&self.row())
        )
    }
}

/// Elements of padding that shift a row by one 4-byte bank word (one
/// element for elements of 4 bytes or more).
fn pad(bytes: u32) -> u64 {
    u64::from((4 / bytes.max(1)).max(1))
}

/// The kernel's expression for the block's side: the first macro or
/// template value parameter that multiplies a `blockIdx` field
/// (`blockIdx.x * TILE`) and equals `side`, as a new node that prints as
/// written; the number `side` when there is none.
pub(crate) fn side_expr(f: &Function, side: u64) -> Expr {
    let mut found: Option<&Expr> = None;
    for s in &f.body {
        ast_util::visit_stmt_exprs(s, &mut |e| {
            let ExprKind::Binary(BinOp::Mul, a, b) = &e.kind else {
                return;
            };
            for (index, m) in [(a, b), (b, a)] {
                let scales_block = ast_util::index_field(index, &["blockIdx"]).is_some();
                if found.is_none() && scales_block && names_side(f, m, side) {
                    found = Some(m);
                }
            }
        });
    }
    match found {
        Some(m) => Expr {
            meta: Meta {
                macro_text: m.meta.macro_text.clone(),
                ..ast_util::meta()
            },
            kind: m.kind.clone(),
        },
        None => int(side),
    }
}

/// Whether `m` is a macro whose value is `side` (a number the parser
/// remembers as the invocation of an object-like macro) or a template
/// value parameter whose argument is `side`.
fn names_side(f: &Function, m: &Expr, side: u64) -> bool {
    match &m.kind {
        ExprKind::Int { value, .. } => {
            *value == side
                && m.meta.macro_text.as_deref().is_some_and(|t| {
                    t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                        && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                })
        }
        ExprKind::Ident(n) => ast_util::template_value(f, n) == Some(side),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_padded_by_one_bank_word() {
        assert_eq!(pad(1), 4);
        assert_eq!(pad(2), 2);
        assert_eq!(pad(4), 1);
        assert_eq!(pad(8), 1);
    }
}
