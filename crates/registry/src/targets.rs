//! Which method approximates which kernel: the relation "method $M$ with parameters $p$ approximates kernel $K$"
//! declared once, for the cross-paper benchmark (issue 31) and anything else that needs it.
//!
//! [`kernel_targets`] lists the benchmark's kernels — Gaussian with bandwidth $\sigma$, arc-cosine of order 0 and
//! 1, the depth-$L$ ReLU NTK ($L = 1, 2, 3$) without and with a first-layer bias ($\beta = 1$), the polynomial
//! kernel $(\langle x, y\rangle + 1)^2$ — each as a registry [`KernelSpec`] with its parameters, and, for each,
//! the [`MethodTarget`]s: registry methods with the parameters under which
//! $\mathbb{E}\thinspace\langle z(x), z(y)\rangle$ is that kernel ([`Approx::Unbiased`]), a truncation of it
//! ([`Approx::Biased`]: Taylor or Gegenbauer series, polynomial fits), or, for Nyström, the kernel itself once
//! the landmarks span the rows ([`Approx::Landmarks`]). A method whose expectation is a multiple $c\thinspace k$
//! (ReLU features: half the order-1 arc-cosine kernel) is listed with the scale $1/c$ applied to its Gram,
//! i.e. its features multiplied by $c^{-1/2}$ ([`MethodTarget::fit`]).
//!
//! Parameters are checked strictly against the method's declaration ([`MethodSpec::params_from`], not
//! [`MethodSpec::params_declared`]): a relation that named a parameter the method does not have (a `bias` for a
//! map without one) would fail instead of silently approximating another kernel. The tests
//! (`crates/registry/src/tests.rs`) check every pair: the map's Gram at large $m$ against the exact Gram, and every
//! exact Gram against an independent computation.

use crate::RegistryError;
use ndarray::{Array2, ArrayView2};
use rfx_core::{FeatureMap, Fit, FitData, Kernel, RfxRng};

use crate::kernels::{kernel, KernelSpec};
use crate::methods::{method, BoxedMap, MethodSpec};
use crate::params::{Params, RawValue};

/// How a method's Gram relates to its kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approx {
    /// $\mathbb{E}\thinspace ZZ^\top = K$ (Monte Carlo, quasi-Monte Carlo or sketch error only).
    Unbiased,
    /// Unbiased for a truncation of $K$ (a degree-$q$ Taylor or Gegenbauer series, a polynomial fit, GQ's
    /// three-point rule) or, for LP-RFF, off the diagonal (the rounding noise adds its variance to
    /// $\Vert z(x)\Vert^2$): a bias that does not shrink with $m$.
    Biased,
    /// Hadamard-structured or lattice frequencies (SORF, ROM; GQ's three-point rule on the arc-cosine kernels,
    /// which is not rotation invariant): unbiased only as the dimension grows (Yu et al. 2016, Theorem 5:
    /// bias $O(1/\sqrt d)$), with no useful bound at small $d$.
    Structured,
    /// Nyström: $K_{XS}K_{SS}^{+}K_{SX}$, equal to $K$ on the rows once the landmarks $S$ span them.
    Landmarks,
    /// Ternary random features (Tiomoko Ali, Liao & Couillet, ICLR 2022, Theorem 1 and Corollary 1): their
    /// expected Gram $K_{ter}$ matches $K$ only after centring and up to a shift,
    /// $PK_{ter}P \approx PKP + \lambda P$ with $P = I - \frac1n\mathbf 1\mathbf 1^\top$, and only for
    /// Gaussian-mixture data as the dimension and the number of rows grow together. Their uncentred Gram
    /// error measures something they do not claim; compare them on
    /// `rfx_solvers::spectral::centred_kernel_errors`.
    Asymptotic,
}

/// One method of a kernel: a registry method, its parameters, how it approximates the kernel.
#[derive(Debug, Clone)]
pub struct MethodTarget {
    /// Label in the benchmark (unique among the methods of one kernel; the same label means the same
    /// construction across kernels).
    pub label: &'static str,
    /// Registry method name.
    pub method: &'static str,
    /// Its parameters (checked strictly against the method's declaration).
    pub params: Vec<(&'static str, RawValue)>,
    /// The factor applied to the map's Gram ($1/c$ when $\mathbb{E}\thinspace ZZ^\top = cK$; 1 otherwise).
    pub scale: f64,
    /// How the Gram approximates the kernel.
    pub approx: Approx,
    /// The factor the rows are multiplied by before the map is fitted and applied (1 except for maps of a
    /// unit-bandwidth kernel used at bandwidth $\sigma$: $1/\sigma$).
    pub input_scale: f64,
}

impl MethodTarget {
    /// The registry entry.
    pub fn spec(&self) -> Result<&'static MethodSpec, RegistryError> {
        method(self.method)
    }

