//! Gegenbauer polynomials and series (work in progress).
pub mod coefficients;
pub mod gegenbauer;
pub mod harmonics;
pub mod ntk;
pub mod quadrature;
pub mod series;
