//! Abstract interpretation: linear constraints, thread dependence, uniformity.

pub mod deps;
pub mod facts;
pub mod linear;
pub mod memory;
pub mod symbols;
