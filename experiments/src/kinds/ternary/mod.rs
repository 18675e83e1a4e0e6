//! The kinds of the ternary random features paper (Tiomoko Ali, Liao & Couillet, ICLR 2022): ridge against
//! γ, spectra, accuracy against memory, SVM.

pub mod trf_memory;
pub mod trf_ridge;
pub mod trf_spectrum;
pub mod trf_svm;
