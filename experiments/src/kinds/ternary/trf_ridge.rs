//! `trf_ridge_gamma`: test MSE and running time of random-features ridge regression against the
//! regulariser γ, RFF vs TRF at several sparsities (ternary random features paper, Figs. 3, 5–9).
//!
//! **Estimator** (Louart–Liao–Couillet convention, research notes §2.8): unnormalised features
//! $\Sigma \in \mathbb R^{m^\prime\times n}$ ($[\cos,\sin](W\mathbf x)$, $m^\prime = 2m$, for RFF with $W\sim\mathcal N(0, I)$;
//! $\sigma^{ter}(W^{ter}\mathbf x) \in\lbrace-1,0,1\rbrace$, $m^\prime = m$, for TRF), labels $\pm1$ (first class $-1$),
//! $\boldsymbol\alpha = (\Sigma^\top\Sigma/n + \gamma I_n)^{-1}\mathbf y$, $\hat{\mathbf y}\_{test} =
//! \Sigma_{test}^\top\Sigma\boldsymbol\alpha / n$. With $A = \Sigma^\top\Sigma = V\Lambda V^\top$ (one
//! eigendecomposition per group) every γ costs $O(n\thinspace n_{test})$: $\hat{\mathbf y} = (BV)\thinspace(\Lambda/n + \gamma)^{-1}V^\top\mathbf y / n$,
//! $B = \Sigma_{test}^\top\Sigma$. TRF computes $A$ and $B$ by popcounts on bit-packed codes.
//!
//! **Cells.** `setting` = `<data>-m<m>` (`mnist-m512`: MNIST 7 vs 9; `gmm-m4096`: the Fig. 2 Gaussian
//! mixture), `method` = `rff` or `trf-<ε>`, `gamma`. Cells that differ only in γ share one computation
//! (see `trf_common`), drawn from `rng_stream(stream_seed, <cell key without gamma>)`.
//!
//! **Timing columns** (seconds, measured inside the shared computation, so the parallel runner does not
//! blur them more than the machine's load does): features (train + test), Gram ($A$ and $B$), eigendecomposition,
//! and the γ solve; `time_total_s` is their sum, the paper's "running time of the whole ridge solver".

use crate::kinds::trf_common::{
    cell_f64, center_columns, check_f64, fatal, group_key, idx_data, scale_to_tau, timed, DataSlot,
    SharedCache,
};
use ndarray::{Array1, Array2, Axis};
use rfx_core::{rng_stream, Fit, FitData, RfxRng};
use rfx_harness::config::{float_in, int_in, ConfigError, Invalid, Section, Value};
use rfx_harness::kind::{Cell, CellError, CellOutput, Kind, ParamSpec, Runner};
use rfx_linalg::eigh;
use rfx_registry::{Params, RawValue};
use rfx_ternary::{estimate_tau, Activation, GaussianMixture};

/// The kind.
pub struct TrfRidgeGamma;

const SETTINGS: &str =
    "\"mnist-m<m>\" (MNIST 7 vs 9) or \"gmm-m<m>\" (Fig. 2 Gaussian mixture), m from 1 to 200000";
const METHODS: &str =
    "\"rff\" or \"trf-<eps>\" with sparsity eps in [0, 0.99] (the registry's ternary), e.g. trf-0.5";

/// Data set of a setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Data {
    Mnist,
    Gmm,
}

fn parse_setting(s: &str) -> Option<(Data, usize)> {
    let (d, m) = s.split_once("-m")?;
    let data = match d {
        "mnist" => Data::Mnist,
        "gmm" => Data::Gmm,
        _ => return None,
    };
    let m: usize = m.parse().ok()?;
    (1..=200_000).contains(&m).then_some((data, m))
}

/// `None` = RFF, `Some(eps)` = TRF.
fn parse_method(s: &str) -> Option<Option<f64>> {
    if s == "rff" {
        return Some(None);
    }
    let eps: f64 = s.strip_prefix("trf-")?.parse().ok()?;
    (0.0..1.0).contains(&eps).then_some(Some(eps))
}

/// The registry's `ternary(activation=cos-sin, sparsity=eps)`: its checked parameters.
fn trf_params(eps: f64) -> Result<Params, String> {
    Ok(rfx_registry::method("ternary")?.params_from(&[
        ("activation", RawValue::from("cos-sin")),
        ("sparsity", RawValue::from(eps)),
    ])?)
}

