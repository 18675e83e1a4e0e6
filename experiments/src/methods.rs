//! The one registry of feature maps and exact kernels, shared by the command line (`rfx features`, `rfx fit`,
//! `rfx gram`, `rfx methods`) and the TOML table kinds (`krr_table`, `kmeans_table` build their methods through
//! [`build_method`]). A new method is added here once and appears everywhere.
//!
//! Each [`MethodSpec`] names its parameters ([`ParamDoc`]: default, allowed range), the paper and equation it
//! implements, its output dimension as a function of the budget $m$, and how to fit it from the algorithm
//! crates. This module composes crates; the mathematics lives in them.

use std::collections::BTreeMap;

use ndarray::{Array2, ArrayView1, ArrayView2, Axis};
use rfx_core::{append_bias, FeatureMap, Kernel, RfxError, RfxRng, WithBias};
use rfx_gzk::zonal::Gzk;
use rfx_gzk::RandomGegenbauerParams;
use rfx_kernels::{ArcCosineKernel, ArcCosineOrder, ReluNngp, ReluNtk};
use rfx_ntk::{ArcCosineFeatures, GradRf, NtkRfParams, NtkSketch, PairSketch, Sampler};
use rfx_sampling::{FourierMethod, GaussianFeatureParams};
use rfx_sketches::{PolynomialSketch, RandomMaclaurin};
use rfx_solvers::nystrom::{Nystrom, NystromParams};
use rfx_ternary::{Activation, TernaryParams};

/// The type and allowed values of a parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamKind {
    /// An integer in `min..=max`.
    Int {
        /// Smallest allowed value.
        min: i64,
        /// Largest allowed value.
        max: i64,
    },
    /// A finite real in `[min, max]`.
    Float {
        /// Smallest allowed value.
        min: f64,
        /// Largest allowed value.
        max: f64,
    },
    /// One of the listed words.
    Choice(&'static [&'static str]),
    /// A comma-separated list of finite reals $\ge 0$ (e.g. Taylor coefficients).
    FloatList,
}

impl std::fmt::Display for ParamKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamKind::Int { min, max } => write!(f, "integer in {min}..={max}"),
            ParamKind::Float { min, max } => write!(f, "real in [{min}, {max}]"),
            ParamKind::Choice(c) => write!(f, "one of {}", c.join(" | ")),
            ParamKind::FloatList => write!(f, "comma-separated reals >= 0"),
        }
    }
}

/// One parameter of a method or kernel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParamDoc {
    /// Name used in `--param name=value`.
    pub name: &'static str,
    /// Allowed values.
    pub kind: ParamKind,
    /// Default, as it would be written on the command line.
    pub default: &'static str,
    /// What it means.
    pub about: &'static str,
}

/// Validated parameter values (defaults filled in).
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    values: BTreeMap<&'static str, String>,
}

impl Params {
    /// Checks `given` (`name`, `value`) pairs against `docs`: unknown names, repeated names and values
    /// outside the allowed range are errors naming the parameter and the allowed values; missing ones take
    /// their defaults. `owner` names the method or kernel in messages.
    pub fn parse(
        docs: &[ParamDoc],
        given: &[(String, String)],
        owner: &str,
    ) -> Result<Self, String> {
        let mut values = BTreeMap::new();
        for (k, v) in given {
            let Some(doc) = docs.iter().find(|d| d.name == k) else {
                let allowed: Vec<&str> = docs.iter().map(|d| d.name).collect();
                return Err(format!(
                    "{owner}: unknown parameter \"{k}\"; allowed: {}",
                    if allowed.is_empty() {
                        "none".to_string()
                    } else {
                        allowed.join(", ")
                    }
                ));
            };
            if values.contains_key(doc.name) {
                return Err(format!("{owner}: parameter \"{k}\" given twice"));
            }
            check_value(doc, v).map_err(|e| format!("{owner}: parameter {k}={v}: {e}"))?;
            values.insert(doc.name, v.trim().to_string());
        }
        for d in docs {
            values
                .entry(d.name)
                .or_insert_with(|| d.default.to_string());
        }
        Ok(Params { values })
    }

    fn raw(&self, name: &str) -> rfx_core::Result<&str> {
        self.values
            .get(name)
            .map(String::as_str)
            .ok_or_else(|| RfxError::invalid("parameter", name, "a declared parameter"))
    }

    /// An integer parameter (validated by [`Params::parse`]).
    pub fn int(&self, name: &str) -> rfx_core::Result<usize> {
        let v = self.raw(name)?;
        v.parse::<usize>()
            .map_err(|_| RfxError::invalid(name, v, "an integer >= 0"))
    }

    /// A real parameter.
    pub fn float(&self, name: &str) -> rfx_core::Result<f64> {
        let v = self.raw(name)?;
        v.parse::<f64>()
            .map_err(|_| RfxError::invalid(name, v, "a real number"))
    }

    /// A choice parameter.
    pub fn choice(&self, name: &str) -> rfx_core::Result<&str> {
        self.raw(name)
    }

    /// A list parameter.
    pub fn list(&self, name: &str) -> rfx_core::Result<Vec<f64>> {
        parse_list(self.raw(name)?)
            .map_err(|e| RfxError::invalid(name, self.values[name].clone(), e))
    }

    /// `name=value;...` in name order (for fingerprints and messages).
    pub fn describe(&self) -> String {
        self.values
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(";")
    }
}

fn parse_list(v: &str) -> Result<Vec<f64>, String> {
    let xs: Result<Vec<f64>, _> = v.split(',').map(|s| s.trim().parse::<f64>()).collect();
    match xs {
        Ok(xs) if !xs.is_empty() && xs.iter().all(|x| x.is_finite() && *x >= 0.0) => Ok(xs),
        _ => Err("comma-separated finite reals >= 0".into()),
    }
}

fn check_value(doc: &ParamDoc, v: &str) -> Result<(), String> {
    let v = v.trim();
    let bad = || format!("expected {}", doc.kind);
    match doc.kind {
        ParamKind::Int { min, max } => match v.parse::<i64>() {
            Ok(x) if (min..=max).contains(&x) => Ok(()),
            _ => Err(bad()),
        },
        ParamKind::Float { min, max } => match v.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= min && x <= max => Ok(()),
            _ => Err(bad()),
        },
        ParamKind::Choice(c) => {
            if c.contains(&v) {
                Ok(())
            } else {
                Err(bad())
            }
        }
        ParamKind::FloatList => parse_list(v).map(|_| ()).map_err(|_| bad()),
    }
}

/// A fitted feature map with the method's output dimension.
pub type BoxedMap = Box<dyn FeatureMap>;

/// How a method is fitted: budget $m$, parameters, input dimension $d$, fitting rows (data-dependent maps),
/// random stream.
type BuildFn = fn(
    m: usize,
    p: &Params,
    d: usize,
    fit: Option<ArrayView2<'_, f64>>,
    rng: &mut RfxRng,
) -> rfx_core::Result<BoxedMap>;