    /// The checked parameters (an undeclared or out-of-range parameter is an error).
    pub fn checked(&self) -> Result<Params, RegistryError> {
        self.spec()?.params_from(&self.params)
    }

    /// Fits the map with budget $m$ on the rows `fit` (data-oblivious methods use their dimension only),
    /// every draw from `rng`; with [`MethodTarget::scale`] $\ne 1$ the features are multiplied by
    /// $\sqrt{\text{scale}}$.
    pub fn fit(
        &self,
        m: usize,
        fit: ArrayView2<'_, f64>,
        rng: &mut RfxRng,
    ) -> Result<BoxedMap, RegistryError> {
        let spec = self.spec()?;
        let p = self.checked()?;
        let scaled_rows = (self.input_scale != 1.0).then(|| &fit * self.input_scale);
        let fit = scaled_rows.as_ref().map_or(fit.reborrow(), |a| a.view());
        let data = if spec.data_dependent {
            FitData::Rows(fit)
        } else {
            FitData::Dim(fit.ncols())
        };
        let fail = |source: rfx_core::RfxError| RegistryError::Fit {
            owner: format!("method {} ({})", self.label, self.method),
            source,
        };
        let map = if self.method == "ternary" {
            // the same draws as `spec.fit`, but typed, to refuse a fit whose thresholds were only
            // feasible after rescaling the data: that map would match another bandwidth
            let f = crate::methods::ternary_fit(m, &p)
                .map_err(fail)?
                .fit_map(data, rng)
                .map_err(fail)?;
            if f.input_scale() != 1.0 {
                return Err(RegistryError::RescaledTernary {
                    label: self.label.to_string(),
                    tau: rfx_ternary::estimate_tau(fit).map_err(fail)?,
                    scale: f.input_scale(),
                });
            }
            Box::new(f) as BoxedMap
        } else {
            spec.fit(m, &p, data, rng).map_err(fail)?
        };
        if self.scale == 1.0 && self.input_scale == 1.0 {
            Ok(map)
        } else {
            Ok(Box::new(Scaled {
                map,
                factor: self.scale.sqrt(),
                input_scale: self.input_scale,
            }))
        }
    }
}

/// A map applied to the rows multiplied by `input_scale`, its features multiplied by `factor` (its Gram by
/// the square).
struct Scaled {
    map: BoxedMap,
    factor: f64,
    input_scale: f64,
}

impl FeatureMap for Scaled {
    fn input_dim(&self) -> usize {
        self.map.input_dim()
    }
    fn dim(&self) -> usize {
        self.map.dim()
    }
    fn transform(&self, x: ArrayView2<'_, f64>) -> rfx_core::Result<Array2<f64>> {
        let z = if self.input_scale == 1.0 {
            self.map.transform(x)?
        } else {
            self.map.transform((&x * self.input_scale).view())?
        };
        Ok(if self.factor == 1.0 {
            z
        } else {
            z * self.factor
        })
    }
    fn bits_per_feature(&self) -> f64 {
        self.map.bits_per_feature()
    }
}

/// One kernel of the benchmark with the methods that approximate it.
#[derive(Debug, Clone)]
pub struct KernelTarget {
    /// Label in the benchmark (`gaussian`, `arccos0`, `arccos1`, `ntk1` … `ntk3`, `ntk1-bias` …, `poly2`).
    pub label: String,
    /// Registry kernel name.
    pub kernel: &'static str,
    /// Its parameters.
    pub params: Vec<(&'static str, RawValue)>,
    /// The methods that approximate it, in a fixed order.
    pub methods: Vec<MethodTarget>,
}

impl KernelTarget {
    /// The registry entry.
    pub fn spec(&self) -> Result<&'static KernelSpec, RegistryError> {
        kernel(self.kernel)
    }

    /// The exact kernel.
    pub fn build(&self) -> Result<Box<dyn Kernel>, RegistryError> {
        let spec = self.spec()?;
        let p = spec.params_from(&self.params)?;
        spec.build(&p).map_err(|source| RegistryError::Fit {
            owner: format!("kernel {}", self.label),
            source,
        })
    }

    /// The method labelled `label`, if it approximates this kernel.
    pub fn method(&self, label: &str) -> Option<&MethodTarget> {
        self.methods.iter().find(|m| m.label == label)
    }
}

