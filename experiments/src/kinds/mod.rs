//! The experiment kinds of the `rfx` binary: the paper experiments that `[experiment] kind = "..."` names.
//!
//! Each kind implements [`rfx_harness::Kind`] (sweep parameters, its `[<kind>]` section) and returns a
//! [`rfx_harness::Runner`] that computes one cell; [`registry`] hands the list to the generic runner
//! (`rfx-harness`), which knows none of them by name.

use rfx_harness::kind::{check_int, Kinds, ParamSpec};

pub mod arccos_condition;
pub mod cntk;
pub mod double_descent;
pub mod kmeans_table;
pub mod krr_table;
pub mod ntk_common;
pub mod ntk_function;
pub mod ntk_mse;
pub mod ridge_classify;
pub mod selftest;
pub mod series_approx;
pub mod survey_benchmark;
pub mod tabular;
pub mod trf_common;
pub mod trf_memory;
pub mod trf_ridge;
pub mod trf_spectrum;
pub mod trf_svm;

/// Every kind of the `rfx` binary, with the run guard their cells need: OpenBLAS on one thread during the
/// cells (`rfx_linalg::SingleBlasThread`; its multi-threaded paths round differently with the
/// thread count, so cells would depend on `--threads` and `OPENBLAS_NUM_THREADS`).
pub fn registry() -> Kinds {
    Kinds::new(vec![
        &series_approx::SeriesApprox,
        &krr_table::KrrTable,
        &kmeans_table::KmeansTable,
        &arccos_condition::ArccosCondition,
        &ntk_mse::NtkMse,
        &ntk_function::NtkFunction,
        &cntk::CntkKind,
        &trf_ridge::TrfRidgeGamma,
        &trf_spectrum::TrfSpectrum,
        &trf_memory::TrfMemory,
        &trf_svm::TrfSvm,
        &survey_benchmark::SurveyBenchmark,
        &double_descent::DoubleDescent,
        &ridge_classify::RidgeClassify,
        &selftest::SelfTest,
    ])
    .with_run_guard(|| Box::new(rfx_linalg::SingleBlasThread::new()))
}

/// The sweep parameter `name` giving a number of random features, an integer from 1 to 100,000.
pub fn feature_count_param(name: &'static str) -> ParamSpec {
    ParamSpec {
        name,
        allowed: "number of features, integers from 1 to 100000",
        check: |v| check_int(v, 1, 100_000),
        required: true,
    }
}