/// One feature map of the registry.
pub struct MethodSpec {
    /// Name used by `--method` and by the TOML `method` sweep.
    pub name: &'static str,
    /// One-line description.
    pub about: &'static str,
    /// The paper and equation or algorithm implemented.
    pub paper: &'static str,
    /// Parameters besides the budget `--dim` $m$ and `--seed`.
    pub params: &'static [ParamDoc],
    /// Whether fitting looks at data (rows of `--fit-on`), not only at the input dimension.
    pub data_dependent: bool,
    /// Whether the table kinds (`krr_table`, `kmeans_table`) accept it in their `method` sweep.
    pub table: bool,
    /// The output dimension as a formula in $m$ (for `rfx methods`).
    pub dim_rule: &'static str,
    /// The output dimension for budget $m$ and $n$ fitting rows; for methods whose dimension depends on
    /// the data (Nyström: the rank of $K_{SS}$) an upper bound, see `exact_dim`.
    pub out_dim: fn(m: usize, n_fit: usize, p: &Params) -> usize,
    /// Whether [`MethodSpec::out_dim`] is exact.
    pub exact_dim: bool,
    build: BuildFn,
}

impl std::fmt::Debug for MethodSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MethodSpec")
            .field("name", &self.name)
            .finish()
    }
}

impl MethodSpec {
    /// Parses `--param` pairs for this method.
    pub fn parse_params(&self, given: &[(String, String)]) -> Result<Params, String> {
        Params::parse(self.params, given, &format!("method {}", self.name))
    }

    /// Fits the map with budget $m$ for inputs of dimension `d`; data-dependent methods need the fitting
    /// rows `fit` (with `d` columns). Every random draw comes from `rng`.
    pub fn fit(
        &self,
        m: usize,
        p: &Params,
        d: usize,
        fit: Option<ArrayView2<'_, f64>>,
        rng: &mut RfxRng,
    ) -> rfx_core::Result<BoxedMap> {
        if m == 0 {
            return Err(RfxError::invalid("dim", m, "an integer >= 1"));
        }
        if d == 0 {
            return Err(RfxError::invalid("input dimension", d, "at least 1 column"));
        }
        if let Some(x) = fit {
            if x.ncols() != d || x.nrows() == 0 {
                return Err(RfxError::DimensionMismatch(format!(
                    "fitting data has {} rows and {} columns, expected >= 1 row and {d} columns",
                    x.nrows(),
                    x.ncols()
                )));
            }
        } else if self.data_dependent {
            return Err(RfxError::invalid(
                "fit data",
                "none",
                format!("rows to fit {} on", self.name),
            ));
        }
        let beta = bias_of(self.params, p)?;
        if beta == 0.0 {
            return (self.build)(m, p, d, fit, rng);
        }
        // with a bias: the map of the (d + 1)-dimensional inputs [x, β], fitted on the augmented rows
        if self.params.iter().any(|d| d.name == "unit_norm") && p.choice("unit_norm")? == "true" {
            return Err(RfxError::invalid(
                "bias",
                beta,
                "0 with unit_norm=true (rows [x, beta] do not have norm 1)",
            ));
        }
        let aug = fit.map(|x| append_bias(x, beta));
        let inner = (self.build)(m, p, d + 1, aug.as_ref().map(|a| a.view()), rng)?;
        Ok(Box::new(WithBias::new(inner, beta)?))
    }
}

// ---------------------------------------------------------------- parameters shared by several methods

const SIGMA: ParamDoc = ParamDoc {
    name: "sigma",
    kind: ParamKind::Float {
        min: 1e-6,
        max: 1e6,
    },
    default: "1",
    about: "Gaussian bandwidth: k(x,y) = exp(-|x-y|^2 / (2 sigma^2))",
};
const KERNEL: ParamDoc = ParamDoc {
    name: "kernel",
    kind: ParamKind::Choice(&["gaussian", "relu-ntk"]),
    default: "gaussian",
    about: "kernel approximated: Gaussian (uses sigma) or depth-L ReLU NTK |x||y|K^(L)(cos) (uses depth)",
};
const DEPTH: ParamDoc = ParamDoc {
    name: "depth",
    kind: ParamKind::Int { min: 0, max: 8 },
    default: "2",
    about: "NTK depth L (hidden layers); only with kernel=relu-ntk",
};
const GAUSSIAN_ONLY: &[ParamDoc] = &[SIGMA];

/// The parameter `bias` of a method or kernel: every input row becomes $[x, \beta]$ before the map or kernel
/// ([`rfx_core::WithBias`]); for the ReLU NTK the kernel of a network whose first layer has a bias of scale
/// β, $\Theta([x, \beta], [y, \beta])$, no longer positively homogeneous. 0 (the default) leaves the inputs
/// as they are and the output bit for bit unchanged.
pub const BIAS: ParamDoc = ParamDoc {
    name: "bias",
    kind: ParamKind::Float { min: 0.0, max: 1e6 },
    default: "0",
    about: "constant input coordinate beta appended to every row, x -> [x, beta]: the NTK of a network with a first-layer bias of scale beta (0: none)",
};

/// The bias β of parameters `p` that may declare [`BIAS`] among `docs` (0 when they do not).
pub fn bias_of(docs: &[ParamDoc], p: &Params) -> rfx_core::Result<f64> {
    if docs.iter().any(|d| d.name == BIAS.name) {
        p.float(BIAS.name)
    } else {
        Ok(0.0)
    }
}

/// The kernel of a method with the `kernel`/`sigma`/`depth` parameters, as a [`Gzk`].
fn table_gzk(p: &Params) -> rfx_core::Result<Gzk> {
    match p.choice("kernel")? {
        "relu-ntk" => Gzk::relu_ntk(p.int("depth")?),
        _ => Gzk::gaussian(p.float("sigma")?),
    }
}

/// A dot-product feature map applied to $\hat x = x/\|x\|$ and scaled by $\|x\|$: features of
/// $\|x\|\|y\|\kappa(\langle\hat x,\hat y\rangle)$, the form of the ReLU NTK (zero rows stay zero).
struct NormScaled<F>(F);

