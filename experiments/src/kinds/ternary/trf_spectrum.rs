//! `trf_spectrum`: Theorem 1 of the ternary random features paper checked on spectra (Fig. 2): eigenvalue
//! histograms of the centred expected kernel $\mathbf K$ (Monte Carlo over the law of $W$) and of its
//! asymptotic equivalent $\tilde{\mathbf K}$, their distance and the alignment of their top eigenvectors.
//!
//! **Matrices.** Data from the two-class Gaussian mixture of Fig. 2 ($\boldsymbol\mu_a = 4\mathbf e_a$,
//! $\mathbf C_a = (1 + 4(a-1)/\sqrt p)\mathbf I_p$, classes of equal size, points $\mathbf x_i =
//! \boldsymbol\mu_a/\sqrt p + \mathbf z_i$), $\sigma$ = ReLU.
//! $\mathbf K = \mathbf P\thinspace\frac1m\sigma(W\mathbf X)^\top\sigma(W\mathbf X)\thinspace\mathbf P$ with $m$ rows of $W$ of the cell's
//! law (`gaussian`, `student-t` with 7 degrees of freedom scaled to unit variance, or sparse ternary
//! `ternary-<ε>`), $\mathbf P = \mathbf I - \mathbf 1\mathbf 1^\top/n$; $\tilde{\mathbf K}$ of eq. (8) with the ReLU
//! moments $d_0, d_1, d_2$ at the mixture's $\tau = \operatorname{tr}\mathbf C^\circ/p$ (independent of the law).
//!
//! **Cells.** `law`, `matrix` (`K` or `K_tilde`), `bin` (the centre $c$ of a histogram bin; the count is
//! $|\lbrace i : c - w/2 \le \lambda_i < c + w/2\rbrace|$ with $w$ = `bin_width`, eigenvalues below 0 — round-off of
//! a positive semi-definite matrix — counted as 0), `seed`. All cells of one `(law, seed)` share one
//! computation (see `trf_common`), drawn from `rng_stream(stream_seed, "law=..;seed=..")` (the data from
//! `rng_stream(stream_seed, "data;seed=..")`, the same for every law).
//!
//! **Metrics.** `count` (eigenvalues of the cell's matrix in the bin); `top_eigenvalue` and
//! `u1_class_mean` ($|$mean over class 1 of the top unit eigenvector$|$; the paper's ±0.0209) of the cell's
//! matrix; per `(law, seed)`: `rel_error` $= \Vert\mathbf K - \tilde{\mathbf K}\Vert/\Vert\mathbf K\Vert$ (spectral
//! norms), `alignment` $= |\langle\mathbf u_1, \tilde{\mathbf u}_1\rangle|$, and `mc_noise_rel`, the relative
//! spectral-norm Monte Carlo noise of $\mathbf K$ estimated from its two halves
//! ($\Vert\mathbf K_1 - \mathbf K_2\Vert/(2\Vert\mathbf K\Vert)$), the floor below which `rel_error` cannot go.

use crate::kinds::trf_common::{check_f64, fatal, group_key, timed, SharedCache};
use ndarray::Array1;
use rfx_core::{rng_stream, RfxRng};
use rfx_harness::config::{float_in, int_in, ConfigError, Invalid, Section, Value};
use rfx_harness::kind::{check_choice, Cell, CellError, CellOutput, Kind, ParamSpec, Runner};
use rfx_linalg::eigh;
use rfx_ternary::{
    asymptotic_equivalent, mc_kernel_with_noise, spectral_norm, Activation, GaussianMixture,
    WeightLaw,
};

/// The kind.
pub struct TrfSpectrum;

const LAWS: &str = "\"gaussian\", \"student-t\" (7 degrees of freedom, unit variance) or \"ternary-<eps>\" (sparse ternary W, eps in [0, 1))";
const MATRICES: [&str; 2] = ["K", "K_tilde"];

fn parse_law(s: &str) -> Option<WeightLaw> {
    match s {
        "gaussian" => Some(WeightLaw::Gaussian),
        "student-t" => Some(WeightLaw::StudentT(7.0)),
        _ => {
            let eps: f64 = s.strip_prefix("ternary-")?.parse().ok()?;
            (0.0..1.0)
                .contains(&eps)
                .then_some(WeightLaw::SparseTernary(eps))
        }
    }
}

/// `[trf_spectrum]`: the sample size n (even: two classes), dimension p, features m, histogram bin width
/// and the seed of the data stream (the fingerprint formats these, `settings()`).
#[derive(serde::Deserialize)]
#[serde(default)]
struct Settings {
    n: usize,
    p: usize,
    m: usize,
    bin_width: f64,
    stream_seed: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            n: 2048,
            p: 512,
            m: 102_400,
            bin_width: 0.2,
            stream_seed: 0,
        }
    }
}

