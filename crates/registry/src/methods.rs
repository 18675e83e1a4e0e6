//! The feature maps of the registry: one [`MethodSpec`] per map, with its parameters, paper and
//! equation, output width rule, and the composition of the algorithm crates that fits it. The table kinds
//! choose methods by [`MethodChoice`] (`name` or `name(k=v, ...)`) and fit them with [`build_method`].

use ndarray::ArrayView2;
use rfx_core::{append_bias, FeatureMap, Fit, FitData, RfxError, RfxRng, WithBias};
use rfx_gzk::zonal::Gzk;
use rfx_gzk::RandomGegenbauerParams;
use rfx_kernels::ArcCosineOrder;
use rfx_ntk::{
    ArcCosineFeatures, CnnGradRf, CnnGradRfParams, CntkSketch, GradRf, NaiveRf, NtkRfParams,
    NtkSketch, PairSketch, Sampler,
};
use rfx_sampling::{
    FourierMethod, GaussianFeatureParams, Sampler as Sampler_, SurveyKernel, SurveyParams,
};
use rfx_sketches::{PolynomialSketch, RandomMaclaurin, TensorSketch, TensorSrht, Trp};
use rfx_solvers::nystrom::{LandmarkSampling, NystromFit, NystromParams};
use rfx_ternary::{Activation, ReluParams, StreamRoundedLpRff, TernaryFit, TernaryParams};

use crate::params::{ParamDoc, ParamKind, Params, RawValue};
use crate::RegistryError;
use rfx_core::NormScaled;

/// A fitted feature map with the method's output dimension.
pub type BoxedMap = Box<dyn FeatureMap>;

