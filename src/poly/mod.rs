//! Multivariate polynomials with rational coefficients: the form bounds take.

#[allow(clippy::module_inception)]
pub mod poly;
pub mod rational;

pub use poly::{Monomial, Poly};
pub use rational::Rational;
