//! One function of a file as parsing left it: where it is and its AST or
//! the diagnostic that stopped it (what parsing and instantiating share).

use super::ast::Function;
use super::extract::FunctionItem;
use crate::diag::Diagnostic;

/// One function of the file and how parsing it went.
#[derive(Clone, Debug)]
pub struct ParsedFunction {
    /// Where it is in the file.
    pub item: FunctionItem,
    /// The AST, or the diagnostic that stopped it.
    pub result: Result<Function, Diagnostic>,
}
