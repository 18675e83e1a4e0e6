//! The colour of each kind's series values in the report's figures (the harness draws what it is told:
//! [`rfx_harness::Kinds::with_series_colours`]; it names no method).
//!
//! A registry method keeps its registry colour ([`rfx_registry::MethodSpec::colour`], by family) in every
//! figure. The kinds' own labels — a registry method with other parameters (`ntk-rf(sampler=gs)`), an exact
//! kernel (`exact`), a kind's short name (`ts`, `rm`, `lp-rff-8`, `trf-0.5`) — take their colour here, per
//! kind, so that one label standing for two different maps in two kinds gets two colours: `trf-ε` is the
//! ternary map matched to $[\cos, \sin]$ (the Gaussian kernel) in `trf_memory` and `trf_ridge_gamma`, and in
//! `trf_svm` the one matched to ReLU, where the Gaussian-matched map is `trf-gauss-ε` and takes the colours of
//! the other kinds' `trf-ε`. Values that are neither take a stable colour from their hash.

/// The colour (an index into `rfx_harness::plot::PALETTE`) of series value `series` of kind `kind`.
pub fn series_colour(kind: &str, series: &str) -> Option<usize> {
    kind_label(kind, series).or_else(|| rfx_registry::method(series).ok().map(|m| m.colour))
}

/// The ternary map matched to $[\cos, \sin]$ at sparsity ε: one colour per ε of the papers' sweeps.
fn cos_sin_ternary(eps: &str) -> Option<usize> {
    Some(match eps {
        "0.1" => 2,
        "0.3" => 13,
        "0.5" => 3,
        "0.7" => 6,
        "0.9" => 4,
        _ => return None,
    })
}

/// The ternary map matched to ReLU at sparsity ε (`trf_svm`'s `trf-ε`): strong colours apart from the
/// cos-sin map's (violet, brown).
fn relu_ternary(eps: &str) -> Option<usize> {
    Some(match eps {
        "0.5" => 21,
        "0.9" => 5,
        _ => return None,
    })
}

fn kind_label(kind: &str, label: &str) -> Option<usize> {
    if kind == "trf_svm" {
        if let Some(eps) = label.strip_prefix("trf-gauss-") {
            return cos_sin_ternary(eps);
        }
        if let Some(eps) = label.strip_prefix("trf-") {
            return relu_ternary(eps);
        }
    } else if let Some(eps) = label.strip_prefix("trf-") {
        return cos_sin_ternary(eps);
    }
    Some(match label {
        // exact kernels: black, the Gaussian grey, with a bias column light brown
        "exact" => 10,
        "exact(kernel=gaussian)" => 7,
        "exact(bias=1)" => 16,
        // a registry method with other parameters: the light shade of its family's colour
        "ntk-rf(sampler=gs)" | "arccos-gs" => 14,
        "ntk-rf(sketch=tensorsrht)" | "ntk-rf-srht" => 9,
        "ntk-rf(bias=1)" => 17,
        "rff-phase" => 11,
        "nystrom-uniform" => 15,
        // short names: the survey's TensorSketch and Random Maclaurin, the ternary paper's ReLU features
        "ts" => 13,
        "rm" => 7,
        "relu" => 0,
        // LP-RFF by its bits
        "lp-rff-8" => 19,
        "lp-rff-1" => 5,
        "lp-rff-2" => 20,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::series_colour;

    #[test]
    fn registry_methods_keep_their_colour_and_labels_name_one_map_per_colour() {
        assert_eq!(series_colour("krr_table", "rff"), Some(0));
        assert_eq!(series_colour("cross_benchmark", "nystrom"), Some(18));
        assert_eq!(series_colour("survey_benchmark", "ts"), Some(13));
        // trf-0.5 is the cos-sin map in trf_memory and trf_ridge_gamma, the ReLU one in trf_svm
        let cos_sin = series_colour("trf_memory", "trf-0.5");
        assert_eq!(cos_sin, series_colour("trf_ridge_gamma", "trf-0.5"));
        assert_eq!(cos_sin, series_colour("trf_svm", "trf-gauss-0.5"));
        assert_ne!(cos_sin, series_colour("trf_svm", "trf-0.5"));
        assert!(series_colour("trf_svm", "trf-0.5").is_some());
        // anything else: no colour of its own (the plot hashes it)
        assert_eq!(series_colour("selftest", "a"), None);
    }
}