fn t(
    label: &'static str,
    method: &'static str,
    params: &[(&'static str, RawValue)],
    approx: Approx,
) -> MethodTarget {
    MethodTarget {
        label,
        method,
        params: params.to_vec(),
        scale: 1.0,
        approx,
        input_scale: 1.0,
    }
}

/// The survey's samplers of `kernel` (`gaussian` with `sigma`, `arccos0`, `arccos1`): the five Fourier samplers
/// and ROM, SSF, GQ, leverage-score RFF. GQ's three-point rule is exact for polynomials of degree ≤ 5 only
/// (biased at 6th order, survey Eq. 17), hence [`Approx::Biased`] for the Gaussian kernel and
/// [`Approx::Structured`] for the arc-cosine kernels; SORF and ROM are [`Approx::Structured`].
fn survey_samplers(kernel: &'static str, sigma: Option<f64>) -> Vec<MethodTarget> {
    let mut base = vec![("kernel", RawValue::from(kernel))];
    if let Some(s) = sigma {
        base.push(("sigma", RawValue::from(s)));
    }
    let mut out = Vec::new();
    for name in [
        "rff", "orf", "sorf", "fastfood", "qmc", "rom", "ssf", "gq", "ls-rff",
    ] {
        let approx = match name {
            "gq" if sigma.is_some() => Approx::Biased,
            "gq" | "sorf" | "rom" => Approx::Structured,
            _ => Approx::Unbiased,
        };
        let mut params = base.clone();
        if name == "ls-rff" {
            // leverage scores on 500 fitting rows, as the survey benchmark (survey-benchmark.toml)
            params.push(("ls_rows", RawValue::from(500usize)));
        }
        out.push(t(name, name, &params, approx));
    }
    out
}

/// The kernel labels of [`kernel_targets`], in order.
pub const KERNEL_LABELS: [&str; 10] = [
    "gaussian",
    "arccos0",
    "arccos1",
    "ntk1",
    "ntk2",
    "ntk3",
    "ntk1-bias",
    "ntk2-bias",
    "ntk3-bias",
    "poly2",
];

/// Every kernel of the benchmark with the methods that approximate it (the Gaussian kernel with bandwidth
/// `sigma`), in the order of [`KERNEL_LABELS`].
pub fn kernel_targets(sigma: f64) -> Vec<KernelTarget> {
    use Approx::*;
    let s = RawValue::from(sigma);
    let mut out = Vec::new();

    // Gaussian: the survey's samplers, random-phase RFF and its low-precision rounding, the Taylor-series
    // maps, random Gegenbauer features, Nyström
    let mut g = survey_samplers("gaussian", Some(sigma));
    let gk = [("kernel", RawValue::from("gaussian")), ("sigma", s.clone())];
    g.extend([
        t(
            "rff-phase",
            "rff",
            &[("sigma", s.clone()), ("phase", RawValue::from("random"))],
            Unbiased,
        ),
        t(
            "lp-rff-8",
            "lp-rff",
            &[("sigma", s.clone()), ("bits", RawValue::from(8usize))],
            Biased,
        ),
        t(
            "lp-rff-2",
            "lp-rff",
            &[("sigma", s.clone()), ("bits", RawValue::from(2usize))],
            Biased,
        ),
        t("maclaurin", "maclaurin", &gk, Biased),
        t("polysketch", "polysketch", &gk, Biased),
        t("gegenbauer", "gegenbauer", &gk, Biased),
        t("nystrom", "nystrom", &gk, Landmarks),
        t(
            "nystrom-uniform",
            "nystrom",
            &[
                gk[0].clone(),
                gk[1].clone(),
                ("landmarks", RawValue::from("uniform")),
            ],
            Landmarks,
        ),
        // ternary features matched to [cos, sin] (the unit-bandwidth Gaussian kernel, their paper's
        // footnote 8) on the rows divided by σ
        MethodTarget {
            input_scale: 1.0 / sigma,
            ..t(
                "ternary",
                "ternary",
                &[("activation", RawValue::from("cos-sin"))],
                Asymptotic,
            )
        },
    ]);
    out.push(KernelTarget {
        label: "gaussian".into(),
        kernel: "gaussian",
        params: vec![("sigma", s)],
        methods: g,
    });

    // arc-cosine kernels: the survey's samplers and the NTK paper's arc-cosine features (Gaussian and
    // leverage-score weights); order 1 also ReLU features, whose expectation is half the kernel
    for order in [0usize, 1] {
        let name = if order == 0 { "arccos0" } else { "arccos1" };
        let mut a = survey_samplers(name, None);
        let o = ("order", RawValue::from(order));
        a.push(t("arccos", "arccos", std::slice::from_ref(&o), Unbiased));
        if order == 1 {
            // the leverage-score law is defined for order 1 only (Han et al. 2021, Sec. 4)
            a.push(t(
                "arccos-gs",
                "arccos",
                &[o, ("sampler", RawValue::from("gs"))],
                Unbiased,
            ));
            a.push(MethodTarget {
                scale: 2.0,
                ..t("relu-rf", "relu-rf", &[], Unbiased)
            });
            // ternary features matched to the ReLU: E σ(wᵀx)σ(wᵀy) is half the kernel, as for ReLU features
            a.push(MethodTarget {
                scale: 2.0,
                ..t(
                    "ternary",
                    "ternary",
                    &[("activation", RawValue::from("relu"))],
                    Asymptotic,
                )
            });
        }
        out.push(KernelTarget {
            label: name.into(),
            kernel: name,
            params: vec![],
            methods: a,
        });
    }

    // ReLU NTK of depth 1-3, without and with a first-layer bias
    for bias in [false, true] {
        for depth in 1usize..=3 {
            let d = ("depth", RawValue::from(depth));
            let b = ("bias", RawValue::from(1.0));
            let with = |mut v: Vec<(&'static str, RawValue)>| {
                if bias {
                    v.push(b.clone());
                }
                v
            };
            let ntk = ("kernel", RawValue::from("relu-ntk"));
            let mut n = vec![
                t("ntk-rf", "ntk-rf", &with(vec![d.clone()]), Unbiased),
                t(
                    "ntk-rf-srht",
                    "ntk-rf",
                    &with(vec![
                        d.clone(),
                        ("sketch", RawValue::from("tensorsrht")),
                        ("sampler", RawValue::from("gs")),
                    ]),
                    Unbiased,
                ),
                t("ntk-sketch", "ntk-sketch", &with(vec![d.clone()]), Biased),
                t(
                    "gegenbauer",
                    "gegenbauer",
                    &with(vec![ntk.clone(), d.clone()]),
                    Biased,
                ),
            ];
            if !bias {
                // maps without a bias parameter
                n.extend([
                    t("grad-rf", "grad-rf", std::slice::from_ref(&d), Unbiased),
                    t("naive-rf", "naive-rf", std::slice::from_ref(&d), Unbiased),
                    t("maclaurin", "maclaurin", &[ntk.clone(), d.clone()], Biased),
                    t(
                        "polysketch",
                        "polysketch",
                        &[ntk.clone(), d.clone()],
                        Biased,
                    ),
                    t("nystrom", "nystrom", &[ntk.clone(), d.clone()], Landmarks),
                    t(
                        "nystrom-uniform",
                        "nystrom",
                        &[
                            ntk.clone(),
                            d.clone(),
                            ("landmarks", RawValue::from("uniform")),
                        ],
                        Landmarks,
                    ),
                ]);
            }
            let mut params = vec![d];
            if bias {
                params.push(b);
            }
            out.push(KernelTarget {
                label: if bias {
                    format!("ntk{depth}-bias")
                } else {
                    format!("ntk{depth}")
                },
                kernel: "ntk",
                params,
                methods: n,
            });
        }
    }

    // (<x, y> + 1)^2: the sketches of x ⊗ x on the rows [x, 1], Random Maclaurin of the polynomial
    let two = ("degree", RawValue::from(2usize));
    let one = ("bias", RawValue::from(1.0));
    out.push(KernelTarget {
        label: "poly2".into(),
        kernel: "polynomial",
        params: vec![two.clone(), ("c", RawValue::from(1.0))],
        methods: vec![
            t(
                "tensorsketch",
                "tensorsketch",
                &[two.clone(), one.clone()],
                Unbiased,
            ),
            t("trp", "trp", &[two.clone(), one.clone()], Unbiased),
            t("tensorsrht", "tensorsrht", &[one], Unbiased),
            t(
                "maclaurin",
                "maclaurin",
                &[("kernel", RawValue::from("poly")), two],
                Unbiased,
            ),
        ],
    });
    out
}

/// The kernel labelled `label` of [`kernel_targets`]`(sigma)`; the error lists the labels.
pub fn kernel_target(label: &str, sigma: f64) -> Result<KernelTarget, RegistryError> {
    kernel_targets(sigma)
        .into_iter()
        .find(|k| k.label == label)
        .ok_or_else(|| RegistryError::UnknownKernel {
            name: label.to_string(),
            allowed: KERNEL_LABELS.join(", "),
        })
}

/// Every method label of [`kernel_targets`], each once, in first-appearance order.
pub fn method_labels() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for k in kernel_targets(1.0) {
        for m in k.methods {
            if !out.contains(&m.label) {
                out.push(m.label);
            }
        }
    }
    out
}