impl rfx_harness::config::Settings for Settings {
    const KEYS: &'static [(&'static str, &'static str)] = &[
        ("n", "even integers from 4 to 8192"),
        ("p", "integers from 2 to 8192"),
        ("m", "integers from 2 to 10000000"),
        ("bin_width", "numbers from 0.000000001 to 1000000000"),
        ("stream_seed", "integers from 0 to 9223372036854775807"),
    ];
    fn check(&self) -> Result<(), Invalid> {
        int_in("n", self.n as i128, 4, 8192)?;
        int_in("p", self.p as i128, 2, 8192)?;
        int_in("m", self.m as i128, 2, 10_000_000)?;
        float_in("bin_width", self.bin_width, 1e-9, 1e9)?;
        int_in("stream_seed", self.stream_seed as i128, 0, i64::MAX as i128)?;
        if self.n % 2 != 0 {
            return Err(Invalid {
                key: "n",
                message: "n must be even (two classes of equal size)".into(),
            });
        }
        Ok(())
    }
}

/// Spectrum and top eigenvector of one matrix.
struct Spectrum {
    /// Eigenvalues, ascending.
    values: Array1<f64>,
    top: f64,
    u1_class_mean: f64,
}

/// The shared computation of one `(law, seed)`.
struct Pair {
    k: Spectrum,
    k_tilde: Spectrum,
    rel_error: f64,
    alignment: f64,
    mc_noise_rel: f64,
    time_k: f64,
}

struct SpectrumRunner {
    s: Settings,
    cache: SharedCache<Pair>,
}

impl Kind for TrfSpectrum {
    fn name(&self) -> &'static str {
        "trf_spectrum"
    }
    fn about(&self) -> &'static str {
        "Eigenvalue histograms of the expected RF kernel K (Monte Carlo) vs its equivalent K~ of Theorem 1 (TRF paper, Fig. 2)"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "law",
                allowed: LAWS,
                check: |v| match v.as_str().and_then(parse_law) {
                    Some(_) => Ok(()),
                    None => Err(format!("invalid value \"{v}\"; allowed: {LAWS}")),
                },
                required: true,
            },
            ParamSpec {
                name: "matrix",
                allowed:
                    "\"K\" (Monte Carlo expected kernel) or \"K_tilde\" (asymptotic equivalent)",
                check: |v| check_choice(v, &MATRICES),
                required: true,
            },
            ParamSpec {
                name: "bin",
                allowed: "histogram bin centres (numbers from -1e6 to 1e6)",
                check: |v| check_f64(v, -1e6, 1e6),
                required: true,
            },
        ]
    }
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        let s = <Settings as rfx_harness::config::Settings>::read(section)?;
        Ok(Box::new(SpectrumRunner {
            s,
            cache: SharedCache::default(),
        }))
    }
}

/// Number of `values` in `[c - w/2, c + w/2)`, negative values counted as 0. The test is on
/// $t = (v - c)/w \in [-\frac12 - \delta, \frac12 - \delta)$ with $\delta = 10^{-9}$, so that adjacent bins whose
/// centres come from decimal literals (0.1, 0.3, ...) neither overlap nor leave a round-off gap between them.
fn bin_count(values: &Array1<f64>, c: f64, w: f64) -> usize {
    const DELTA: f64 = 1e-9;
    values
        .iter()
        .map(|&v| (v.max(0.0) - c) / w)
        .filter(|&t| (-0.5 - DELTA..0.5 - DELTA).contains(&t))
        .count()
}

fn spectrum(
    a: &ndarray::Array2<f64>,
    class1: usize,
    cell: &Cell,
) -> Result<(Spectrum, Array1<f64>), CellError> {
    let eig = eigh(a.view()).map_err(fatal(cell, "eigh"))?;
    let n = eig.values.len();
    let u1 = eig.vectors.column(n - 1).to_owned();
    let mean1 = u1.iter().take(class1).sum::<f64>() / class1.max(1) as f64;
    Ok((
        Spectrum {
            top: eig.values[n - 1],
            values: eig.values,
            u1_class_mean: mean1.abs(),
        },
        u1,
    ))
}

