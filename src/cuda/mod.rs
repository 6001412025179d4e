//! The CUDA front end: extraction, parsing, AST, printing, rewriting, diffs.

pub mod ast;
pub mod cond;
pub mod convert;
pub mod deduce;
pub mod diff;
pub mod edit;
pub mod excerpt;
pub mod extract;
pub mod host;
pub mod include;
pub mod kernel_scan;
pub mod launch;
pub mod lex;
pub mod limits;
pub mod macros;
pub mod parse;
pub mod print;
pub mod qualifier_macros;
pub mod relaunch;
pub mod rewrite;
pub mod template;
pub mod template_names;
pub mod timeline;
pub mod unit;
pub mod visit;
