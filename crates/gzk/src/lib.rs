//! Gegenbauer polynomials and series (placeholder, see issue 2).