impl<F: FeatureMap> FeatureMap for NormScaled<F> {
    fn input_dim(&self) -> usize {
        self.0.input_dim()
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn transform(&self, x: ArrayView2<'_, f64>) -> rfx_core::Result<Array2<f64>> {
        let norms: Vec<f64> = x.rows().into_iter().map(|r| r.dot(&r).sqrt()).collect();
        let mut unit = x.to_owned();
        rfx_data::normalize_rows(&mut unit);
        let mut z = self.0.transform(unit.view())?;
        for (mut row, &r) in z.axis_iter_mut(Axis(0)).zip(&norms) {
            row *= r;
        }
        Ok(z)
    }
}

fn ntk_taylor(depth: usize, q: usize) -> Vec<f64> {
    // tiny negative round-off would be rejected by the sketches; the coefficients are >= 0 (Schoenberg)
    rfx_gzk::ntk::relu_ntk_taylor(depth, q)
        .into_iter()
        .map(|c| c.max(0.0))
        .collect()
}

/// The largest width $w \ge 1$ of a depth-$L$ ReLU network on $\mathbb R^d$ whose parameter count
/// $dw + (L-1)w^2 + w$ is at most $m$ (None if even $w = 1$ has more).
fn grad_rf_width(m: usize, d: usize, depth: usize) -> Option<usize> {
    let count = |w: usize| GradRf::params().depth(depth).width(w).output_dim(d);
    if count(1) > m {
        return None;
    }
    let (mut lo, mut hi) = (1usize, m);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if count(mid) <= m {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(lo)
}

fn even_floor(m: usize) -> usize {
    m & !1
}

fn gaussian_family(
    method: FourierMethod,
    m: usize,
    p: &Params,
    d: usize,
    rng: &mut RfxRng,
) -> rfx_core::Result<BoxedMap> {
    Ok(Box::new(
        GaussianFeatureParams::new(method)
            .dim(m)
            .sigma(p.float("sigma")?)
            .fit(d, rng)?,
    ))
}

fn polysketch_per_degree(m: usize, p: usize) -> usize {
    (((m.saturating_sub(1)) / p) / 2 * 2).max(2)
}

fn gegenbauer_radial(p: &Params) -> rfx_core::Result<usize> {
    let unit = p.choice("unit_norm")? == "true";
    Ok(if unit || p.choice("kernel")? == "relu-ntk" {
        1
    } else {
        p.int("radial_terms")?
    })
}

const RANDOM_FOURIER_PAPER: &str =
    "Rahimi & Recht 2007 (random Fourier features), paired [cos, sin]; survey (Liu et al. TPAMI 2021) Sec. 3.1";

static METHODS: &[MethodSpec] = &[
    MethodSpec {
        name: "rff",
        about: "random Fourier features of the Gaussian kernel, z = [cos(Wx), sin(Wx)]/sqrt(m/2), W ~ N(0, I/sigma^2)",
        paper: RANDOM_FOURIER_PAPER,
        params: GAUSSIAN_ONLY,
        data_dependent: false,
        table: true,
        dim_rule: "m (m even)",
        out_dim: |m, _, _| m,
        exact_dim: true,
        build: |m, p, d, _, rng| gaussian_family(FourierMethod::Rff, m, p, d, rng),
    },
    MethodSpec {
        name: "orf",
        about: "orthogonal random features: Gaussian frequencies orthogonalised in d x d blocks, chi_d radii",
        paper: "Yu et al. 2016 (ORF); survey Sec. 3.2",
        params: GAUSSIAN_ONLY,
        data_dependent: false,
        table: false,
        dim_rule: "m (m even)",
        out_dim: |m, _, _| m,
        exact_dim: true,
        build: |m, p, d, _, rng| gaussian_family(FourierMethod::Orf, m, p, d, rng),
    },
    MethodSpec {
        name: "sorf",
        about: "structured orthogonal random features HD1 HD2 HD3 (Hadamard and Rademacher diagonals)",
        paper: "Yu et al. 2016 (SORF); survey Sec. 3.2",
        params: GAUSSIAN_ONLY,
        data_dependent: false,
        table: false,
        dim_rule: "m (m even)",
        out_dim: |m, _, _| m,
        exact_dim: true,
        build: |m, p, d, _, rng| gaussian_family(FourierMethod::Sorf, m, p, d, rng),
    },
    MethodSpec {
        name: "fastfood",
        about: "Fastfood frequencies S H G Pi H B (Hadamard, Gaussian, permutation, sign diagonals)",
        paper: "Le, Sarlos & Smola 2013 (Fastfood); survey Sec. 3.3",
        params: GAUSSIAN_ONLY,
        data_dependent: false,
        table: true,
        dim_rule: "m (m even)",
        out_dim: |m, _, _| m,
        exact_dim: true,
        build: |m, p, d, _, rng| gaussian_family(FourierMethod::Fastfood, m, p, d, rng),
    },
    MethodSpec {
        name: "qmc",
        about: "quasi-Monte Carlo Fourier features from scrambled Halton points",
        paper: "Yang et al. 2014 (QMC features); survey Sec. 3.10",
        params: GAUSSIAN_ONLY,
        data_dependent: false,
        table: false,
        dim_rule: "m (m even)",
        out_dim: |m, _, _| m,
        exact_dim: true,
        build: |m, p, d, _, rng| gaussian_family(FourierMethod::Qmc, m, p, d, rng),
    },
    MethodSpec {
        name: "maclaurin",
        about: "Random Maclaurin features of the kernel's Taylor series (degree drawn per feature, Rademacher products)",
        paper: "Kar & Karnick 2012 (Random Maclaurin), a baseline of the Gegenbauer paper (Han et al. ICML 2022, Tables 2-4)",
        params: &[
            KERNEL,
            SIGMA,
            DEPTH,
            ParamDoc {
                name: "degree",
                kind: ParamKind::Int { min: 1, max: 60 },
                default: "20",
                about: "maximum Taylor degree",
            },
        ],
        data_dependent: false,
        table: true,
        dim_rule: "m",
        out_dim: |m, _, _| m,
        exact_dim: true,
        build: |m, p, d, _, rng| {
            let q = p.int("degree")?;
            Ok(match p.choice("kernel")? {
                "relu-ntk" => Box::new(NormScaled(
                    RandomMaclaurin::params()
                        .dim(m)
                        .coefficients(ntk_taylor(p.int("depth")?, q))
                        .fit(d, rng)?,
                )),
                _ => Box::new(
                    RandomMaclaurin::params()
                        .dim(m)
                        .gaussian(p.float("sigma")?, q)
                        .fit(d, rng)?,
                ),
            })
        },
    },
    MethodSpec {
        name: "polysketch",
        about: "the kernel's degree-p Taylor polynomial sketched by the PolySketch tree (all degrees from one tree)",
        paper: "Ahle et al. 2020 (PolySketch); Zandieh et al. NeurIPS 2021 Sec. 3; Gegenbauer paper Tables 2-4",
        params: &[
            KERNEL,
            SIGMA,
            DEPTH,
            ParamDoc {
                name: "degree",
                kind: ParamKind::Int { min: 1, max: 32 },
                default: "8",
                about: "Taylor degree p (per-degree sketch size: largest even number <= (m-1)/p, at least 2)",
            },
        ],
        data_dependent: false,
        table: true,
        dim_rule: "1 + p * max(2, even floor((m-1)/p))",
        out_dim: |m, _, p| {
            let q = p.int("degree").unwrap_or(1).max(1);
            1 + q * polysketch_per_degree(m, q)
        },
        exact_dim: true,
        build: |m, p, d, _, rng| {
            let q = p.int("degree")?;
            let per = polysketch_per_degree(m, q);
            Ok(match p.choice("kernel")? {
                "relu-ntk" => Box::new(NormScaled(
                    PolynomialSketch::params()
                        .dim(per)
                        .coefficients(ntk_taylor(p.int("depth")?, q))
                        .fit(d, rng)?,
                )),
                _ => Box::new(
                    PolynomialSketch::params()
                        .dim(per)
                        .gaussian(p.float("sigma")?, q)
                        .fit(d, rng)?,
                ),
            })
        },
    },
    MethodSpec {
        name: "gegenbauer",
        about: "random Gegenbauer features of the kernel as a generalized zonal kernel truncated at degree q with s radial terms",
        paper: "Han, Zandieh & Avron ICML 2022, Definition 8 (Gaussian: Lemma 15; ReLU NTK: Lemma 16)",
        params: &[
            KERNEL,
            SIGMA,
            DEPTH,
            ParamDoc {
                name: "degree",
                kind: ParamKind::Int { min: 0, max: rfx_gzk::MAX_DEGREE as i64 },
                default: "15",
                about: "truncation degree q",
            },
            ParamDoc {
                name: "radial_terms",
                kind: ParamKind::Int { min: 1, max: 64 },
                default: "4",
                about: "radial terms s for the Gaussian (directions = floor(m/s)); 1 for the NTK and with unit_norm",
            },
            ParamDoc {
                name: "unit_norm",
                kind: ParamKind::Choice(&["false", "true"]),
                default: "false",
                about: "unit-norm fast path (every input row must have norm 1)",
            },
            BIAS,
        ],
        data_dependent: false,
        table: true,
        dim_rule: "floor(m/s) * s",
        out_dim: |m, _, p| {
            let s = gegenbauer_radial(p).unwrap_or(1).max(1);
            m / s * s
        },
        exact_dim: true,
        build: |m, p, d, _, rng| {
            let g = table_gzk(p)?;
            let q = p.int("degree")?;
            let params = if p.choice("unit_norm")? == "true" {
                RandomGegenbauerParams::unit_norm(g, m, q)
            } else {
                let s = gegenbauer_radial(p)?;
                RandomGegenbauerParams::new(g, m / s, q, s)
            };
            Ok(Box::new(params.fit(d, rng)?))
        },
    },
    MethodSpec {
        name: "nystrom",
        about: "Nystrom features K(x, S) U r^{-1/2} with m landmarks S from the fitting rows by recursive ridge-leverage-score sampling",
        paper: "Williams & Seeger 2001; Musco & Musco 2017 (recursive RLS); baseline of the Gegenbauer paper Tables 2-4",
        params: &[KERNEL, SIGMA, DEPTH],
        data_dependent: true,
        table: true,
        dim_rule: "rank of K_SS <= min(m, fitting rows)",
        out_dim: |m, n, _| m.min(n),
        exact_dim: false,
        build: |m, p, _, fit, rng| {
            let x = fit.ok_or_else(|| RfxError::invalid("fit data", "none", "rows"))?;
            Ok(Box::new(Nystrom::fit(
                table_gzk(p)?,
                x,
                &NystromParams::new(m),
                rng,
            )?))
        },
    },
    MethodSpec {
        name: "arccos",
        about: "arc-cosine features sqrt(2/m) act(Wx), act = Step (order 0) or ReLU (order 1); kappa(1) = 1 normalisation",
        paper: "Cho & Saul 2009; Han et al. 2021 (NTK random features) Eq. 11, leverage-score sampler Eq. 16 / Alg. 2",
        params: &[
            ParamDoc {
                name: "order",
                kind: ParamKind::Int { min: 0, max: 1 },
                default: "1",
                about: "arc-cosine order",
            },
            ParamDoc {
                name: "sampler",
                kind: ParamKind::Choice(&["gaussian", "gs", "exact-leverage"]),
                default: "gaussian",
                about: "weights: Gaussian, leverage scores by one Gibbs sweep (GS), or exact leverage sampling (order 1 only)",
            },
        ],
        data_dependent: false,
        table: false,
        dim_rule: "m",
        out_dim: |m, _, _| m,
        exact_dim: true,
        build: |m, p, d, _, rng| {
            let sampler = match p.choice("sampler")? {
                "gs" => Sampler::GS,
                "exact-leverage" => Sampler::LeverageExact,
                _ => Sampler::Gaussian,
            };
            Ok(Box::new(
                ArcCosineFeatures::params()
                    .order(ArcCosineOrder::from_int(p.int("order")?)?)
                    .dim(m)
                    .sampler(sampler)
                    .fit(d, rng)?,
            ))
        },
    },
    MethodSpec {
        name: "ntk-rf",
        about: "NTK random features: arc-cosine features per layer combined by a degree-2 sketch (m1 = m - mcs ReLU features, mcs sketch)",
        paper: "Han et al. 2021 (NTK random features) Algorithm 1; Zandieh et al. NeurIPS 2021 (NTKRF, TensorSRHT)",
        params: &[
            ParamDoc {
                name: "depth",
                kind: ParamKind::Int { min: 1, max: 8 },
                default: "1",
                about: "NTK depth L",
            },
            ParamDoc {
                name: "sketch_share",
                kind: ParamKind::Float { min: 0.05, max: 0.95 },
                default: "0.5",
                about: "fraction of m given to the sketch: mcs = even round(share * m)",
            },
            ParamDoc {
                name: "sketch",
                kind: ParamKind::Choice(&["tensorsketch", "tensorsrht"]),
                default: "tensorsketch",
                about: "degree-2 sketch of each layer",
            },
            ParamDoc {
                name: "sampler",
                kind: ParamKind::Choice(&["gaussian", "gs"]),
                default: "gaussian",
                about: "ReLU weights: Gaussian or leverage scores by Gibbs sampling (GS)",
            },
            BIAS,
        ],
        data_dependent: false,
        table: true,
        dim_rule: "m (m >= 4)",
        out_dim: |m, _, _| m,
        exact_dim: true,
        build: |m, p, d, _, rng| {
            if m < 4 {
                return Err(RfxError::invalid("dim", m, "an integer >= 4"));
            }
            let share = p.float("sketch_share")?;
            let mcs = even_floor(((share * m as f64).round() as usize).clamp(2, m - 2));
            let mut params = NtkRfParams::han2021(p.int("depth")?, m, mcs);
            if p.choice("sketch")? == "tensorsrht" {
                params = params.sketch(PairSketch::TensorSrht);
            }
            if p.choice("sampler")? == "gs" {
                params = params.sampler(Sampler::GS);
            }
            Ok(Box::new(params.fit(d, rng)?))
        },
    },
    MethodSpec {
        name: "ntk-sketch",
        about: "NTKSketch: polynomial fit of the NTK's arc-cosine chain, sketched by PolySketch and compressed by SRHT",
        paper: "Zandieh et al. NeurIPS 2021, Algorithm 1 and Theorem 2",
        params: &[
            ParamDoc {
                name: "depth",
                kind: ParamKind::Int { min: 1, max: 8 },
                default: "1",
                about: "NTK depth L",
            },
            ParamDoc {
                name: "degree",
                kind: ParamKind::Int { min: 1, max: rfx_ntk::MAX_POLY_DEGREE as i64 },
                default: "4",
                about: "degree q of the polynomial fit of the arc-cosine functions",
            },
            BIAS,
        ],
        data_dependent: false,
        table: true,
        dim_rule: "m - 1 (m even, >= 4)",
        out_dim: |m, _, _| m.saturating_sub(1),
        exact_dim: true,
        build: |m, p, d, _, rng| {
            Ok(Box::new(
                NtkSketch::params()
                    .depth(p.int("depth")?)
                    .degree(p.int("degree")?)
                    .dim(m)
                    .fit(d, rng)?,
            ))
        },
    },
    MethodSpec {
        name: "grad-rf",
        about: "gradient features: the gradient of a random ReLU network's scalar output w.r.t. all its parameters (NTK parametrisation), widest network with at most m parameters",
        paper: "Arora et al. 2019 (finite-width NTK), the Grad-RF baseline of Han et al. 2021 (Fig. 2) and Zandieh et al. NeurIPS 2021 (Fig. 2a)",
        params: &[ParamDoc {
            name: "depth",
            kind: ParamKind::Int { min: 1, max: 8 },
            default: "1",
            about: "hidden layers L",
        }],
        data_dependent: false,
        table: false,
        dim_rule: "dw + (L-1)w^2 + w <= m for the largest width w >= 1",
        out_dim: |m, _, _| m,
        exact_dim: false,
        build: |m, p, d, _, rng| {
            let depth = p.int("depth")?;
            let width = grad_rf_width(m, d, depth).ok_or_else(|| {
                RfxError::invalid(
                    "dim",
                    m,
                    format!("at least d + 1 = {} (the parameters of a width-1 network)", d + 1),
                )
            })?;
            Ok(Box::new(
                GradRf::params().depth(depth).width(width).fit(d, rng)?,
            ))
        },
    },
    MethodSpec {
        name: "lp-rff",
        about: "low-precision random Fourier features: cos(Wx + b) sqrt(2/m), W ~ N(0, I/sigma^2), b ~ U[0, 2 pi), each value stochastically rounded to a b-bit grid on [-sqrt(2/m), sqrt(2/m)] (unbiased; noise keyed by the row's content)",
        paper: "Zhang et al. AISTATS 2019 (LP-RFF), as the baseline of Tiomoko Ali, Liao & Couillet ICLR 2022, Figs. 1, 4",
        params: &[
            SIGMA,
            ParamDoc {
                name: "bits",
                kind: ParamKind::Int { min: 1, max: 16 },
                default: "8",
                about: "bits per feature value b",
            },
        ],
        data_dependent: false,
        table: false,
        dim_rule: "m",
        out_dim: |m, _, _| m,
        exact_dim: true,
        build: |m, p, d, _, rng| {
            let rff = rfx_sampling::Rff::params().dim(m).sigma(p.float("sigma")?).output(rfx_sampling::Output::RandomPhase).fit(d, rng)?;
            let noise_seed = rand::Rng::gen::<u64>(rng);
            let bits = p.int("bits")? as u32; // 1..=16, checked when the parameters were parsed
            Ok(Box::new(rfx_ternary::LpRff::new(rff, bits, noise_seed)?))
        },
    },
    MethodSpec {
        name: "ternary",
        about: "ternary random features sigma_ter(W_ter x)/sqrt(m), thresholds matched to an activation's Gaussian moments at tau estimated from the fitting rows",
        paper: "Tiomoko Ali, Liao & Couillet ICLR 2022, Algorithm 1 (eqs. 4-6, 10)",
        params: &[
            ParamDoc {
                name: "activation",
                kind: ParamKind::Choice(&["relu", "abs", "cos", "exp", "erf", "gauss-bump"]),
                default: "relu",
                about: "activation whose kernel is matched (d0, d1, d2 of Table 1)",
            },
            ParamDoc {
                name: "sparsity",
                kind: ParamKind::Float { min: 0.0, max: 0.99 },
                default: "0",
                about: "fraction epsilon of zero weights",
            },
        ],
        data_dependent: true,
        table: false,
        dim_rule: "m",
        out_dim: |m, _, _| m,
        exact_dim: true,
        build: |m, p, _, fit, rng| {
            let x = fit.ok_or_else(|| RfxError::invalid("fit data", "none", "rows"))?;
            let act = match p.choice("activation")? {
                "abs" => Activation::Abs,
                "cos" => Activation::Cos,
                "exp" => Activation::Exp,
                "erf" => Activation::Erf,
                "gauss-bump" => Activation::GaussBump,
                _ => Activation::Relu,
            };
            let fit = TernaryParams::new(m)
                .sparsity(p.float("sparsity")?)
                .fit_to_target(x, &act, rng)?;
            Ok(Box::new(fit.features))
        },
    },
];

/// Every feature map, in the order `rfx methods` lists them.
pub fn methods() -> &'static [MethodSpec] {
    METHODS
}

/// The method called `name`; the error lists the allowed names.
pub fn method(name: &str) -> Result<&'static MethodSpec, String> {
    METHODS.iter().find(|m| m.name == name).ok_or_else(|| {
        format!(
            "unknown method \"{name}\"; allowed: {} (see rfx methods)",
            names(METHODS.iter().map(|m| m.name))
        )
    })
}

