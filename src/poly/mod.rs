//! Multivariate polynomials with rational coefficients: the form bounds take.

pub mod compare;
#[allow(clippy::module_inception)]
pub mod poly;
pub mod rational;

pub use compare::{compare, compare_at, Comparison};
pub use poly::{Monomial, Poly};
pub use rational::Rational;
