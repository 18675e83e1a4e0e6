//! The exact kernels of the registry (`rfx gram`, the `exact` method of the table kinds): one
//! [`KernelSpec`] per kernel, with its parameters, formula, paper and equation.

use crate::RegistryError;
use rfx_core::{Kernel, WithBias};
use rfx_gzk::zonal::Gzk;
use rfx_kernels::{ArcCosineKernel, ArcCosineOrder, GaussianKernel, ReluNngp, ReluNtk};

use crate::methods::{bias_of, names, BIAS, GAUSSIAN_ONLY};
use crate::params::{ParamDoc, ParamKind, Params, RawValue};

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
    /// Checks `--param` text pairs for this kernel, once.
    pub fn parse_params(&self, given: &[(String, String)]) -> Result<Params, RegistryError> {
        Params::parse_text(self.params, given, &format!("kernel {}", self.name))
    }

    /// Checks typed or text values for this kernel, once.
    pub fn params_from<K: AsRef<str>>(
        &self,
        given: &[(K, RawValue)],
    ) -> Result<Params, RegistryError> {
        Params::parse(self.params, given, &format!("kernel {}", self.name))
    }

    /// The `f64` values one worker thread holds while it computes one entry (beyond the inputs and the
    /// output): the CNTK's per-pair tensors ([`rfx_ntk::Cntk::pair_f64s`]), nothing for the other kernels.
    /// For a memory check before a Gram is computed.
    pub fn pair_f64s(&self, p: &Params) -> u128 {
        match self.name {
            "cntk" => {
                rfx_ntk::Cntk::pair_f64s(p.int("height").unwrap_or(0), p.int("width").unwrap_or(0))
            }
            _ => 0,
        }
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

static KERNELS: &[KernelSpec] = &[
    KernelSpec {
        name: "gaussian",
        about: "exp(-|x-y|^2 / (2 sigma^2))",
        paper: "survey (Liu et al. TPAMI 2021) Eq. 1; Gegenbauer paper Lemma 15",
        params: GAUSSIAN_ONLY,
        build: |p| {
            let sigma = p.float("sigma")?;
            Ok(Box::new(GaussianKernel::new(sigma)?))
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
        build: |p| Ok(Box::new(Gzk::dot_product(p.list("taylor")?.to_vec())?)),
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
            crate::methods::IMAGE_CHANNELS,
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
pub fn kernel(name: &str) -> Result<&'static KernelSpec, RegistryError> {
    KERNELS
        .iter()
        .find(|k| k.name == name)
        .ok_or_else(|| RegistryError::UnknownKernel {
            name: name.to_string(),
            allowed: names(KERNELS.iter().map(|k| k.name)),
        })
}