fn names<'a>(it: impl Iterator<Item = &'a str>) -> String {
    it.collect::<Vec<_>>().join(", ")
}

/// The methods the table kinds accept (Gaussian or ReLU-NTK kernel), in registry order.
pub fn table_methods() -> Vec<&'static str> {
    METHODS.iter().filter(|m| m.table).map(|m| m.name).collect()
}

/// The table kernels (`gaussian`, `relu-ntk`) a table method approximates, read from the parameters it
/// declares: a `kernel` parameter means both, a bandwidth `sigma` alone the Gaussian kernel (RFF,
/// Fastfood), a `depth` alone the ReLU NTK (NTK random features, NTKSketch); methods outside the tables
/// have none.
pub fn table_kernels(spec: &MethodSpec) -> &'static [&'static str] {
    let has = |k: &str| spec.params.iter().any(|d| d.name == k);
    if !spec.table {
        &[]
    } else if has("kernel") {
        &["gaussian", "relu-ntk"]
    } else if has("sigma") {
        &["gaussian"]
    } else if has("depth") {
        &["relu-ntk"]
    } else {
        &[]
    }
}

/// A `method` value of a table sweep: a name, optionally followed by parameters in parentheses that
/// override the table's settings for that method, e.g. `ntk-rf(sampler=gs, sketch=tensorsrht)` or
/// `exact(kernel=gaussian)`. Parameters are `name=value` pairs separated by commas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodChoice {
    /// The method name.
    pub name: String,
    /// The parameters written in parentheses, in order.
    pub params: Vec<(String, String)>,
}