impl SpectrumRunner {
    fn pair(&self, cell: &Cell) -> Result<Pair, CellError> {
        let law = parse_law(cell.str("law")?)
            .ok_or_else(|| CellError::Fatal(format!("cell {}: bad law", cell.key())))?;
        let (n, p) = (self.s.n, self.s.p);
        let seed = cell.get("seed").map(|v| v.to_string()).unwrap_or_default();
        let gmm = GaussianMixture::paper_fig2(p, 2).map_err(fatal(cell, "GMM"))?;
        let sizes = [n / 2, n / 2];
        let sample = gmm
            .sample(
                &sizes,
                &mut rng_stream(self.s.stream_seed, &format!("data;seed={seed}")),
            )
            .map_err(fatal(cell, "GMM sample"))?;
        let tau = gmm.tau(&sizes).map_err(fatal(cell, "tau"))?;
        let moments = Activation::Relu
            .moments(tau)
            .map_err(fatal(cell, "moments"))?;
        let k_tilde =
            asymptotic_equivalent(&gmm, &sample, &moments).map_err(fatal(cell, "K_tilde"))?;
        let gkey = group_key(cell, &["matrix", "bin"]);
        let mc_seed = rfx_core::stream_seed(self.s.stream_seed, &gkey);
        let (r, time_k) = timed(|| {
            mc_kernel_with_noise(sample.x.view(), &Activation::Relu, law, self.s.m, mc_seed)
        });
        let (k, noise) = r.map_err(fatal(cell, "Monte Carlo K"))?;
        let norm_k = spectral_norm(k.view());
        let rel_error = spectral_norm((&k - &k_tilde).view()) / norm_k;
        let (sk, u1) = spectrum(&k, n / 2, cell)?;
        let (st, v1) = spectrum(&k_tilde, n / 2, cell)?;
        Ok(Pair {
            k: sk,
            k_tilde: st,
            rel_error,
            alignment: u1.dot(&v1).abs(),
            mc_noise_rel: noise / norm_k,
            time_k,
        })
    }
}

impl Runner for SpectrumRunner {
    fn metrics(&self) -> Vec<String> {
        [
            "count",
            "top_eigenvalue",
            "u1_class_mean",
            "rel_error",
            "alignment",
            "mc_noise_rel",
        ]
        .into_iter()
        .map(String::from)
        .collect()
    }
    fn timings(&self) -> Vec<String> {
        vec!["time_mc_kernel_s".into()]
    }
    fn settings(&self) -> String {
        let s = &self.s;
        format!(
            "n={};p={};m={};bin_width={};stream_seed={}",
            s.n, s.p, s.m, s.bin_width, s.stream_seed
        )
    }
    fn shared_group(&self, cell: &Cell) -> Option<String> {
        Some(group_key(cell, &["matrix", "bin"]))
    }
    fn run_cell(&self, cell: &Cell, _rng: &mut RfxRng) -> Result<CellOutput, CellError> {
        let bin = cell
            .get("bin")
            .and_then(Value::as_f64)
            .ok_or_else(|| CellError::Fatal(format!("cell {} has no `bin`", cell.key())))?;
        let key = group_key(cell, &["matrix", "bin"]);
        let pair = self.cache.get(&key, || {
            self.pair(cell).map_err(|e| match e {
                CellError::Fatal(s) | CellError::Skipped(s) => s,
            })
        })?;
        let sp = match cell.str("matrix")? {
            "K" => &pair.k,
            _ => &pair.k_tilde,
        };
        Ok(CellOutput {
            items: Vec::new(),
            metrics: vec![
                bin_count(&sp.values, bin, self.s.bin_width) as f64,
                sp.top,
                sp.u1_class_mean,
                pair.rel_error,
                pair.alignment,
                pair.mc_noise_rel,
            ],
            timings: vec![pair.time_k],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_laws() {
        assert_eq!(parse_law("gaussian"), Some(WeightLaw::Gaussian));
        assert_eq!(parse_law("student-t"), Some(WeightLaw::StudentT(7.0)));
        assert_eq!(
            parse_law("ternary-0.5"),
            Some(WeightLaw::SparseTernary(0.5))
        );
        assert_eq!(parse_law("ternary-1"), None);
        assert_eq!(parse_law("cauchy"), None);
    }

    #[test]
    fn bins_partition_the_spectrum() {
        // Adjacent bins of width w centred at w/2, 3w/2, ... count every value once; negatives go to 0.
        let v = Array1::from(vec![-1e-14, 0.0, 0.05, 0.1, 0.19, 0.2, 0.45, 0.99]);
        let w = 0.2;
        let total: usize = (0..5)
            .map(|i| bin_count(&v, w / 2.0 + i as f64 * w, w))
            .sum();
        assert_eq!(total, v.len());
        // centres written as decimals, as in a TOML list
        let total: usize = [0.1, 0.3, 0.5, 0.7, 0.9]
            .iter()
            .map(|&c| bin_count(&v, c, w))
            .sum();
        assert_eq!(total, v.len());
        assert_eq!(bin_count(&v, 0.1, w), 5);
        assert_eq!(bin_count(&v, 0.3, w), 1);
    }
}
