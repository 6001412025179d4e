//! What the transforms need to know about AST fragments: structural
//! equality modulo commutative operators, complexity, the names a fragment
//! reads, writes and declares, and builders for new nodes.
//!
//! One module per job: [`equiv`] (structural equality), [`effects`] (what
//! a fragment reads, writes and may do), [`shape`] (queries on loops,
//! exits, constants and indices), [`build`] (new nodes and fresh names),
//! [`rewrite`] (replacing and rewriting in place). Everything is
//! re-exported here.

mod build;
mod constants;
mod effects;
mod equiv;
mod rewrite;
mod shape;

pub use build::{
    assign, bin, block, decl, expr, fresh, ident, if_else, index, int, linear_tid, long_long, meta,
    shared_decl, stmt, sync,
};
pub use constants::FileConstants;
pub use copper::cuda::visit::{
    children, children_mut, visit_expr, visit_stmt_exprs, visit_stmt_roots, visit_stmt_roots_mut,
    visit_stmts, visit_stmts_mut,
};
pub use effects::{assigned_names, is_pure, reads_memory, Effects};
pub use equiv::{equiv_expr, equiv_stmt};
pub use rewrite::{replace_expr, rewrite_bottom_up, swap_index_xy, swap_thread_xy};
pub use shape::{
    array_uses, branch_stmts, complexity, const_value, counted_for, declarations, early_exit,
    guarded_jump, index_field, is_sync, is_type_param, loop_first_test, names_in, names_in_stmts,
    reads_thread_xy, returns, root_name, template_value, thread_field, unconditional_in,
    value_with, Jump,
};

#[cfg(test)]
mod tests;
