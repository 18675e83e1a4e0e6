//! The kinds of the random-features survey (Liu et al., TPAMI 2021): the benchmark of its samplers and the
//! double descent of random-features ridge regression.

pub mod double_descent;
pub mod survey_benchmark;