impl MethodChoice {
    /// Parses `name` or `name(k=v, ...)`; the syntax alone is checked here, names and values by the
    /// kind (against the registry).
    pub fn parse(v: &str) -> Result<Self, String> {
        let v = v.trim();
        let bad = || {
            format!(
                "method \"{v}\": expected a name or name(param=value, ...), e.g. ntk-rf(sampler=gs)"
            )
        };
        let (name, rest) = match v.find('(') {
            None => (v, None),
            Some(i) => {
                let inner = v[i + 1..].strip_suffix(')').ok_or_else(bad)?;
                (v[..i].trim(), Some(inner))
            }
        };
        if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == ')') {
            return Err(bad());
        }
        let mut params = Vec::new();
        if let Some(inner) = rest {
            for pair in inner.split(',') {
                let (k, val) = pair.split_once('=').ok_or_else(bad)?;
                let (k, val) = (k.trim(), val.trim());
                if k.is_empty() || val.is_empty() || val.contains(['(', ')', '=']) {
                    return Err(bad());
                }
                params.push((k.to_string(), val.to_string()));
            }
        }
        Ok(MethodChoice {
            name: name.to_string(),
            params,
        })
    }

    /// The value of parameter `k`, if written.
    pub fn param(&self, k: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
    }

    /// Checks a registry table method and its parameters (unknown names and out-of-range values are
    /// errors that list what is allowed).
    pub fn check_table_method(&self) -> Result<&'static MethodSpec, String> {
        let spec = method(&self.name)?;
        if !spec.table {
            return Err(format!(
                "method {} is not available in the table kinds; allowed: {}",
                self.name,
                table_methods().join(", ")
            ));
        }
        spec.parse_params(&self.params)?;
        Ok(spec)
    }
}

/// Fits method `name` with parameters given as (`name`, `value`) pairs — the entry point of the TOML table
/// kinds. Parameters a method does not declare are dropped (so a table can pass its kernel settings to
/// every method); a kernel the method cannot approximate is an error.
pub fn build_method(
    name: &str,
    m: usize,
    given: &[(&str, String)],
    fit: ArrayView2<'_, f64>,
    rng: &mut RfxRng,
) -> Result<BoxedMap, String> {
    let spec = method(name)?;
    let has = |k: &str| spec.params.iter().any(|d| d.name == k);
    if let Some((_, k)) = given.iter().find(|(k, _)| *k == "kernel") {
        if !table_kernels(spec).contains(&k.as_str()) {
            return Err(format!(
                "method {name} is not available for the kernel {k}; allowed for it: {}",
                names(
                    METHODS
                        .iter()
                        .filter(|m| table_kernels(m).contains(&k.as_str()))
                        .map(|m| m.name)
                )
            ));
        }
    }
    let pairs: Vec<(String, String)> = given
        .iter()
        .filter(|(k, _)| has(k))
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let p = spec.parse_params(&pairs)?;
    spec.fit(m, &p, fit.ncols(), Some(fit), rng)
        .map_err(|e| format!("method {name}: {e}"))
}

