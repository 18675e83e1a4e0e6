//! The experiment kinds of the `rfx` binary: the paper experiments that `[experiment] kind = "..."` names.
//!
//! Each kind implements [`rfx_harness::Kind`] (sweep parameters, its `[<kind>]` section) and returns a
//! [`rfx_harness::Runner`] that computes one cell; [`registry`] hands the list to the generic runner
//! (`rfx-harness`), which knows none of them by name. The kinds are grouped by paper (`gegenbauer`, `ntk`,
//! `ternary`, `survey`; `cross` holds the benchmark across papers); the helpers several of them share (`tabular`, `trf_common`, `ntk_common`) and the
//! runner's `selftest` stay at this level.

use rfx_harness::kind::{check_int, Kinds, ParamSpec};

pub mod colours;
pub mod cross;
pub mod gegenbauer;
pub mod ntk;
pub mod survey;
pub mod ternary;

pub mod ntk_common;
pub mod selftest;
pub mod tabular;
pub mod trf_common;

/// Every kind of the `rfx` binary, with the run guard their cells need: OpenBLAS on one thread during the
/// cells (`rfx_linalg::SingleBlasThread`; its multi-threaded paths round differently with the
/// thread count, so cells would depend on `--threads` and `OPENBLAS_NUM_THREADS`).
pub fn registry() -> Kinds {
    Kinds::new(vec![
        &gegenbauer::series_approx::SeriesApprox,
        &gegenbauer::krr_table::KrrTable,
        &gegenbauer::kmeans_table::KmeansTable,
        &ntk::arccos_condition::ArccosCondition,
        &ntk::ntk_mse::NtkMse,
        &ntk::ntk_function::NtkFunction,
        &ntk::cntk::CntkKind,
        &ternary::trf_ridge::TrfRidgeGamma,
        &ternary::trf_spectrum::TrfSpectrum,
        &ternary::trf_memory::TrfMemory,
        &ternary::trf_svm::TrfSvm,
        &survey::survey_benchmark::SurveyBenchmark,
        &survey::double_descent::DoubleDescent,
        &ntk::ridge_classify::RidgeClassify,
        &ntk::active::ActiveLearning,
        &cross::cross_benchmark::CrossBenchmark,
        &selftest::SelfTest,
    ])
    .with_backends(&rfx_linalg::Backend::NAMES)
    .with_kernels_name(rfx_linalg::blas_core_name)
    .with_series_colours(colours::series_colour)
    .with_run_guard(|backend| {
        Box::new((
            rfx_linalg::SingleBlasThread::new(),
            rfx_linalg::BackendScope::new(
                rfx_linalg::Backend::from_name(backend).unwrap_or_default(),
            ),
        ))
    })
}

/// The tolerance of a metric of a cell whose `method` parameter names `method` (`name` or `name(k=v, …)`):
/// a relative tolerance widened to $4\epsilon$ times the method's rounding amplification
/// ([`rfx_registry::rounding_amplification`]: $1/\text{rcond}$ for Nyström) where that is larger — the bound
/// within which another machine kind's BLAS kernels may move the cell — and any other tolerance as it is.
pub fn method_tolerance(
    t: rfx_harness::kind::Tolerance,
    method: &str,
) -> rfx_harness::kind::Tolerance {
    use rfx_harness::kind::Tolerance;
    let name =
        rfx_registry::MethodChoice::parse(method).map_or_else(|_| method.to_string(), |c| c.name);
    match t {
        Tolerance::Relative(r) => Tolerance::Relative(
            r.max(4.0 * f64::EPSILON * rfx_registry::rounding_amplification(&name)),
        ),
        other => other,
    }
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
