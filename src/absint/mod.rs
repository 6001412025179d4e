//! Abstract interpretation: linear constraints, thread dependence, uniformity.

pub mod deps;
pub mod memory;