/// The sweep check of `method`: a known word whose registry parameters are in range.
fn check_method(v: &Value) -> Result<(), String> {
    let bad = || format!("invalid value \"{v}\"; allowed: {METHODS}");
    match v.as_str().and_then(parse_method).ok_or_else(bad)? {
        None => Ok(()),
        Some(eps) => trf_params(eps)
            .map(|_| ())
            .map_err(|e| format!("{}: {e}", bad())),
    }
}

fn check_parse<T>(v: &Value, parse: fn(&str) -> Option<T>, allowed: &str) -> Result<(), String> {
    match v.as_str().and_then(parse) {
        Some(_) => Ok(()),
        None => Err(format!("invalid value \"{v}\"; allowed: {allowed}")),
    }
}

/// `[trf_ridge_gamma]`: training and test sizes (even: two classes), the Gaussian-mixture dimension, the
/// TRF threshold factor τ, the feature block size and the seed of the data stream (the fingerprint
/// formats these, `settings()`).
#[derive(serde::Deserialize)]
#[serde(default)]
struct Settings {
    n: usize,
    n_test: usize,
    p_gmm: usize,
    tau: f64,
    block: usize,
    stream_seed: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            n: 1024,
            n_test: 512,
            p_gmm: 512,
            tau: 0.5,
            block: 4096,
            stream_seed: 0,
        }
    }
}

impl rfx_harness::config::Settings for Settings {
    const KEYS: &'static [(&'static str, &'static str)] = &[
        ("n", "even integers from 4 to 5000"),
        ("n_test", "even integers from 2 to 2000"),
        ("p_gmm", "integers from 2 to 4096"),
        ("tau", "numbers from 0.001 to 100"),
        ("block", "integers from 64 to 65536"),
        ("stream_seed", "integers from 0 to 9223372036854775807"),
    ];
    fn check(&self) -> Result<(), Invalid> {
        int_in("n", self.n as i128, 4, 5000)?;
        int_in("n_test", self.n_test as i128, 2, 2000)?;
        int_in("p_gmm", self.p_gmm as i128, 2, 4096)?;
        float_in("tau", self.tau, 1e-3, 100.0)?;
        int_in("block", self.block as i128, 64, 65536)?;
        int_in("stream_seed", self.stream_seed as i128, 0, i64::MAX as i128)?;
        if self.n % 2 != 0 || self.n_test % 2 != 0 {
            return Err(Invalid {
                key: "n",
                message: "n and n_test must be even (two classes of equal size)".into(),
            });
        }
        Ok(())
    }
}

/// The part of a cell shared by all its γ values.
struct Path {
    /// Eigenvalues of $A$.
    lambdas: Array1<f64>,
    /// $V^\top\mathbf y$.
    vty: Array1<f64>,
    /// $BV$ ($n_{test}\times n$).
    bv: Array2<f64>,
    y_test: Array1<f64>,
    /// $d_0$ of the method's activation at the data's $\hat\tau$ (Corollary 1's λ is the TRF–RFF difference).
    d0: f64,
    time_features: f64,
    time_gram: f64,
    time_eig: f64,
}

struct RidgeRunner {
    s: Settings,
    mnist: DataSlot,
    cache: SharedCache<Path>,
}

impl Kind for TrfRidgeGamma {
    fn name(&self) -> &'static str {
        "trf_ridge_gamma"
    }
    fn about(&self) -> &'static str {
        "RF ridge regression test MSE and time vs gamma, RFF vs ternary RF (TRF paper, Figs. 3, 5-9)"
    }
    fn sweep_params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "setting",
                allowed: SETTINGS,
                check: |v| check_parse(v, parse_setting, SETTINGS),
                required: true,
            },
            ParamSpec {
                name: "method",
                allowed: METHODS,
                check: check_method,
                required: true,
            },
            ParamSpec {
                name: "gamma",
                allowed: "numbers from 1e-8 to 1e8",
                check: |v| check_f64(v, 1e-8, 1e8),
                required: true,
            },
        ]
    }
    fn configure(&self, section: Option<&Section<'_, '_>>) -> Result<Box<dyn Runner>, ConfigError> {
        let s = <Settings as rfx_harness::config::Settings>::read(section)?;
        Ok(Box::new(RidgeRunner {
            s,
            mnist: DataSlot::new(),
            cache: SharedCache::default(),
        }))
    }
}

