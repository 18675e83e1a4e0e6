//! The kinds of the random Gegenbauer features paper (Han, Zandieh & Avron, ICML 2022): kernel ridge
//! regression and kernel k-means tables (Tables 2–4) and the series approximations of dot-product kernels.

pub mod kmeans_table;
pub mod krr_table;
pub mod series_approx;
