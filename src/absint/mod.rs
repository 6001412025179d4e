//! Abstract interpretation: linear constraints, thread dependence, uniformity.

pub mod congruence;
pub mod defs;
pub mod deps;
pub mod divmod;
pub mod facts;
pub mod linear;
pub mod live;
pub mod memory;
pub mod symbols;
pub mod trips;
