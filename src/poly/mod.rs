//! Multivariate polynomials with rational coefficients: the form bounds take.

pub mod rational;

pub use rational::Rational;