/// `(x_train, y_train, x_test, y_test)`, labels ±1 (first class −1), each set scaled to $\hat\tau$ = `tau`.
type Split = (Array2<f64>, Array1<f64>, Array2<f64>, Array1<f64>);

impl RidgeRunner {
    fn data(&self, data: Data, rng: &mut RfxRng, cell: &Cell) -> Result<Split, CellError> {
        let (n, nt) = (self.s.n, self.s.n_test);
        let labels = |k: usize, total: usize| {
            Array1::from_shape_fn(total, |i| if i < k { -1.0 } else { 1.0 })
        };
        let (mut xtr, mut xte) = match data {
            Data::Mnist => {
                let tt = idx_data(&self.mnist, "mnist")?;
                // The notebook's protocol: the first n/2 images of each digit of each split.
                let pick =
                    |labels: &[usize], digit: usize, k: usize| -> Result<Vec<usize>, CellError> {
                        let v: Vec<usize> = (0..labels.len())
                            .filter(|&i| labels[i] == digit)
                            .take(k)
                            .collect();
                        if v.len() < k {
                            return Err(CellError::Fatal(format!(
                                "MNIST has fewer than {k} images of digit {digit}"
                            )));
                        }
                        Ok(v)
                    };
                let mut itr = pick(&tt.train.labels, 7, n / 2)?;
                itr.extend(pick(&tt.train.labels, 9, n / 2)?);
                let mut ite = pick(&tt.test.labels, 7, nt / 2)?;
                ite.extend(pick(&tt.test.labels, 9, nt / 2)?);
                let mut a = tt.train.x.select(Axis(0), &itr);
                let mut b = tt.test.x.select(Axis(0), &ite);
                center_columns(&mut a);
                center_columns(&mut b);
                (a, b)
            }
            Data::Gmm => {
                let gmm =
                    GaussianMixture::paper_fig2(self.s.p_gmm, 2).map_err(fatal(cell, "GMM"))?;
                let a = gmm
                    .sample(&[n / 2, n / 2], rng)
                    .map_err(fatal(cell, "GMM sample"))?;
                let b = gmm
                    .sample(&[nt / 2, nt / 2], rng)
                    .map_err(fatal(cell, "GMM sample"))?;
                (a.x, b.x)
            }
        };
        scale_to_tau(&mut xtr, self.s.tau);
        scale_to_tau(&mut xte, self.s.tau);
        Ok((xtr, labels(n / 2, n), xte, labels(nt / 2, nt)))
    }