/// How a method is fitted: budget $m$, checked parameters, what it is fitted on (the input dimension, or
/// rows for data-dependent maps), random stream.
type BuildFn =
    fn(m: usize, p: &Params, data: FitData<'_>, rng: &mut RfxRng) -> rfx_core::Result<BoxedMap>;

/// One feature map of the registry.
pub struct MethodSpec {
    /// Name used by `--method` and by the TOML `method` sweep.
    pub name: &'static str,
    /// The method's colour in every figure of the report: an index into the plots' palette
    /// (`rfx_harness::plot::PALETTE`, Tableau 20 plus black, dark grey and violet), chosen by family —
    /// Fourier samplers blue/orange/green/red and their variants the light shades, exact kernels black,
    /// Nyström dark grey, the papers' proposals purple and red, baselines olive, brown and grey. Two methods
    /// may share an index if they never share a figure; a figure that draws both moves the second to the next
    /// free colour.
    pub colour: usize,
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
    /// Checks `--param` text pairs (`name`, `value`) for this method, once.
    pub fn parse_params(&self, given: &[(String, String)]) -> Result<Params, RegistryError> {
        Params::parse_text(self.params, given, &format!("method {}", self.name))
    }

    /// Checks typed or text values for this method, once.
    pub fn params_from<K: AsRef<str>>(
        &self,
        given: &[(K, RawValue)],
    ) -> Result<Params, RegistryError> {
        Params::parse(self.params, given, &format!("method {}", self.name))
    }

    /// An upper estimate of the `f64` values a map fitted with budget `m` on `d` input columns and `n_fit`
    /// fitting rows holds while it is fitted and kept (random weights, the fitting temporaries), for the
    /// memory check the commands make *before* fitting: $2\thinspace w\thinspace(d_2 + 1)(1 + L)$ with
    /// $w = \max(m, \text{out\_dim})$, $d_2$ the power of two $\ge d + 1$ (the Hadamard maps pad to it) and
    /// $L$ the depth (0 without one); leverage-score RFF adds its pool's features on the leverage rows, and
    /// Nyström its $s = \min(m, n_\text{fit})$ landmarks' $s \times s$ and $n_\text{fit} \times s$ matrices.
    /// Saturates instead of overflowing.
    pub fn memory_f64s(&self, m: usize, d: usize, n_fit: usize, p: &Params) -> u128 {
        let out = (self.out_dim)(m, n_fit, p) as u128;
        let w = (m as u128).max(out);
        let d2 = (d as u128)
            .saturating_add(1)
            .checked_next_power_of_two()
            .unwrap_or(u128::MAX);
        let depth = if p.has("depth") {
            p.int("depth").unwrap_or(0) as u128
        } else {
            0
        };
        let mut total = w
            .saturating_mul(2)
            .saturating_mul(d2.saturating_add(1))
            .saturating_mul(depth + 1);
        if p.has("pool_factor") {
            let pool = w.saturating_mul(p.int("pool_factor").unwrap_or(1) as u128);
            let rows = p.int("ls_rows").unwrap_or(n_fit).min(n_fit) as u128;
            total = total
                .saturating_add(pool.saturating_mul(d2.saturating_add(rows).saturating_mul(2)));
        }
        if self.data_dependent {
            let s = (m.min(n_fit)) as u128;
            let n = n_fit as u128;
            total = total
                .saturating_add(s.saturating_mul(s).saturating_mul(4))
                .saturating_add(
                    n.saturating_mul(s.saturating_add(d as u128))
                        .saturating_mul(2),
                );
        }
        total
    }

    /// Checks the values among `given` that this method declares, once, dropping the others (so that a
    /// kind can offer its settings to every method: `rom_blocks` reaches `rom` only).
    pub fn params_declared(&self, given: &[(&str, RawValue)]) -> Result<Params, RegistryError> {
        let declared: Vec<(&str, RawValue)> = given
            .iter()
            .filter(|(k, _)| self.params.iter().any(|d| d.name == *k))
            .map(|(k, v)| (*k, v.clone()))
            .collect();
        self.params_from(&declared)
    }

    /// Fits the map with budget $m$ on `data`: the input dimension, or the fitting rows (required by
    /// data-dependent methods). Every random draw comes from `rng`. With a parameter `bias` β > 0 the map
    /// of the rows $[x, \beta]$ ([`rfx_core::WithBias`]), fitted on the augmented rows.
    pub fn fit(
        &self,
        m: usize,
        p: &Params,
        data: FitData<'_>,
        rng: &mut RfxRng,
    ) -> rfx_core::Result<BoxedMap> {
        if m == 0 {
            return Err(RfxError::invalid("dim", m, "an integer >= 1"));
        }
        let d = data.dim();
        if d == 0 {
            return Err(RfxError::invalid("input dimension", d, "at least 1 column"));
        }
        match data {
            FitData::Rows(x) if x.nrows() == 0 => {
                return Err(RfxError::DimensionMismatch(format!(
                    "fitting data has 0 rows and {d} columns, expected >= 1 row"
                )))
            }
            FitData::Dim(_) if self.data_dependent => {
                return Err(RfxError::invalid(
                    "fit data",
                    "none",
                    format!("rows to fit {} on", self.name),
                ))
            }
            _ => {}
        }
        let beta = bias_of(self.params, p)?;
        if beta == 0.0 {
            return (self.build)(m, p, data, rng);
        }
        // with a bias: the map of the (d + 1)-dimensional inputs [x, β], fitted on the augmented rows
        if p.has("unit_norm") && p.flag("unit_norm")? {
            return Err(RfxError::invalid(
                "bias",
                beta,
                "0 with unit_norm=true (rows [x, beta] do not have norm 1)",
            ));
        }
        let inner = match data {
            FitData::Rows(x) => {
                let aug = append_bias(x, beta);
                (self.build)(m, p, FitData::Rows(aug.view()), rng)?
            }
            FitData::Dim(d) => (self.build)(m, p, FitData::Dim(d + 1), rng)?,
        };
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
/// The depth $L \ge 1$ (hidden layers) of the ReLU NTK of the NTK maps (`ntk-rf`, `ntk-sketch`) and of the
/// table kinds' `exact(kernel=relu-ntk, depth=L)`.
pub const NTK_DEPTH: ParamDoc = ParamDoc {
    name: "depth",
    kind: ParamKind::Int { min: 1, max: 8 },
    default: "1",
    about: "NTK depth L",
};
/// The degree $p$ of the sketches of $\langle x, y\rangle^p$ (`tensorsketch`, `trp`).
const POLY_DEGREE: ParamDoc = ParamDoc {
    name: "degree",
    kind: ParamKind::Int { min: 1, max: 16 },
    default: "2",
    about: "polynomial degree p",
};
pub(crate) const GAUSSIAN_ONLY: &[ParamDoc] = &[SIGMA];

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

fn ntk_taylor(depth: usize, q: usize) -> Vec<f64> {
    // tiny negative round-off would be rejected by the sketches; the coefficients are >= 0 (Schoenberg)
    rfx_gzk::ntk::relu_ntk_taylor(depth, q)
        .into_iter()
        .map(|c| c.max(0.0))
        .collect()
}

fn even_floor(m: usize) -> usize {
    m & !1
}

fn gaussian_family(
    method: FourierMethod,
    m: usize,
    p: &Params,
    data: FitData<'_>,
    rng: &mut RfxRng,
) -> rfx_core::Result<BoxedMap> {
    GaussianFeatureParams::new(method)
        .dim(m)
        .sigma(p.float("sigma")?)
        .fit_boxed(data, rng)
}

fn polysketch_per_degree(m: usize, p: usize) -> usize {
    (((m.saturating_sub(1)) / p) / 2 * 2).max(2)
}

fn gegenbauer_radial(p: &Params) -> rfx_core::Result<usize> {
    let unit = p.flag("unit_norm")?;
    Ok(if unit || p.choice("kernel")? == "relu-ntk" {
        1
    } else {
        p.int("radial_terms")?
    })
}

// ---------------------------------------------------------------- the convolutional NTK maps

const IMAGE_HEIGHT: ParamDoc = ParamDoc {
    name: "height",
    kind: ParamKind::Int { min: 0, max: 4096 },
    default: "0",
    about: "image height d1 (rows are images of d1 x d2 pixels with c channels, height-width-channel order; 0: from the input dimension, the most nearly square d1 <= d2 when width is 0 too)",
};
const IMAGE_WIDTH: ParamDoc = ParamDoc {
    name: "width",
    kind: ParamKind::Int { min: 0, max: 4096 },
    default: "0",
    about: "image width d2 (0: from the input dimension and the height)",
};
/// The channels $c$ of image rows (the convolutional maps and the `cntk` kernel).
pub(crate) const IMAGE_CHANNELS: ParamDoc = ParamDoc {
    name: "channels",
    kind: ParamKind::Int { min: 1, max: 4096 },
    default: "1",
    about: "channels c",
};
const CONV_FILTER: ParamDoc = ParamDoc {
    name: "filter",
    kind: ParamKind::Int { min: 1, max: 15 },
    default: "3",
    about: "filter size q (odd; same padding)",
};

/// The image shape $(d_1, d_2, c)$ of rows of dimension $d$ from the parameters `height`, `width`, `channels`
/// (a zero height or width is inferred: $d_1 d_2 = d / c$, the most nearly square $d_1 \le d_2$ when both
/// are 0).
fn image_shape(p: &Params, d: usize) -> rfx_core::Result<(usize, usize, usize)> {
    let (h, w, c) = (p.int("height")?, p.int("width")?, p.int("channels")?);
    if d % c != 0 {
        return Err(RfxError::invalid(
            "channels",
            c,
            format!("a divisor of the input dimension {d}"),
        ));
    }
    let pixels = d / c;
    let (h, w) = match (h, w) {
        (0, 0) => {
            let h = (1..=pixels)
                .take_while(|k| k * k <= pixels)
                .filter(|k| pixels % k == 0)
                .last()
                .unwrap_or(1);
            (h, pixels / h)
        }
        (0, w) if pixels % w == 0 => (pixels / w, w),
        (h, 0) if pixels % h == 0 => (h, pixels / h),
        (h, w) if h * w == pixels => (h, w),
        _ => {
            let allowed = format!("height x width x {c} = the input dimension {d} (0: inferred)");
            return Err(RfxError::invalid(
                "height/width",
                format!("{h}/{w}"),
                allowed,
            ));
        }
    };
    Ok((h, w, c))
}

/// The internal width of CNTKSketch for budget $m$: $w = \max(2, $ even floor of $m / \text{div})$.
fn cntk_sketch_width(m: usize, div: usize) -> usize {
    even_floor(m / div.max(1)).max(2)
}

/// The parameters of CNN Grad-RF for budget $m$ on images of `shape`: the width whose parameter count is
/// closest to $m$ ([`rfx_ntk::CnnGradRfParams::closest_width`]).
fn cnn_grad_rf_params(
    m: usize,
    p: &Params,
    shape: (usize, usize, usize),
) -> rfx_core::Result<CnnGradRfParams> {
    Ok(CnnGradRf::params()
        .shape(shape.0, shape.1, shape.2)
        .filter(p.int("filter")?)
        .layers(p.int("layers")?)
        .closest_width(m))
}

// ---------------------------------------------------------------- ternary features

/// The `ternary` method with budget $m$ and parameters `p` (checked by its [`MethodSpec`]) as its typed fitter:
/// [`rfx_core::Fit::fit_map`] on the fitting rows gives the [`rfx_ternary::TernaryFeatures`] themselves, with
/// their bit-packed codes ([`rfx_ternary::TernaryFeatures::transform_packed`], popcount Grams), where
/// [`MethodSpec::fit`] gives the same map (the same draws from the same stream) boxed, as floating-point
/// features.
pub fn ternary_fit(m: usize, p: &Params) -> rfx_core::Result<TernaryFit> {
    let target = match p.choice("activation")? {
        "abs" => Activation::Abs,
        "cos" => Activation::Cos,
        "cos-sin" => Activation::CosSin,
        "exp" => Activation::Exp,
        "erf" => Activation::Erf,
        "gauss-bump" => Activation::GaussBump,
        _ => Activation::Relu,
    };
    Ok(TernaryFit {
        params: TernaryParams::new(m).sparsity(p.float("sparsity")?),
        target,
    })
}

// ---------------------------------------------------------------- the survey's samplers

const SURVEY_KERNEL: ParamDoc = ParamDoc {
    name: "kernel",
    kind: ParamKind::Choice(&["gaussian", "arccos0", "arccos1"]),
    default: "gaussian",
    about: "kernel approximated: Gaussian (uses sigma; features [cos, sin], m even) or arc-cosine of order 0/1 (kappa(1) = 1; m features)",
};

/// The survey kernel of parameters with [`SURVEY_KERNEL`] and [`SIGMA`].
fn survey_kernel(p: &Params) -> rfx_core::Result<SurveyKernel> {
    Ok(match p.choice("kernel")? {
        "arccos0" => SurveyKernel::ArcCos0,
        "arccos1" => SurveyKernel::ArcCos1,
        _ => SurveyKernel::Gaussian {
            sigma: p.float("sigma")?,
        },
    })
}

/// Frequencies $s$ for a budget of $m$ features: $\lfloor m/2\rfloor$ for the paired Gaussian features
/// ($2s$ columns), $m$ for the arc-cosine ones.
fn survey_frequencies(m: usize, p: &Params) -> rfx_core::Result<usize> {
    Ok(match survey_kernel(p)? {
        SurveyKernel::Gaussian { .. } => m / 2,
        _ => m,
    })
}

/// A sampler of the survey's benchmark ([`rfx_sampling::survey`]) with the knobs its parameters declare.
fn survey_map(
    sampler: Sampler_,
    m: usize,
    p: &Params,
    data: FitData<'_>,
    rng: &mut RfxRng,
) -> rfx_core::Result<BoxedMap> {
    let mut sp =
        SurveyParams::new(sampler, survey_kernel(p)?).frequencies(survey_frequencies(m, p)?);
    if p.has("rom_blocks") {
        sp = sp.rom_blocks(p.int("rom_blocks")?);
    }
    if p.has("ssf_sweeps") {
        sp = sp.ssf_sweeps(p.int("ssf_sweeps")?);
    }
    if p.has("pool_factor") {
        sp = sp.leverage(
            p.int("pool_factor")?,
            p.int("ls_rows")?,
            p.float("ls_lambda")?,
        );
    }
    sp.fit_boxed(data, rng)
}

fn survey_out_dim(m: usize, p: &Params) -> usize {
    match p.choice("kernel") {
        Ok("arccos0" | "arccos1") => m,
        _ => even_floor(m),
    }
}

/// The width of a Fourier sampler: $m$ in the `fourier` form (whose fit checks that $m$ is even), the
/// survey's width otherwise.
fn fourier_out_dim(m: usize, p: &Params) -> usize {
    match (p.choice("kernel"), p.choice("form")) {
        (Ok("gaussian"), Ok("fourier")) => m,
        _ => survey_out_dim(m, p),
    }
}

const SURVEY_DIM_RULE: &str = "m (Gaussian: even floor of m)";

/// The form of the Fourier samplers' features (`rff`, `orf`, `sorf`, `fastfood`, `qmc`).
const FOURIER_FORM: ParamDoc = ParamDoc {
    name: "form",
    kind: ParamKind::Choice(&["fourier", "survey"]),
    default: "fourier",
    about: "features of the Gaussian kernel from rfx-sampling's Fourier maps (fourier) or from the survey benchmark's maps (survey: the same frequencies, rounded differently); the arc-cosine kernels always use the survey's",
};

/// The parameters of the Fourier samplers: the survey's kernels, the bandwidth, the form.
const FOURIER_PARAMS: &[ParamDoc] = &[SURVEY_KERNEL, SIGMA, FOURIER_FORM];

/// A Fourier sampler: `method` through [`GaussianFeatureParams`] for the Gaussian kernel in the form
/// `fourier`, else `sampler` of the survey ([`survey_map`]).
fn fourier_or_survey(
    method: FourierMethod,
    sampler: Sampler_,
    m: usize,
    p: &Params,
    data: FitData<'_>,
    rng: &mut RfxRng,
) -> rfx_core::Result<BoxedMap> {
    if p.choice("kernel")? == "gaussian" && p.choice("form")? == "fourier" {
        gaussian_family(method, m, p, data, rng)
    } else {
        survey_map(sampler, m, p, data, rng)
    }
}

/// The entry of a Fourier sampler other than `rff` (`orf`, `sorf`, `fastfood`, `qmc`): name, the
/// [`FourierMethod`] and survey [`Sampler_`] variant of the same name, whether the table kinds take it, about,
/// paper; parameters [`FOURIER_PARAMS`], fitted by [`fourier_or_survey`].
macro_rules! fourier_sampler {
    ($name:literal, colour: $colour:literal, $variant:ident, table: $table:literal, $about:literal, $paper:literal) => {
        MethodSpec {
            name: $name,
            colour: $colour,
            about: $about,
            paper: $paper,
            params: FOURIER_PARAMS,
            data_dependent: false,
            table: $table,
            dim_rule: "m (m even; survey form: as the survey samplers)",
            out_dim: |m, _, p| fourier_out_dim(m, p),
            exact_dim: true,
            build: |m, p, data, rng| {
                fourier_or_survey(FourierMethod::$variant, Sampler_::$variant, m, p, data, rng)
            },
        }
    };
}

/// The entry of a sketch of the homogeneous polynomial kernel $\langle x, y\rangle^p$ (`tensorsketch`, `trp`):
/// name, the `rfx-sketches` map type, about, paper; parameters [`POLY_DEGREE`] and [`BIAS`] (β > 0: the kernel
/// $(\langle x, y\rangle + \beta^2)^p$ of the rows $[x, \beta]$), $m$ outputs.
macro_rules! polynomial_sketch {
    ($name:literal, colour: $colour:literal, $map:ident, $about:literal, $paper:literal) => {
        MethodSpec {
            name: $name,
            colour: $colour,
            about: $about,
            paper: $paper,
            params: &[POLY_DEGREE, BIAS],
            data_dependent: false,
            table: false,
            dim_rule: "m",
            out_dim: |m, _, _| m,
            exact_dim: true,
            build: |m, p, data, rng| {
                Ok(Box::new(
                    $map::params()
                        .dim(m)
                        .degree(p.int("degree")?)
                        .fit_map(data, rng)?,
                ))
            },
        }
    };
}

const RANDOM_FOURIER_PAPER: &str =
    "Rahimi & Recht 2007 (random Fourier features), paired [cos, sin]; survey (Liu et al. TPAMI 2021) Sec. 3.1";

static METHODS: &[MethodSpec] = &[
    MethodSpec {
        name: "rff",
        colour: 0,
        about: "random Fourier features of the Gaussian kernel, z = [cos(Wx), sin(Wx)]/sqrt(m/2) (phase=paired) or sqrt(2/m) cos(Wx + b), b ~ U[0, 2 pi) (phase=random), W ~ N(0, I/sigma^2)",
        paper: RANDOM_FOURIER_PAPER,
        params: &[
            SURVEY_KERNEL,
            SIGMA,
            FOURIER_FORM,
            ParamDoc {
                name: "phase",
                kind: ParamKind::Choice(&["paired", "random"]),
                default: "paired",
                about: "paired [cos, sin] features (m even) or Rahimi & Recht's random-phase cosines (m any; bounded by sqrt(2/m), the form LP-RFF rounds)",
            },
        ],
        data_dependent: false,
        table: true,
        dim_rule: "m (paired: m even; survey form: as the survey samplers)",
        out_dim: |m, _, p| fourier_out_dim(m, p),
        exact_dim: true,
        build: |m, p, data, rng| {
            if p.choice("phase")? == "random" {
                if p.choice("kernel")? != "gaussian" || p.choice("form")? != "fourier" {
                    return Err(RfxError::invalid(
                        "phase",
                        "random",
                        "paired unless kernel=gaussian and form=fourier",
                    ));
                }
                return GaussianFeatureParams::new(FourierMethod::Rff)
                    .dim(m)
                    .sigma(p.float("sigma")?)
                    .output(rfx_sampling::Output::RandomPhase)
                    .fit_boxed(data, rng);
            }
            fourier_or_survey(FourierMethod::Rff, Sampler_::Rff, m, p, data, rng)
        },
    },
    fourier_sampler!(
        "orf",
        colour: 1,
        Orf,
        table: false,
        "orthogonal random features: Gaussian frequencies orthogonalised in d x d blocks, chi_d radii",
        "Yu et al. 2016 (ORF); survey Sec. 3.2"
    ),
    fourier_sampler!(
        "sorf",
        colour: 12,
        Sorf,
        table: false,
        "structured orthogonal random features HD1 HD2 HD3 (Hadamard and Rademacher diagonals)",
        "Yu et al. 2016 (SORF); survey Sec. 3.2"
    ),
    fourier_sampler!(
        "fastfood",
        colour: 6,
        Fastfood,
        table: true,
        "Fastfood frequencies S H G Pi H B (Hadamard, Gaussian, permutation, sign diagonals)",
        "Le, Sarlos & Smola 2013 (Fastfood); survey Sec. 3.3"
    ),
    fourier_sampler!(
        "qmc",
        colour: 2,
        Qmc,
        table: false,
        "quasi-Monte Carlo Fourier features from scrambled Halton points",
        "Yang et al. 2014 (QMC features); survey Sec. 3.10"
    ),
    MethodSpec {
        name: "maclaurin",
        colour: 7,
        about: "Random Maclaurin features of the kernel's Taylor series (degree drawn per feature, Rademacher products)",
        paper: "Kar & Karnick 2012 (Random Maclaurin), a baseline of the Gegenbauer paper (Han et al. ICML 2022, Tables 2-4)",
        params: &[
            ParamDoc {
                name: "kernel",
                kind: ParamKind::Choice(&["gaussian", "relu-ntk", "poly"]),
                default: "gaussian",
                about: "kernel approximated: Gaussian (uses sigma), depth-L ReLU NTK |x||y|K^(L)(cos) (uses depth) or the polynomial kernel (1 + <x,y>)^p, p = degree (the survey's poly2 with degree=2)",
            },
            SIGMA,
            DEPTH,
            ParamDoc {
                name: "degree",
                kind: ParamKind::Int { min: 1, max: 60 },
                default: "20",
                about: "maximum Taylor degree (kernel=poly: the polynomial's degree p)",
            },
        ],
        data_dependent: false,
        table: true,
        dim_rule: "m",
        out_dim: |m, _, _| m,
        exact_dim: true,
        build: |m, p, data, rng| {
            let q = p.int("degree")?;
            Ok(match p.choice("kernel")? {
                "relu-ntk" => Box::new(NormScaled(
                    RandomMaclaurin::params()
                        .dim(m)
                        .coefficients(ntk_taylor(p.int("depth")?, q))
                        .fit_map(data, rng)?,
                )),
                "poly" => Box::new(
                    RandomMaclaurin::params()
                        .dim(m)
                        .coefficients(rfx_kernels::PolynomialKernel::new(q, 1.0)?.taylor_coefficients())
                        .fit_map(data, rng)?,
                ),
                _ => Box::new(
                    RandomMaclaurin::params()
                        .dim(m)
                        .gaussian(p.float("sigma")?, q)
                        .fit_map(data, rng)?,
                ),
            })
        },
    },
    polynomial_sketch!(
        "tensorsketch",
        colour: 13,
        TensorSketch,
        "TensorSketch of x^(tensor p): p CountSketches combined by FFT, E<z(x), z(y)> = <x,y>^p; with bias beta the polynomial kernel (<x,y> + beta^2)^p",
        "Pham & Pagh 2013 (TensorSketch); survey (Liu et al. TPAMI 2021) Sec. 6.1 (poly2 on [x; 1])"
    ),
    polynomial_sketch!(
        "trp",
        colour: 15,
        Trp,
        "tensorized random projection: entrywise product of p Rademacher projections over sqrt(m), E<z(x), z(y)> = <x,y>^p; with bias beta (<x,y> + beta^2)^p",
        "Meister, Sarlos & Woodruff 2019 (TRP); survey (Liu et al. TPAMI 2021) Sec. 6.1 (poly2 on [x; 1])"
    ),
    MethodSpec {
        name: "tensorsrht",
        colour: 9,
        about: "TensorSRHT of x (tensor) x: two subsampled randomized Fourier transforms of the row, their entrywise product (m/2 complex outputs as [Re; Im], m even), E<z(x), z(y)> = <x,y>^2; with bias beta (<x,y> + beta^2)^2",
        paper: "Ahle et al. 2020 (TensorSRHT); Zandieh et al. NeurIPS 2021 Sec. 3 (the NTKRF's degree-2 sketch)",
        params: &[BIAS],
        data_dependent: false,
        table: false,
        dim_rule: "m (even)",
        out_dim: |m, _, _| m,
        exact_dim: true,
        build: |m, _, data, rng| Ok(Box::new(TensorSrht::params().dim(m).fit_map(data, rng)?)),
    },
    MethodSpec {
        name: "polysketch",
        colour: 13,
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
        build: |m, p, data, rng| {
            let q = p.int("degree")?;
            let per = polysketch_per_degree(m, q);
            Ok(match p.choice("kernel")? {
                "relu-ntk" => Box::new(NormScaled(
                    PolynomialSketch::params()
                        .dim(per)
                        .coefficients(ntk_taylor(p.int("depth")?, q))
                        .fit_map(data, rng)?,
                )),
                _ => Box::new(
                    PolynomialSketch::params()
                        .dim(per)
                        .gaussian(p.float("sigma")?, q)
                        .fit_map(data, rng)?,
                ),
            })
        },
    },
    MethodSpec {
        name: "gegenbauer",
        colour: 4,
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
        build: |m, p, data, rng| {
            let g = table_gzk(p)?;
            let q = p.int("degree")?;
            let params = if p.flag("unit_norm")? {
                RandomGegenbauerParams::unit_norm(g, m, q)
            } else {
                let s = gegenbauer_radial(p)?;
                RandomGegenbauerParams::new(g, m / s, q, s)
            };
            Ok(Box::new(params.fit_map(data, rng)?))
        },
    },
    MethodSpec {
        name: "nystrom",
        colour: 18,
        about: "Nystrom features K(x, S) U r^{-1/2} with m landmarks S from the fitting rows, by recursive ridge-leverage-score sampling or uniformly",
        paper: "Williams & Seeger 2001; Musco & Musco 2017 (recursive RLS); baseline of the Gegenbauer paper Tables 2-4",
        params: &[
            KERNEL,
            SIGMA,
            DEPTH,
            ParamDoc {
                name: "landmarks",
                kind: ParamKind::Choice(&["rls", "uniform", "kmeans++"]),
                default: "rls",
                about: "how the landmarks are drawn from the fitting rows: recursive ridge leverage scores (Musco & Musco 2017), uniformly without replacement, or by k-means++ seeding in the kernel's feature space (Arthur & Vassilvitskii 2007; Zhang, Tsang & Kwok 2008)",
            },
            ParamDoc {
                name: "gram",
                kind: ParamKind::Choice(&["zonal", "pairwise"]),
                default: "zonal",
                about: "how K is evaluated: zonal (rfx-gzk's generalized zonal kernel, any kernel) or pairwise (rfx-kernels' Gaussian exp(-|x-y|^2/(2 sigma^2)) from squared distances; Gaussian only): the same kernel, rounded differently",
            },
        ],
        data_dependent: true,
        table: true,
        dim_rule: "rank of K_SS <= min(m, fitting rows)",
        out_dim: |m, n, _| m.min(n),
        exact_dim: false,
        build: |m, p, data, rng| {
            let params = NystromParams::new(m).sampling(match p.choice("landmarks")? {
                "uniform" => LandmarkSampling::Uniform,
                "kmeans++" => LandmarkSampling::KmeansPlusPlus,
                _ => LandmarkSampling::RecursiveRls,
            });
            if p.choice("gram")? == "pairwise" {
                if p.choice("kernel")? != "gaussian" {
                    return Err(RfxError::invalid(
                        "gram",
                        "pairwise",
                        "zonal for kernel=relu-ntk (pairwise is the Gaussian kernel's)",
                    ));
                }
                let kernel = rfx_kernels::GaussianKernel::new(p.float("sigma")?)?;
                return NystromFit { kernel, params }.fit_boxed(data, rng);
            }
            NystromFit {
                kernel: table_gzk(p)?,
                params,
            }
            .fit_boxed(data, rng)
        },
    },
    MethodSpec {
        name: "arccos",
        colour: 21,
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
        build: |m, p, data, rng| {
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
                    .fit_map(data, rng)?,
            ))
        },
    },
    MethodSpec {
        name: "ntk-rf",
        colour: 3,
        about: "NTK random features: arc-cosine features per layer combined by a degree-2 sketch (m1 = m - mcs ReLU features, mcs sketch)",
        paper: "Han et al. 2021 (NTK random features) Algorithm 1; Zandieh et al. NeurIPS 2021 (NTKRF, TensorSRHT)",
        params: &[
            NTK_DEPTH,
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
        build: |m, p, data, rng| {
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
            Ok(Box::new(params.fit_map(data, rng)?))
        },
    },
    MethodSpec {
        name: "ntk-sketch",
        colour: 1,
        about: "NTKSketch: polynomial fit of the NTK's arc-cosine chain, sketched by PolySketch and compressed by SRHT",
        paper: "Zandieh et al. NeurIPS 2021, Algorithm 1 and Theorem 2",
        params: &[
            NTK_DEPTH,
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
        build: |m, p, data, rng| {
            Ok(Box::new(
                NtkSketch::params()
                    .depth(p.int("depth")?)
                    .degree(p.int("degree")?)
                    .dim(m)
                    .fit_map(data, rng)?,
            ))
        },
    },
    MethodSpec {
        name: "grad-rf",
        colour: 8,
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
        build: |m, p, data, rng| {
            let depth = p.int("depth")?;
            let d = data.dim();
            let width = GradRf::widest_within(m, d, depth).ok_or_else(|| {
                RfxError::invalid(
                    "dim",
                    m,
                    format!("at least d + 1 = {} (the parameters of a width-1 network)", d + 1),
                )
            })?;
            Ok(Box::new(
                GradRf::params().depth(depth).width(width).fit_map(data, rng)?,
            ))
        },
    },
    MethodSpec {
        name: "naive-rf",
        colour: 5,
        about: "Naive-RF: the Bietti-Mairal explicit NTK map with random arc-cosine features, m0 = m1 = w per layer, the largest w with D_L = (sum_{k<L} w^k) w + w^L d <= m",
        paper: "Han et al. 2021 (NTK random features) Eq. 12, the Naive-RF baseline of Fig. 2",
        params: &[NTK_DEPTH],
        data_dependent: false,
        table: false,
        dim_rule: "D_L <= m for the largest m0 = m1 = w >= 1",
        out_dim: |m, _, _| m,
        exact_dim: false,
        build: |m, p, data, rng| {
            let depth = p.int("depth")?;
            let d = data.dim();
            let w = NaiveRf::widest_within(m, d, depth).ok_or_else(|| {
                RfxError::invalid(
                    "dim",
                    m,
                    format!("at least d + L = {} (D_L of m0 = m1 = 1)", d + depth),
                )
            })?;
            Ok(Box::new(
                NaiveRf::params()
                    .depth(depth)
                    .m0(w)
                    .m1(w)
                    .fit_map(data, rng)?,
            ))
        },
    },
    MethodSpec {
        name: "cntksketch",
        colour: 1,
        about: "CNTKSketch: features of the ReLU convolutional NTK with global average pooling (images, q x q filters, depth L), polynomial fits of the arc-cosine functions sketched per pixel by PolySketch trees, SRHT and TensorSRHT",
        paper: "Zandieh et al. NeurIPS 2021, Definition 3 and Eqs. 109-114 (CNTKSketch), Theorem 4; Table 1",
        params: &[
            IMAGE_HEIGHT,
            IMAGE_WIDTH,
            IMAGE_CHANNELS,
            ParamDoc {
                name: "depth",
                kind: ParamKind::Int { min: 2, max: 16 },
                default: "2",
                about: "convolutional layers L (L = 1 is the zero kernel)",
            },
            CONV_FILTER,
            ParamDoc {
                name: "degree",
                kind: ParamKind::Int { min: 1, max: 32 },
                default: "2",
                about: "degree p of the polynomial fits of the arc-cosine functions",
            },
            ParamDoc {
                name: "sketch_div",
                kind: ParamKind::Int { min: 1, max: 64 },
                default: "4",
                about: "internal sketch width w = max(2, even floor(m / sketch_div))",
            },
            ParamDoc {
                name: "batch",
                kind: ParamKind::Int { min: 1, max: 1024 },
                default: "8",
                about: "images per chunk of the transform (does not change the features)",
            },
        ],
        data_dependent: false,
        table: false,
        dim_rule: "m (m even)",
        out_dim: |m, _, _| m,
        exact_dim: true,
        build: |m, p, data, rng| {
            let (h, w, c) = image_shape(p, data.dim())?;
            Ok(Box::new(
                CntkSketch::params()
                    .depth(p.int("depth")?)
                    .filter(p.int("filter")?)
                    .shape(h, w, c)
                    .degree(p.int("degree")?)
                    .width(cntk_sketch_width(m, p.int("sketch_div")?))
                    .dim(m)
                    .batch(p.int("batch")?)
                    .fit_map(data, rng)?,
            ))
        },
    },
    MethodSpec {
        name: "cnn-grad-rf",
        colour: 8,
        about: "CNN Grad-RF: the gradient of a random K-layer convolutional ReLU network (q x q filters, width w, no biases, global average pooling, linear output) w.r.t. all its parameters, w with the parameter count closest to m",
        paper: "Arora et al. 2019 (finite-width CNTK), the Grad-RF baseline of Zandieh et al. NeurIPS 2021, Table 1",
        params: &[
            IMAGE_HEIGHT,
            IMAGE_WIDTH,
            IMAGE_CHANNELS,
            CONV_FILTER,
            ParamDoc {
                name: "layers",
                kind: ParamKind::Int { min: 1, max: 8 },
                default: "3",
                about: "convolutional layers K",
            },
        ],
        data_dependent: false,
        table: false,
        dim_rule: "q^2 c w + (K-1) q^2 w^2 + w closest to m (w >= 1; may exceed m)",
        out_dim: |m, _, p| {
            let (q, k, c) = (
                p.int("filter").unwrap_or(3),
                p.int("layers").unwrap_or(3),
                p.int("channels").unwrap_or(1),
            );
            // the parameter count does not depend on the image's height and width
            CnnGradRf::params()
                .shape(1, 1, c)
                .filter(q)
                .layers(k)
                .closest_width(m)
                .output_dim()
        },
        exact_dim: true,
        build: |m, p, data, rng| {
            let shape = image_shape(p, data.dim())?;
            Ok(Box::new(cnn_grad_rf_params(m, p, shape)?.fit_map(data, rng)?))
        },
    },
    MethodSpec {
        name: "lp-rff",
        colour: 19,
        about: "low-precision random Fourier features: cos(Wx + b) sqrt(2/m), W ~ N(0, I/sigma^2), b ~ U[0, 2 pi), each value stochastically rounded to a b-bit grid on [-sqrt(2/m), sqrt(2/m)] (unbiased; noise keyed by the row's content, or from the fit's stream)",
        paper: "Zhang et al. AISTATS 2019 (LP-RFF), as the baseline of Tiomoko Ali, Liao & Couillet ICLR 2022, Figs. 1, 4",
        params: &[
            SIGMA,
            ParamDoc {
                name: "bits",
                kind: ParamKind::Int { min: 1, max: 16 },
                default: "8",
                about: "bits per feature value b",
            },
            ParamDoc {
                name: "noise",
                kind: ParamKind::Choice(&["row", "stream"]),
                default: "row",
                about: "rounding noise: keyed by each row's content (reproducible per row), or continuing the fit's random stream across transform calls (fresh per call, order-dependent: rfx_ternary::StreamRoundedLpRff)",
            },
        ],
        data_dependent: false,
        table: false,
        dim_rule: "m",
        out_dim: |m, _, _| m,
        exact_dim: true,
        build: |m, p, data, rng| {
            let rff = rfx_sampling::Rff::params()
                .dim(m)
                .sigma(p.float("sigma")?)
                .output(rfx_sampling::Output::RandomPhase)
                .fit(data.dim(), rng)?;
            let bits = p.int("bits")? as u32; // 1..=16, checked when the parameters were parsed
            if p.choice("noise")? == "stream" {
                // the rounding continues the fit's stream (no seed drawn): `LpRff::transform_with_rng`
                let lp = rfx_ternary::LpRff::new(rff, bits, 0)?;
                return Ok(Box::new(StreamRoundedLpRff::new(lp, rng.clone())));
            }
            let noise_seed = rand::Rng::gen::<u64>(rng);
            Ok(Box::new(rfx_ternary::LpRff::new(rff, bits, noise_seed)?))
        },
    },
    MethodSpec {
        name: "ternary",
        colour: 16,
        about: "ternary random features sigma_ter(W_ter x)/sqrt(m), thresholds matched to an activation's Gaussian moments at tau estimated from the fitting rows",
        paper: "Tiomoko Ali, Liao & Couillet ICLR 2022, Algorithm 1 (eqs. 4-6, 10)",
        params: &[
            ParamDoc {
                name: "activation",
                kind: ParamKind::Choice(&["relu", "abs", "cos", "cos-sin", "exp", "erf", "gauss-bump"]),
                default: "relu",
                about: "activation whose kernel is matched (d0, d1, d2 of Table 1; cos-sin: [cos, sin], the Gaussian kernel exp(-|x-y|^2/2), footnote 8)",
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
        build: |m, p, data, rng| ternary_fit(m, p)?.fit_boxed(data, rng),
    },
    MethodSpec {
        name: "relu-rf",
        colour: 0,
        about: "ReLU random features max(0, Wx)/sqrt(m), W ~ N(0, I): E<z(x), z(y)> = |x||y| kappa1(cos)/2, half the order-1 arc-cosine kernel",
        paper: "Cho & Saul 2009 (arc-cosine kernel, Eq. 1 with n = 1); the ReLU baseline of Tiomoko Ali, Liao & Couillet ICLR 2022, Fig. 14",
        params: &[],
        data_dependent: false,
        table: false,
        dim_rule: "m",
        out_dim: |m, _, _| m,
        exact_dim: true,
        build: |m, _, data, rng| ReluParams::new(m).fit_boxed(data, rng),
    },
    MethodSpec {
        name: "rom",
        colour: 5,
        about: "random orthogonal matrices: t products H D_i (Hadamard, Rademacher diagonals) with rows rescaled to chi norms",
        paper: "Choromanski et al. 2017 (ROM); survey (Liu et al. TPAMI 2021) Sec. 3.4",
        params: &[
            SURVEY_KERNEL,
            SIGMA,
            ParamDoc {
                name: "rom_blocks",
                kind: ParamKind::Int { min: 1, max: 16 },
                default: "3",
                about: "number t of HD blocks",
            },
        ],
        data_dependent: false,
        table: false,
        dim_rule: SURVEY_DIM_RULE,
        out_dim: |m, _, p| survey_out_dim(m, p),
        exact_dim: true,
        build: |m, p, data, rng| survey_map(Sampler_::Rom, m, p, data, rng),
    },
    MethodSpec {
        name: "ssf",
        colour: 3,
        about: "spherical structured features: chi radii on a shifted lattice times directions from DFT rows chosen by a Riesz-energy search, randomly rotated",
        paper: "Lyu 2017 (SSF); survey (Liu et al. TPAMI 2021) Sec. 3.11",
        params: &[
            SURVEY_KERNEL,
            SIGMA,
            ParamDoc {
                name: "ssf_sweeps",
                kind: ParamKind::Int { min: 0, max: 100 },
                default: "3",
                about: "greedy swap sweeps of the Riesz-energy search (0: random DFT rows)",
            },
        ],
        data_dependent: false,
        table: false,
        dim_rule: SURVEY_DIM_RULE,
        out_dim: |m, _, p| survey_out_dim(m, p),
        exact_dim: true,
        build: |m, p, data, rng| survey_map(Sampler_::Ssf, m, p, data, rng),
    },
    MethodSpec {
        name: "gq",
        colour: 8,
        about: "Gaussian quadrature features: i.i.d. entries +-sqrt(3)/sigma with probability 1/6 each, 0 with 2/3 (three-point rule; biased at 6th order)",
        paper: "Dao, De Sa & Re 2017; survey (Liu et al. TPAMI 2021) Sec. 3.13, Eqs. 16-17",
        params: &[SURVEY_KERNEL, SIGMA],
        data_dependent: false,
        table: false,
        dim_rule: SURVEY_DIM_RULE,
        out_dim: |m, _, p| survey_out_dim(m, p),
        exact_dim: true,
        build: |m, p, data, rng| survey_map(Sampler_::Gq, m, p, data, rng),
    },
    MethodSpec {
        name: "ls-rff",
        colour: 9,
        about: "leverage-score RFF: s frequencies drawn from a pool of l = factor * s by their ridge leverage on the fitting rows, importance-weighted (unbiased)",
        paper: "Li, Ton, Oglic & Sejdinovic 2019, Alg. 1; survey (Liu et al. TPAMI 2021) Sec. 3.15, Eqs. 19-22",
        params: &[
            SURVEY_KERNEL,
            SIGMA,
            ParamDoc {
                name: "pool_factor",
                kind: ParamKind::Int { min: 1, max: 64 },
                default: "4",
                about: "pool size l = pool_factor * s",
            },
            ParamDoc {
                name: "ls_rows",
                kind: ParamKind::Int { min: 2, max: 1_000_000 },
                default: "1000",
                about: "fitting rows n' for the leverage scores (a seeded random subset; all rows when fewer)",
            },
            ParamDoc {
                name: "ls_lambda",
                kind: ParamKind::Float { min: 1e-12, max: 1e6 },
                default: "0.001",
                about: "ridge parameter lambda of the leverage scores (n' lambda I)",
            },
        ],
        data_dependent: true,
        table: false,
        dim_rule: SURVEY_DIM_RULE,
        out_dim: |m, _, p| survey_out_dim(m, p),
        exact_dim: true,
        build: |m, p, data, rng| survey_map(Sampler_::LsRff, m, p, data, rng),
    },
];

/// Every feature map, in the order `rfx methods` lists them.
pub fn methods() -> &'static [MethodSpec] {
    METHODS
}

/// How much method `name` at its registry parameters amplifies the rounding of its inputs, at most: 1 for
/// maps whose features are sums of products (random features and sketches: their rounding is that of the
/// products), $1/\text{rcond}$ for Nyström ([`NystromParams::rounding_amplification`]). A kind
/// scales its comparison tolerance by it, so that a cell recomputed on another machine kind — other BLAS
/// kernels, other rounding — is judged by the bound its method gives. Unknown names: 1.
pub fn rounding_amplification(name: &str) -> f64 {
    match name {
        "nystrom" => NystromParams::new(1).rounding_amplification(),
        _ => 1.0,
    }
}

/// The method called `name`; the error lists the allowed names.
pub fn method(name: &str) -> Result<&'static MethodSpec, RegistryError> {
    METHODS
        .iter()
        .find(|m| m.name == name)
        .ok_or_else(|| RegistryError::UnknownMethod {
            name: name.to_string(),
            allowed: names(METHODS.iter().map(|m| m.name)),
        })
}

pub(crate) fn names<'a>(it: impl Iterator<Item = &'a str>) -> String {
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
    let kernel = spec.params.iter().find(|d| d.name == "kernel");
    if !spec.table {
        &[]
    } else if let Some(ParamDoc {
        kind: ParamKind::Choice(choices),
        ..
    }) = kernel.filter(|d| d.kind != SURVEY_KERNEL.kind)
    {
        // the table kernels among the choices (`maclaurin` also offers `poly`)
        match (choices.contains(&"gaussian"), choices.contains(&"relu-ntk")) {
            (true, true) => &["gaussian", "relu-ntk"],
            (true, false) => &["gaussian"],
            (false, true) => &["relu-ntk"],
            (false, false) => &[],
        }
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
    pub fn parse(v: &str) -> Result<Self, RegistryError> {
        let v = v.trim();
        let bad = || RegistryError::Syntax {
            text: v.to_string(),
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
    pub fn check_table_method(&self) -> Result<&'static MethodSpec, RegistryError> {
        let spec = method(&self.name)?;
        if !spec.table {
            return Err(RegistryError::NotInTables {
                name: self.name.clone(),
                allowed: table_methods().join(", "),
            });
        }
        spec.parse_params(&self.params)?;
        Ok(spec)
    }
}

/// Fits method `name` with typed or text parameters (`name`, value) on the fitting rows `fit` — the entry
/// point of the TOML table kinds. Parameters a method does not declare are dropped (so a table can pass its
/// kernel settings to every method); a kernel the method cannot approximate is an error.
pub fn build_method(
    name: &str,
    m: usize,
    given: &[(&str, RawValue)],
    fit: ArrayView2<'_, f64>,
    rng: &mut RfxRng,
) -> Result<BoxedMap, RegistryError> {
    let spec = method(name)?;
    if let Some((_, k)) = given.iter().find(|(k, _)| *k == "kernel") {
        let k = k.to_string();
        if !table_kernels(spec).contains(&k.as_str()) {
            return Err(RegistryError::NotForKernel {
                name: name.to_string(),
                allowed: names(
                    METHODS
                        .iter()
                        .filter(|m| table_kernels(m).contains(&k.as_str()))
                        .map(|m| m.name),
                ),
                kernel: k,
            });
        }
    }
    let p = spec.params_declared(given)?;
    spec.fit(m, &p, FitData::Rows(fit), rng)
        .map_err(|source| RegistryError::Fit {
            owner: format!("method {name}"),
            source,
        })
}