// ---------------------------------------------------------------- exact kernels

/// `kernel` applied to $[x, \beta]$ and $[y, \beta]$ ([`rfx_core::WithBias`]) when β > 0; `kernel` itself,
/// untouched, when β = 0.
pub fn with_bias(kernel: Box<dyn Kernel>, beta: f64) -> rfx_core::Result<Box<dyn Kernel>> {
    if beta == 0.0 {
        Ok(kernel)
    } else {
        Ok(Box::new(WithBias::new(kernel, beta)?))
    }
}

/// One exact kernel of `rfx gram`.
pub struct KernelSpec {
    /// Name used by `--kernel`.
    pub name: &'static str,
    /// The formula.
    pub about: &'static str,
    /// The paper and equation.
    pub paper: &'static str,
    /// Parameters.
    pub params: &'static [ParamDoc],
    build: fn(&Params) -> rfx_core::Result<Box<dyn Kernel>>,
}

impl std::fmt::Debug for KernelSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelSpec")
            .field("name", &self.name)
            .finish()
    }
}

impl KernelSpec {
    /// Parses `--param` pairs for this kernel.
    pub fn parse_params(&self, given: &[(String, String)]) -> Result<Params, String> {
        Params::parse(self.params, given, &format!("kernel {}", self.name))
    }

    /// The kernel with these parameters; with a `bias` β > 0 the kernel of $[x, \beta]$ and $[y, \beta]$
    /// ([`rfx_core::WithBias`]).
    pub fn build(&self, p: &Params) -> rfx_core::Result<Box<dyn Kernel>> {
        with_bias((self.build)(p)?, bias_of(self.params, p)?)
    }
}

const KDEPTH: ParamDoc = ParamDoc {
    name: "depth",
    kind: ParamKind::Int {
        min: 0,
        max: rfx_kernels::MAX_DEPTH as i64,
    },
    default: "1",
    about: "depth L (number of hidden layers; 0 is the linear kernel)",
};

/// Gaussian kernel by one GEMM per block: $\|x-y\|^2 = \|x\|^2 + \|y\|^2 - 2\langle x, y\rangle$.
struct GaussianGram(rfx_kernels::GaussianKernel);

impl Kernel for GaussianGram {
    fn eval(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
        self.0.eval(x, y)
    }
    fn gram(
        &self,
        x: ArrayView2<'_, f64>,
        y: ArrayView2<'_, f64>,
    ) -> rfx_core::Result<Array2<f64>> {
        self.0.gram(x, y)
    }
}

static KERNELS: &[KernelSpec] = &[
    KernelSpec {
        name: "gaussian",
        about: "exp(-|x-y|^2 / (2 sigma^2))",
        paper: "survey (Liu et al. TPAMI 2021) Eq. 1; Gegenbauer paper Lemma 15",
        params: GAUSSIAN_ONLY,
        build: |p| {
            let sigma = p.float("sigma")?;
            Ok(Box::new(GaussianGram(rfx_kernels::GaussianKernel::new(sigma)?)))
        },
    },
    KernelSpec {
        name: "polynomial",
        about: "(<x,y> + c)^p, as a generalized zonal kernel (rfx-gzk)",
        paper: "Gegenbauer paper Lemma 4 (dot-product kernels as GZKs)",
        params: &[
            ParamDoc {
                name: "degree",
                kind: ParamKind::Int { min: 0, max: 60 },
                default: "2",
                about: "degree p",
            },
            ParamDoc {
                name: "c",
                kind: ParamKind::Float { min: 0.0, max: 1e6 },
                default: "1",
                about: "offset c",
            },
        ],
        build: |p| Ok(Box::new(Gzk::polynomial(p.int("degree")?, p.float("c")?)?)),
    },
    KernelSpec {
        name: "arccos0",
        about: "arc-cosine kernel of order 0: kappa0(cos) = 1 - arccos(cos)/pi (kappa0(1) = 1)",
        paper: "Cho & Saul 2009; Han et al. 2021 Eq. 6",
        params: &[],
        build: |_| Ok(Box::new(ArcCosineKernel::new(ArcCosineOrder::Zero))),
    },
    KernelSpec {
        name: "arccos1",
        about: "arc-cosine kernel of order 1: |x||y| kappa1(cos), kappa1(t) = (sqrt(1-t^2) + t(pi - arccos t))/pi (kappa1(1) = 1)",
        paper: "Cho & Saul 2009; Han et al. 2021 Eq. 6",
        params: &[],
        build: |_| Ok(Box::new(ArcCosineKernel::new(ArcCosineOrder::One))),
    },
    KernelSpec {
        name: "ntk",
        about: "depth-L ReLU neural tangent kernel |x||y| K^(L)(cos) of a bias-free fully connected network; K(x,x) = (L+1)|x|^2 (bias=b: the kernel of the rows [x, b], a first-layer bias)",
        paper: "Han et al. 2021 Eqs. 1, 2, 5; Zandieh et al. NeurIPS 2021 Definition 1",
        params: &[KDEPTH, BIAS],
        build: |p| Ok(Box::new(ReluNtk::new(p.int("depth")?)?)),
    },
    KernelSpec {
        name: "nngp",
        about: "depth-L ReLU NNGP kernel |x||y| kappa1^(L)(cos); K(x,x) = |x|^2",
        paper: "Han et al. 2021 Eqs. 4, 5; Zandieh et al. NeurIPS 2021 Eq. 3",
        params: &[KDEPTH, BIAS],
        build: |p| Ok(Box::new(ReluNngp::new(p.int("depth")?)?)),
    },
    KernelSpec {
        name: "gzk",
        about: "generalized zonal kernel of a dot-product function: sum_j a_j <x,y>^j with Taylor coefficients a_j >= 0",
        paper: "Han, Zandieh & Avron ICML 2022, Definition 3 and Lemma 4",
        params: &[ParamDoc {
            name: "taylor",
            kind: ParamKind::FloatList,
            default: "1,1,0.5",
            about: "Taylor coefficients a_0,a_1,... (default: the degree-2 truncation of exp(<x,y>))",
        }],
        build: |p| Ok(Box::new(Gzk::dot_product(p.list("taylor")?)?)),
    },
    KernelSpec {
        name: "cntk",
        about: "exact ReLU convolutional NTK with global average pooling on images (rows = height*width*channels values, height-width-channel order), zero-padded q x q filters, first and last layer fixed; 1x1 images give q^(-2L) (NTK - NNGP - <x,y> prod kappa0)",
        paper: "Zandieh et al. NeurIPS 2021, Definition 2 (Eqs. 103-108); Arora et al. 2019 CNTK-GAP (depth d = L + 1)",
        params: &[
            ParamDoc {
                name: "depth",
                kind: ParamKind::Int { min: 1, max: 64 },
                default: "2",
                about: "number of convolutional layers L (L = 1 gives the zero kernel)",
            },
            ParamDoc {
                name: "filter",
                kind: ParamKind::Int { min: 1, max: 31 },
                default: "3",
                about: "filter size q (odd)",
            },
            ParamDoc {
                name: "height",
                kind: ParamKind::Int { min: 1, max: 4096 },
                default: "28",
                about: "image height d1",
            },
            ParamDoc {
                name: "width",
                kind: ParamKind::Int { min: 1, max: 4096 },
                default: "28",
                about: "image width d2",
            },
            ParamDoc {
                name: "channels",
                kind: ParamKind::Int { min: 1, max: 4096 },
                default: "1",
                about: "channels c",
            },
        ],
        build: |p| {
            Ok(Box::new(rfx_ntk::Cntk::new(
                p.int("depth")?,
                p.int("filter")?,
                p.int("height")?,
                p.int("width")?,
                p.int("channels")?,
            )?))
        },
    },
];