    fn path(&self, cell: &Cell) -> Result<Path, CellError> {
        let (data, m) = parse_setting(cell.str("setting")?)
            .ok_or_else(|| CellError::Fatal(format!("cell {}: bad setting", cell.key())))?;
        let method = parse_method(cell.str("method")?)
            .ok_or_else(|| CellError::Fatal(format!("cell {}: bad method", cell.key())))?;
        let gkey = group_key(cell, &["gamma"]);
        // Data depend on the setting's data set and the seed only (so every method sees the same points).
        let seed = cell.get("seed").map(|v| v.to_string()).unwrap_or_default();
        let mut drng = rng_stream(self.s.stream_seed, &format!("data;{data:?};seed={seed}"));
        let (xtr, ytr, xte, yte) = self.data(data, &mut drng, cell)?;
        let mut rng = rng_stream(self.s.stream_seed, &gkey);
        let tau_hat = estimate_tau(xtr.view()).map_err(fatal(cell, "tau"))?;
        let target = Activation::CosSin
            .moments(tau_hat)
            .map_err(fatal(cell, "moments"))?;
        let (n, nt) = (xtr.nrows(), xte.nrows());
        let (a, b, d0, time_features, time_gram) = match method {
            None => {
                // [cos, sin](W x), W ~ N(0, I): sampling's paired RFF is s^{-1/2}[cos; sin] with s
                // frequencies, so Σ = sqrt(s) z; features in blocks of `block` frequencies.
                // the registry's `rff(sigma=1)` (paired [cos, sin], the default)
                let rff =
                    rfx_registry::method("rff").map_err(|e| CellError::Fatal(e.to_string()))?;
                let params = rff
                    .params_from(&[("sigma", RawValue::from(1.0))])
                    .map_err(|e| CellError::Fatal(e.to_string()))?;
                let (mut a, mut b) = (Array2::<f64>::zeros((n, n)), Array2::<f64>::zeros((nt, n)));
                let (mut tf, mut tg) = (0.0, 0.0);
                let mut done = 0;
                while done < m {
                    let s = self.s.block.min(m - done);
                    let (r, t) = timed(|| -> Result<_, CellError> {
                        let f = rff
                            .fit(2 * s, &params, FitData::Dim(xtr.ncols()), &mut rng)
                            .map_err(fatal(cell, "RFF"))?;
                        let scale = (s as f64).sqrt();
                        let ztr = f.transform(xtr.view()).map_err(fatal(cell, "RFF"))? * scale;
                        let zte = f.transform(xte.view()).map_err(fatal(cell, "RFF"))? * scale;
                        Ok((ztr, zte))
                    });
                    let (ztr, zte) = r?;
                    tf += t;
                    let ((), t) = timed(|| {
                        a += &ztr.dot(&ztr.t());
                        b += &zte.dot(&ztr.t());
                    });
                    tg += t;
                    done += s;
                }
                (a, b, target.d().0, tf, tg)
            }
            Some(eps) => {
                // TRF: the registry's `ternary(activation=cos-sin, sparsity=eps)` as its typed map
                // (`rfx_registry::ternary_fit`), whose bit-packed codes give A and B by popcounts
                let fit = trf_params(eps)
                    .and_then(|p| rfx_registry::ternary_fit(m, &p).map_err(|e| e.to_string()))
                    .map_err(|e| CellError::Fatal(format!("cell {}: TRF: {e}", cell.key())))?;
                let (r, tf) = timed(|| -> Result<_, CellError> {
                    let f = fit
                        .fit_map(FitData::Rows(xtr.view()), &mut rng)
                        .map_err(fatal(cell, "TRF"))?;
                    let c = f.input_scale();
                    if c != 1.0 {
                        // Algorithm 1 rescaled the inputs by c = sqrt(0.9 tau' / tau_hat) to the feasible tau'
                        return Err(CellError::Fatal(format!(
                            "cell {}: TRF thresholds for the Gaussian kernel are infeasible at tau = {tau_hat:.3} \
                             (feasible up to {:.3}); set [trf_ridge_gamma] tau below it",
                            cell.key(),
                            tau_hat * c * c / 0.9
                        )));
                    }
                    Ok((
                        f.thresholds(),
                        f.transform_packed(xtr.view()).map_err(fatal(cell, "TRF"))?,
                        f.transform_packed(xte.view()).map_err(fatal(cell, "TRF"))?,
                    ))
                });
                let (th, ctr, cte) = r?;
                let (r, tg) = timed(|| -> Result<_, CellError> {
                    let a = ctr.gram().mapv(|v| v as f64);
                    let b = cte
                        .cross_gram(&ctr)
                        .map_err(fatal(cell, "TRF Gram"))?
                        .mapv(|v| v as f64);
                    Ok((a, b))
                });
                let (a, b) = r?;
                (a, b, th.moments().d().0, tf, tg)
            }
        };
        let (eig, time_eig) = timed(|| eigh(a.view()));
        let eig = eig.map_err(fatal(cell, "eigh"))?;
        let vty = eig.vectors.t().dot(&ytr);
        let bv = b.dot(&eig.vectors);
        Ok(Path {
            lambdas: eig.values,
            vty,
            bv,
            y_test: yte,
            d0,
            time_features,
            time_gram,
            time_eig,
        })
    }
}

/// Test MSE at γ from a cached path: $\hat{\mathbf y} = (BV)(\Lambda/n+\gamma)^{-1}V^\top\mathbf y/n$.
fn mse_at(path: &Path, gamma: f64) -> f64 {
    let n = path.lambdas.len() as f64;
    let coef = Array1::from_shape_fn(path.lambdas.len(), |i| {
        path.vty[i] / (path.lambdas[i].max(0.0) / n + gamma) / n
    });
    let pred = path.bv.dot(&coef);
    let e = &pred - &path.y_test;
    e.dot(&e) / e.len() as f64
}

impl Runner for RidgeRunner {
    fn metrics(&self) -> Vec<String> {
        ["test_mse", "time_total_s", "d0"]
            .into_iter()
            .map(String::from)
            .collect()
    }
    fn timings(&self) -> Vec<String> {
        [
            "time_features_s",
            "time_gram_s",
            "time_eig_s",
            "time_solve_s",
        ]
        .into_iter()
        .map(String::from)
        .collect()
    }
    fn settings(&self) -> String {
        let s = &self.s;
        format!(
            "n={};n_test={};p_gmm={};tau={};block={};stream_seed={}",
            s.n, s.n_test, s.p_gmm, s.tau, s.block, s.stream_seed
        )
    }
    fn shared_group(&self, cell: &Cell) -> Option<String> {
        Some(group_key(cell, &["gamma"]))
    }
    fn run_cell(&self, cell: &Cell, _rng: &mut RfxRng) -> Result<CellOutput, CellError> {
        let gamma = cell_f64(cell, "gamma")?;
        let key = group_key(cell, &["gamma"]);
        let path = self.cache.get(&key, || {
            self.path(cell).map_err(|e| match e {
                CellError::Fatal(s) | CellError::Skipped(s) => s,
            })
        })?;
        let (mse, t_solve) = timed(|| mse_at(&path, gamma));
        let total = path.time_features + path.time_gram + path.time_eig + t_solve;
        Ok(CellOutput {
            items: Vec::new(),
            metrics: vec![mse, total, path.d0],
            timings: vec![path.time_features, path.time_gram, path.time_eig, t_solve],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_settings_and_methods() {
        assert_eq!(parse_setting("mnist-m512"), Some((Data::Mnist, 512)));
        assert_eq!(parse_setting("gmm-m10000"), Some((Data::Gmm, 10000)));
        assert_eq!(parse_setting("gmm-m0"), None);
        assert_eq!(parse_setting("cifar-m10"), None);
        assert_eq!(parse_method("rff"), Some(None));
        assert_eq!(parse_method("trf-0.9"), Some(Some(0.9)));
        assert_eq!(parse_method("trf-1"), None);
        let v = |s: &str| Value::Str(s.to_string());
        assert!(check_method(&v("trf-0.5")).is_ok() && check_method(&v("rff")).is_ok());
        let e = check_method(&v("trf-0.995")).unwrap_err();
        assert!(e.contains("trf-0.995") && e.contains("sparsity"), "{e}");
        assert_eq!(
            trf_params(0.5).unwrap().choice("activation").unwrap(),
            "cos-sin"
        );
    }

    #[test]
    fn gamma_path_equals_direct_solve() {
        // A small problem: the eigen path at gamma equals solving (A/n + gamma I) alpha = y directly.
        let mut rng = rng_stream(3, "t");
        use rand::Rng;
        let (n, nt, m) = (12, 5, 7);
        let s = Array2::from_shape_simple_fn((n, m), || rng.gen::<f64>() - 0.5);
        let st = Array2::from_shape_simple_fn((nt, m), || rng.gen::<f64>() - 0.5);
        let y = Array1::from_shape_simple_fn(n, || if rng.gen::<bool>() { 1.0 } else { -1.0 });
        let yt = Array1::from_shape_simple_fn(nt, || if rng.gen::<bool>() { 1.0 } else { -1.0 });
        let a = s.dot(&s.t());
        let b = st.dot(&s.t());
        let eig = eigh(a.view()).unwrap();
        let path = Path {
            vty: eig.vectors.t().dot(&y),
            bv: b.dot(&eig.vectors),
            lambdas: eig.values,
            y_test: yt.clone(),
            d0: 0.0,
            time_features: 0.0,
            time_gram: 0.0,
            time_eig: 0.0,
        };
        let gamma = 0.3;
        let mut sys = &a / n as f64;
        for i in 0..n {
            sys[[i, i]] += gamma;
        }
        let chol = rfx_linalg::Cholesky::factor(sys).unwrap();
        let alpha = chol.solve(y.clone().insert_axis(Axis(1)).view()).unwrap();
        let pred = b.dot(&alpha.column(0)) / n as f64;
        let e = &pred - &yt;
        let direct = e.dot(&e) / nt as f64;
        assert!((mse_at(&path, gamma) - direct).abs() < 1e-10 * direct.max(1.0));
    }
}