/// Every exact kernel, in the order `rfx methods` lists them.
pub fn kernels() -> &'static [KernelSpec] {
    KERNELS
}

/// The kernel called `name`; the error lists the allowed names.
pub fn kernel(name: &str) -> Result<&'static KernelSpec, String> {
    KERNELS.iter().find(|k| k.name == name).ok_or_else(|| {
        format!(
            "unknown kernel \"{name}\"; allowed: {}",
            names(KERNELS.iter().map(|k| k.name))
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_check_names_ranges_and_defaults() {
        let spec = method("gegenbauer").unwrap();
        let p = spec.parse_params(&[("degree".into(), "7".into())]).unwrap();
        assert_eq!(p.int("degree").unwrap(), 7);
        assert_eq!(p.int("radial_terms").unwrap(), 4);
        let e = spec
            .parse_params(&[("degre".into(), "7".into())])
            .unwrap_err();
        assert!(
            e.contains("unknown parameter \"degre\"") && e.contains("radial_terms"),
            "{e}"
        );
        let e = spec
            .parse_params(&[("degree".into(), "61".into())])
            .unwrap_err();
        assert!(e.contains("0..=60"), "{e}");
        let e = spec
            .parse_params(&[("kernel".into(), "laplace".into())])
            .unwrap_err();
        assert!(e.contains("gaussian | relu-ntk"), "{e}");
    }

    #[test]
    fn registry_names_are_unique_and_defaults_valid() {
        let mut seen = std::collections::HashSet::new();
        for m in methods() {
            assert!(seen.insert(m.name), "duplicate {}", m.name);
            for d in m.params {
                check_value(d, d.default).unwrap_or_else(|e| panic!("{}.{}: {e}", m.name, d.name));
            }
        }
        for k in kernels() {
            for d in k.params {
                check_value(d, d.default).unwrap_or_else(|e| panic!("{}.{}: {e}", k.name, d.name));
            }
        }
        assert_eq!(
            table_methods(),
            [
                "rff",
                "fastfood",
                "maclaurin",
                "polysketch",
                "gegenbauer",
                "nystrom",
                "ntk-rf",
                "ntk-sketch"
            ]
        );
        let kernels_of = |n: &str| table_kernels(method(n).unwrap());
        assert_eq!(kernels_of("rff"), ["gaussian"]);
        assert_eq!(kernels_of("ntk-rf"), ["relu-ntk"]);
        assert_eq!(kernels_of("nystrom"), ["gaussian", "relu-ntk"]);
        assert!(kernels_of("arccos").is_empty());
    }

    #[test]
    fn method_choice_syntax() {
        let c = MethodChoice::parse("ntk-rf( sampler=gs, sketch = tensorsrht )").unwrap();
        assert_eq!(c.name, "ntk-rf");
        assert_eq!(c.param("sampler"), Some("gs"));
        assert_eq!(c.param("sketch"), Some("tensorsrht"));
        assert!(c.check_table_method().is_ok());
        assert_eq!(MethodChoice::parse("rff").unwrap().params, vec![]);
        for bad in [
            "",
            "ntk-rf(",
            "ntk-rf(sampler)",
            "ntk-rf(sampler=gs",
            "a b",
            "x(k=)",
        ] {
            assert!(MethodChoice::parse(bad).is_err(), "{bad}");
        }
        // names and values are checked against the registry
        let e = MethodChoice::parse("ntk-rf(sampler=bogus)")
            .unwrap()
            .check_table_method()
            .unwrap_err();
        assert!(e.contains("sampler") && e.contains("gs"), "{e}");
        assert!(MethodChoice::parse("arccos")
            .unwrap()
            .check_table_method()
            .is_err());
    }

    /// Every table method of the ReLU NTK, built as the table kinds build it, approximates the exact
    /// kernel on inputs of unequal norms (the NTK is positively homogeneous; each map normalises and
    /// rescales): relative Frobenius error of $ZZ^\top$ below 0.05 at $m = 2\cdot 10^4$ (Monte Carlo
    /// error $\approx c/\sqrt{m/2} \approx 0.01c$ per entry; measured 0.026–0.031 for the unbiased maps),
    /// plus, for NTKSketch, its polynomial fit's sup error relative to $K(1) = 2$.
    #[test]
    fn table_ntk_methods_approximate_the_exact_ntk_off_the_sphere() {
        use rand::Rng;
        let mut rng = rfx_core::rng_stream(7, "ntk-table-check");
        let x = Array2::from_shape_fn((12, 5), |(i, _)| {
            (0.3 + 0.4 * i as f64) * (rng.gen::<f64>() - 0.5)
        });
        let exact = Gzk::relu_ntk(1).unwrap().gram(x.view(), x.view()).unwrap();
        let given = [
            ("kernel", "relu-ntk".to_string()),
            ("depth", "1".to_string()),
            ("radial_terms", "1".to_string()),
        ];
        for name in ["ntk-rf", "ntk-sketch", "gegenbauer", "nystrom"] {
            let mut rng = rfx_core::rng_stream(11, name);
            let map = build_method(name, 20_000, &given, x.view(), &mut rng).unwrap();
            let z = map.transform(x.view()).unwrap();
            let g = z.dot(&z.t());
            let err =
                (&g - &exact).mapv(|v| v * v).sum().sqrt() / exact.mapv(|v| v * v).sum().sqrt();
            // NTKSketch is unbiased for its polynomial P, not for K: add the fit's sup error relative
            // to K(1) = 2 (entries are |x||y|K(cos), the diagonal dominates the Frobenius norm)
            let bias = if name == "ntk-sketch" {
                rfx_ntk::fit_ntk_polynomial(1, 4).unwrap().max_error() / 2.0
            } else {
                0.0
            };
            assert!(err < 0.05 + bias, "{name}: relative error {err}");
        }
        // a method of the other kernel is refused
        let mut rng = rfx_core::rng_stream(11, "rff");
        assert!(build_method("rff", 64, &given, x.view(), &mut rng).is_err());
    }

    /// Rows of unequal norms in 5 dimensions and the same rows with the column β appended, written out.
    fn rows_and_augmented(beta: f64) -> (Array2<f64>, Array2<f64>) {
        use rand::Rng;
        let mut rng = rfx_core::rng_stream(7, "ntk-bias-check");
        let x = Array2::from_shape_fn((12, 5), |(i, _)| {
            (0.3 + 0.4 * i as f64) * (rng.gen::<f64>() - 0.5)
        });
        let aug = Array2::from_shape_fn((12, 6), |(i, j)| if j < 5 { x[[i, j]] } else { beta });
        (x, aug)
    }

    /// The exact kernels with `bias = β` are the NTK (NNGP) of the rows [x, β], for `rfx gram` and for the
    /// table kinds' wrapper; the result is not positively homogeneous, unlike the NTK without bias.
    #[test]
    fn ntk_with_bias_is_the_ntk_of_the_augmented_rows() {
        let beta = 1.5;
        let (x, aug) = rows_and_augmented(beta);
        let x2 = x.mapv(|v| 2.0 * v);
        for (name, direct) in [
            ("ntk", Box::new(ReluNtk::new(2).unwrap()) as Box<dyn Kernel>),
            ("nngp", Box::new(ReluNngp::new(2).unwrap())),
        ] {
            let spec = kernel(name).unwrap();
            let given = [
                ("depth".to_string(), "2".to_string()),
                ("bias".into(), "1.5".into()),
            ];
            let k = spec.build(&spec.parse_params(&given).unwrap()).unwrap();
            let want = direct.gram(aug.view(), aug.view()).unwrap();
            let got = k.gram(x.view(), x.view()).unwrap();
            let err = (&got - &want)
                .mapv(f64::abs)
                .fold(0.0, |a: f64, &b| a.max(b));
            assert!(err < 1e-12, "{name}: {err}");
            // entry by entry and against other rows, too
            let e = k.eval(x.row(3), x.row(7));
            assert!(
                (e - direct.eval(aug.row(3), aug.row(7))).abs() < 1e-12,
                "{name}"
            );
            let cross = k.gram(x2.view(), x.view()).unwrap();
            let homogeneous = got.mapv(|v| 2.0 * v);
            let gap =
                (&cross - &homogeneous).mapv(f64::abs).sum() / homogeneous.mapv(f64::abs).sum();
            assert!(gap > 0.05, "{name}: Θ(2x, y) = 2Θ(x, y) within {gap}");
            // without bias the kernel is positively homogeneous
            let plain = spec
                .build(&spec.parse_params(&given[..1]).unwrap())
                .unwrap();
            let c = plain.gram(x2.view(), x.view()).unwrap();
            let h = plain.gram(x.view(), x.view()).unwrap().mapv(|v| 2.0 * v);
            assert!((&c - &h).mapv(f64::abs).sum() / h.mapv(f64::abs).sum() < 1e-12);
        }
        // the wrapper of the table kinds (a Gzk of the ReLU NTK)
        let gzk = Gzk::relu_ntk(1).unwrap();
        let want = gzk.gram(aug.view(), aug.view()).unwrap();
        let k = with_bias(Box::new(gzk), beta).unwrap();
        let got = k.gram(x.view(), x.view()).unwrap();
        assert!((&got - &want).mapv(f64::abs).sum() < 1e-10);
    }

    /// Every NTK map with `bias = 1` approximates the exact NTK with bias: relative Frobenius error of
    /// $ZZ^\top$ below 0.05 at $m = 2\cdot 10^4$ (Monte Carlo error $\approx c/\sqrt{m/2} \approx 0.01c$ per
    /// entry, as for the maps without bias), plus NTKSketch's polynomial-fit error. The error against the
    /// kernel without bias is large, so the test sees which kernel a map approximates.
    #[test]
    fn ntk_maps_with_bias_approximate_the_ntk_with_bias() {
        let (x, aug) = rows_and_augmented(1.0);
        let exact = Gzk::relu_ntk(1)
            .unwrap()
            .gram(aug.view(), aug.view())
            .unwrap();
        let plain = Gzk::relu_ntk(1).unwrap().gram(x.view(), x.view()).unwrap();
        let rel = |a: &Array2<f64>, b: &Array2<f64>| {
            (a - b).mapv(|v| v * v).sum().sqrt() / b.mapv(|v| v * v).sum().sqrt()
        };
        assert!(rel(&plain, &exact) > 0.2, "{}", rel(&plain, &exact));
        for (name, extra) in [
            ("ntk-rf", None),
            ("ntk-rf", Some(("sampler", "gs"))),
            ("ntk-rf", Some(("sketch", "tensorsrht"))),
            ("ntk-sketch", None),
            ("gegenbauer", None),
        ] {
            let mut given = vec![
                ("kernel", "relu-ntk".to_string()),
                ("depth", "1".to_string()),
                ("radial_terms", "1".to_string()),
                ("bias", "1".to_string()),
            ];
            if let Some((k, v)) = extra {
                given.push((k, v.to_string()));
            }
            let mut rng = rfx_core::rng_stream(11, name);
            let map = build_method(name, 20_000, &given, x.view(), &mut rng).unwrap();
            assert_eq!(map.input_dim(), 5);
            let z = map.transform(x.view()).unwrap();
            let err = rel(&z.dot(&z.t()), &exact);
            let fit = if name == "ntk-sketch" {
                rfx_ntk::fit_ntk_polynomial(1, 4).unwrap().max_error() / 2.0
            } else {
                0.0
            };
            assert!(err < 0.05 + fit, "{name} {extra:?}: relative error {err}");
        }
    }

    /// `bias = 0` is the method without the parameter, bit for bit (same stream, same features); bad values
    /// are refused with the parameter's range.
    #[test]
    fn bias_zero_changes_nothing_and_bad_values_are_refused() {
        let (x, _) = rows_and_augmented(0.0);
        for name in ["ntk-rf", "ntk-sketch", "gegenbauer"] {
            let base = vec![
                ("kernel", "relu-ntk".to_string()),
                ("depth", "1".to_string()),
                ("radial_terms", "1".to_string()),
            ];
            let mut zero = base.clone();
            zero.push(("bias", "0".to_string()));
            let z = |given: &[(&str, String)]| {
                let mut rng = rfx_core::rng_stream(3, name);
                build_method(name, 64, given, x.view(), &mut rng)
                    .unwrap()
                    .transform(x.view())
                    .unwrap()
            };
            assert_eq!(z(&base), z(&zero), "{name}");
            let spec = method(name).unwrap();
            for bad in ["-1", "abc", "inf", "NaN", "1e7"] {
                let e = spec
                    .parse_params(&[("bias".into(), bad.into())])
                    .unwrap_err();
                assert!(e.contains("bias") && e.contains("[0, 1000000]"), "{e}");
            }
        }
        let spec = kernel("ntk").unwrap();
        let k0 = spec
            .build(&spec.parse_params(&[("bias".into(), "0".into())]).unwrap())
            .unwrap();
        let k = spec.build(&spec.parse_params(&[]).unwrap()).unwrap();
        assert_eq!(
            k0.gram(x.view(), x.view()).unwrap(),
            k.gram(x.view(), x.view()).unwrap()
        );
        // the unit-norm fast path cannot take a bias
        let mut rng = rfx_core::rng_stream(3, "unit");
        let given = [("unit_norm", "true".to_string()), ("bias", "1".to_string())];
        let e = build_method("gegenbauer", 64, &given, x.view(), &mut rng)
            .err()
            .expect("refused");
        assert!(e.contains("bias") && e.contains("unit_norm"), "{e}");
    }

    #[test]
    fn grad_rf_width_is_the_widest_network_within_the_budget() {
        assert_eq!(grad_rf_width(1024, 784, 1), Some(1));
        assert_eq!(grad_rf_width(16_384, 784, 1), Some(20)); // 785 * 20 = 15,700
        assert_eq!(grad_rf_width(784, 784, 1), None);
        assert_eq!(grad_rf_width(100, 10, 2), Some(5)); // 10w + w^2 + w: 80 at w = 5, 102 at w = 6
        let mut rng = rfx_core::rng_stream(1, "grad-rf");
        let x = Array2::from_elem((3, 10), 0.1);
        let map =
            build_method("grad-rf", 100, &[("depth", "2".into())], x.view(), &mut rng).unwrap();
        assert_eq!(map.dim(), 80);
    }
}
