//! Generalized zonal kernels (GZK, paper Section 3.2): exact kernels and their truncated $(q, s)$ versions.
//!
//! A GZK of order $s$ (Definition 3) is
//! $$k(x,y) = \sum_{\ell=0}^{\infty} \big\langle h_\ell(\Vert x\Vert), h_\ell(\Vert y\Vert)\big\rangle\thinspace
//!   P_d^{\ell}\negthinspace\left(\frac{\langle x, y\rangle}{\Vert x\Vert\Vert y\Vert}\right),\qquad h_\ell : \mathbb{R} \to \mathbb{R}^s .$$
//! [`Gzk`] holds the exact kernels of the paper written in this form:
//!
//! * the Gaussian kernel $e^{-\Vert x-y\Vert^2/(2\sigma^2)}$ (Lemma 15, Eq. 23, with bandwidth $\sigma$: everything is
//!   applied to $x/\sigma$),
//! * the depth-$L$ ReLU NTK $\Theta^{(L)}(x,y) = \Vert x\Vert\Vert y\Vert\thinspace K^{(L)}(\cos)$ (Lemma 16),
//! * dot-product kernels $\kappa(\langle x,y\rangle)$ with non-negative Taylor coefficients
//!   $\kappa^{(j)}(0)/j!$ (Lemma 4, Eqs. 12 and 22), e.g. $e^{\beta\langle x,y\rangle}$ and $(\langle x,y\rangle+c)^p$.
//!
//! [`Gzk::truncate`] gives the truncated kernel $k_{q,s}$ ([`TruncatedGzk`]): degrees $\ell \le q$ and radial terms
//! $i = 0,\dots,s-1$ (the paper's "$i \in \[s\]$", research notes §12 item 4), for which random Gegenbauer features
//! are unbiased (Definition 8). [`Gzk::zonal`] gives the unit-norm fast path: the zonal kernel
//! $\sum_{\ell\le q} c_\ell P_d^\ell(\langle \hat x, \hat y\rangle)$ whose coefficients $c_\ell$ are the Gegenbauer
//! coefficients (Eq. 7) of the kernel restricted to the unit sphere, a GZK of order 1 with $h_\ell \equiv \sqrt{c_\ell}$.
//!
//! Radial functions are evaluated in log space (log-gamma), so large $\alpha_{\ell,d}$ and tiny powers never
//! overflow or underflow in intermediate steps. At $x = 0$ every kernel here has $h_\ell(0) = 0$ for
//! $\ell \ge 1$, so only $\ell = 0$ ($P^0 \equiv 1$) contributes and the cosine is irrelevant (it is taken as 0).

use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, ArrayViewMut2, Axis, Zip};
use rfx_core::{Kernel, Result, RfxError};
use statrs::function::gamma::ln_gamma;

use crate::gegenbauer::{gegenbauer_all, gegenbauer_for_each, Basis};
use crate::harmonics::ln_alpha;
use crate::series::ScalarFunction;

/// Largest truncation degree $q$ accepted by [`Gzk::truncate`], [`Gzk::zonal`] and random Gegenbauer features.
///
/// The recurrence is stable far beyond this, but the feature variance grows like $\alpha_{q,d}$ and the paper
/// itself stops at 15 (App. J.3); 60 leaves room for large $\Vert x\Vert/\sigma$ (Theorem 12 needs $q \gtrsim 3.7r^2$).
pub const MAX_DEGREE: usize = 60;

/// Largest number of radial terms $s$ accepted by [`Gzk::truncate`] (a guard against absurd allocations; the
/// Gaussian needs $s \approx r^2$ terms).
pub const MAX_RADIAL_TERMS: usize = 1024;

/// Matrices with at least this many entries are filled in parallel (rayon, over rows).
pub(crate) const PAR_ENTRIES: usize = 1 << 14;

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Gaussian { sigma: f64 },
    ReluNtk { depth: usize },
    Exp { beta: f64 },
    Taylor { coeffs: Vec<f64> },
}

/// An exact generalized zonal kernel (Definition 3): Gaussian, ReLU NTK or dot-product kernel.
///
/// Construct with [`Gzk::gaussian`], [`Gzk::relu_ntk`], [`Gzk::exponential`], [`Gzk::polynomial`] or
/// [`Gzk::dot_product`] (all validate their parameters). As a [`Kernel`] it evaluates the exact kernel; its
/// [`Kernel::gram`] uses one GEMM for the inner products and fills the entries in parallel over rows.
/// [`Gzk::truncate`] and [`Gzk::zonal`] give the truncated kernels that random Gegenbauer features approximate.
#[derive(Clone, Debug, PartialEq)]
pub struct Gzk {
    kind: Kind,
}

fn check_finite(name: &str, v: f64, allowed: &str, ok: bool) -> Result<()> {
    if ok && v.is_finite() {
        Ok(())
    } else {
        Err(RfxError::invalid(name, v, allowed))
    }
}

impl Gzk {
    /// The Gaussian kernel $k(x,y) = e^{-\Vert x-y\Vert^2/(2\sigma^2)}$ with bandwidth $\sigma > 0$.
    ///
    /// As a GZK (Lemma 15 applied to $x/\sigma$): $k(x,y) = e^{-\Vert x\Vert^2/2\sigma^2}e^{-\Vert y\Vert^2/2\sigma^2}
    /// e^{\langle x,y\rangle/\sigma^2}$, with radial terms, for $\rho = t/\sigma$,
    /// $$[h_\ell(t)]\_i = \sqrt{\frac{\alpha_{\ell,d}\thinspace\Gamma(\frac d2)}{2^\ell\thinspace4^i\thinspace i!\thinspace\Gamma(i+\ell+\frac d2)}}\thickspace
    ///   \rho^{\ell+2i}\thinspace e^{-\rho^2/2},\qquad i = 0, 1, \dots$$
    /// (the factor $\rho^{\ell+2i}e^{-\rho^2/2}$ lies outside the root, as in Lemma 15; Eq. 23 misprints it;
    /// $\Gamma(i+\frac12)/(\sqrt\pi(2i)!) = 1/(4^i i!)$). The paper's experiments imply $\sigma^2 = 1/2$.
    pub fn gaussian(sigma: f64) -> Result<Self> {
        check_finite("sigma", sigma, "a finite bandwidth > 0", sigma > 0.0)?;
        Ok(Gzk {
            kind: Kind::Gaussian { sigma },
        })
    }

    /// The depth-$L$ ReLU neural tangent kernel $\Theta^{(L)}(x,y) = \Vert x\Vert\Vert y\Vert\thinspace K^{(L)}\big(\frac{\langle
    /// x,y\rangle}{\Vert x\Vert\Vert y\Vert}\big)$ with $K^{(L)}$ = [`rfx_kernels::relu_ntk`] ($\Theta = 0$ if $x = 0$ or $y = 0$).
    ///
    /// As a GZK of order $s = 1$ (Lemma 16, corrected square-root placement, research notes §12 item 2):
    /// $h_\ell(t) = \sqrt{c_\ell}\thinspace t$ with $c_\ell$ the Gegenbauer coefficients (Eq. 7) of $K^{(L)}$, computed by
    /// Gauss–Legendre quadrature in the angle ([`ScalarFunction::gegenbauer_coefficients`]).
    /// `depth = 0` is the linear kernel $\langle x, y\rangle$; `depth = 2` is the paper's "two-layer" NTK.
    pub fn relu_ntk(depth: usize) -> Result<Self> {
        if depth > 1000 {
            return Err(RfxError::invalid("depth", depth, "an integer in 0..=1000"));
        }
        Ok(Gzk {
            kind: Kind::ReluNtk { depth },
        })
    }

    /// The exponential dot-product kernel $e^{\beta\langle x,y\rangle}$, $\beta \ge 0$ (Taylor coefficients
    /// $\beta^j/j!$, i.e. $\kappa^{(j)}(0) = \beta^j$; $\beta = 1$ is the kernel of Lemma 15 before the
    /// Gaussian damping). A GZK through Lemma 4 (see [`Gzk::dot_product`]).
    pub fn exponential(beta: f64) -> Result<Self> {
        check_finite("beta", beta, "a finite real >= 0", beta >= 0.0)?;
        Ok(Gzk {
            kind: Kind::Exp { beta },
        })
    }

    /// The polynomial kernel $(\langle x,y\rangle + c)^p$, $c \ge 0$: the dot-product kernel with Taylor
    /// coefficients $\binom{p}{j}c^{p-j}$, $j \le p$ (a GZK of finite order $s = \lfloor p/2\rfloor + 1$).
    /// Errors name `c` and `degree` when a coefficient overflows float64 ($c^p$ above about $1.8\cdot10^{308}$).
    pub fn polynomial(degree: usize, c: f64) -> Result<Self> {
        check_finite("c", c, "a finite real >= 0", c >= 0.0)?;
        if degree > 1000 {
            return Err(RfxError::invalid(
                "degree",
                degree,
                "an integer in 0..=1000",
            ));
        }
        let ln_c = c.ln();
        let p = degree as f64;
        let coeffs = (0..=degree)
            .map(|j| {
                let jf = j as f64;
                let ln_binom = ln_gamma(p + 1.0) - ln_gamma(jf + 1.0) - ln_gamma(p - jf + 1.0);
                if j == degree {
                    1.0
                } else {
                    (ln_binom + (p - jf) * ln_c).exp()
                }
            })
            .collect::<Vec<f64>>();
        if coeffs.iter().any(|a| !a.is_finite()) {
            // c^p is the largest coefficient once c >= p; below that none overflows
            let bound = (f64::MAX.ln() / p).exp();
            return Err(RfxError::invalid(
                "c",
                format!("{c} with degree = {degree}"),
                format!(
                    "c^degree finite in float64 (it overflows here); at degree {degree}, c below about {bound:.3e}, \
                     or a lower degree"
                ),
            ));
        }
        Self::dot_product(coeffs)
    }

    /// The dot-product kernel $k(x,y) = \kappa(\langle x,y\rangle) = \sum_j a_j\langle x,y\rangle^j$ given by its
    /// Taylor coefficients $a_j = \kappa^{(j)}(0)/j! \ge 0$ (finitely many: a polynomial).
    ///
    /// As a GZK (Lemma 4, Eq. 12; truncated: Eq. 22), with $i = 0, 1, \dots$:
    /// $$[h_\ell(t)]\_i = \sqrt{\frac{\alpha_{\ell,d}\thinspace\Gamma(\frac d2)\thinspace\kappa^{(\ell+2i)}(0)}{2^\ell\thinspace4^i\thinspace i!\thinspace
    ///   \Gamma(i+\ell+\frac d2)}}\thickspace t^{\ell+2i}.$$
    /// Errors: empty list, or a coefficient that is negative or not finite (positive definiteness on every
    /// sphere needs $\kappa^{(j)}(0) \ge 0$, Schoenberg).
    pub fn dot_product(taylor: Vec<f64>) -> Result<Self> {
        if taylor.is_empty() {
            return Err(RfxError::invalid(
                "taylor",
                "[]",
                "at least one Taylor coefficient",
            ));
        }
        for (j, &a) in taylor.iter().enumerate() {
            check_finite(
                &format!("taylor[{j}]"),
                a,
                "finite Taylor coefficients >= 0",
                a >= 0.0,
            )?;
        }
        Ok(Gzk {
            kind: Kind::Taylor { coeffs: taylor },
        })
    }

    /// A short name for tables: `gaussian(sigma=0.7)`, `relu_ntk(L=2)`, `exp(1x)`, `dot_product(p=3)`.
    pub fn name(&self) -> String {
        match &self.kind {
            Kind::Gaussian { sigma } => format!("gaussian(sigma={sigma})"),
            Kind::ReluNtk { depth } => format!("relu_ntk(L={depth})"),
            Kind::Exp { beta } => format!("exp({beta}x)"),
            Kind::Taylor { coeffs } => format!("dot_product(p={})", coeffs.len() - 1),
        }
    }

    /// The bandwidth $\sigma$ of the Gaussian kernel, `None` for the others.
    pub fn sigma(&self) -> Option<f64> {
        match self.kind {
            Kind::Gaussian { sigma } => Some(sigma),
            _ => None,
        }
    }

    /// The kernel on the unit sphere as a function of the cosine, $\kappa_{\mathbb S}(t) = k(x,y)$ for
    /// $\Vert x\Vert = \Vert y\Vert = 1$, $\langle x,y\rangle = t$: $e^{(t-1)/\sigma^2}$, $K^{(L)}(t)$ or $\kappa(t)$.
    pub fn on_sphere(&self, t: f64) -> f64 {
        match &self.kind {
            Kind::Gaussian { sigma } => ((t - 1.0) / (sigma * sigma)).exp(),
            Kind::ReluNtk { depth } => rfx_kernels::relu_ntk(*depth, t),
            Kind::Exp { beta } => (beta * t).exp(),
            Kind::Taylor { coeffs } => horner(coeffs, t),
        }
    }

    /// The Taylor coefficient $a_j = \kappa^{(j)}(0)/j!$ in log space (for dot-product kinds).
    fn ln_taylor(&self, j: usize) -> f64 {
        match &self.kind {
            Kind::Exp { beta } => {
                if j == 0 {
                    0.0
                } else {
                    j as f64 * beta.ln() - ln_gamma(j as f64 + 1.0)
                }
            }
            Kind::Gaussian { .. } => -ln_gamma(j as f64 + 1.0),
            Kind::Taylor { coeffs } => coeffs.get(j).map_or(f64::NEG_INFINITY, |a| a.ln()),
            Kind::ReluNtk { .. } => f64::NAN,
        }
    }

    /// Gegenbauer coefficients $c_0,\dots,c_q$ (Eq. 7) of the kernel restricted to the unit sphere,
    /// $\kappa_{\mathbb S}(t) = \sum_\ell c_\ell P_d^\ell(t)$ (see [`Gzk::on_sphere`]); they equal
    /// $\Vert h_\ell(1)\Vert^2$ of the untruncated radial functions.
    ///
    /// * Gaussian: $e^{-1/\sigma^2}$ times the closed form for $e^{t/\sigma^2}$
    ///   ([`crate::exp_gegenbauer_coefficients`]); exponential: that closed form;
    /// * ReLU NTK: quadrature in the angle ([`ScalarFunction::gegenbauer_coefficients`]);
    /// * polynomial Taylor coefficients: the exact finite sum $\sum_i [h_\ell(1)]_i^2$.
    ///
    /// Errors: $d < 2$, $q >$ [`MAX_DEGREE`], or a numerical failure of the coefficient routine.
    pub fn zonal_coefficients(&self, d: usize, q: usize) -> Result<Vec<f64>> {
        check_dq(d, q)?;
        match &self.kind {
            Kind::Gaussian { sigma } => {
                let beta = 1.0 / (sigma * sigma);
                let c = ScalarFunction::Exp { beta }.gegenbauer_coefficients(d, q)?;
                Ok(c.into_iter().map(|v| (v.ln() - beta).exp()).collect())
            }
            Kind::Exp { beta } => ScalarFunction::Exp { beta: *beta }.gegenbauer_coefficients(d, q),
            Kind::ReluNtk { depth } => {
                ScalarFunction::ReluNtk { depth: *depth }.gegenbauer_coefficients(d, q)
            }
            Kind::Taylor { coeffs } => {
                let s = coeffs.len() / 2 + 1;
                let table = self.ln_radial_table(d, q, s);
                Ok((0..=q)
                    .map(|l| table[l * s..(l + 1) * s].iter().map(|lc| lc.exp()).sum())
                    .collect())
            }
        }
    }

    /// ln of $[h_\ell]_i^2 / (\rho^{2(\ell+2i)})$ for the dot-product form (Eq. 22), $(q+1) \times s$ row-major.
    fn ln_radial_table(&self, d: usize, q: usize, s: usize) -> Vec<f64> {
        let half_d = d as f64 / 2.0;
        let ln_gamma_half_d = ln_gamma(half_d);
        let (ln2, ln4) = (2f64.ln(), 4f64.ln());
        let mut out = Vec::with_capacity((q + 1) * s);
        for l in 0..=q {
            let lf = l as f64;
            for i in 0..s {
                let fi = i as f64;
                let j = l + 2 * i;
                let ln_deriv = self.ln_taylor(j) + ln_gamma(j as f64 + 1.0); // ln κ^{(j)}(0)
                let v = ln_alpha(l, d) + ln_gamma_half_d + ln_deriv
                    - lf * ln2
                    - fi * ln4
                    - ln_gamma(fi + 1.0)
                    - ln_gamma(fi + lf + half_d);
                out.push(if v.is_nan() { f64::NEG_INFINITY } else { v });
            }
        }
        out
    }

    /// The truncated kernel $k_{q,s}$: degrees $\ell \le q$, radial terms $i < s$ (Eqs. 22 and 23).
    ///
    /// The ReLU NTK has order 1 (Lemma 16), so it requires $s = 1$. Errors: $d < 2$, $q >$ [`MAX_DEGREE`],
    /// $s = 0$ or $s >$ [`MAX_RADIAL_TERMS`], $s \ne 1$ for the NTK, or a numerical failure of the NTK
    /// coefficients.
    pub fn truncate(&self, d: usize, q: usize, s: usize) -> Result<TruncatedGzk> {
        check_dq(d, q)?;
        if s == 0 || s > MAX_RADIAL_TERMS {
            return Err(RfxError::invalid(
                "radial_terms",
                s,
                format!("an integer in 1..={MAX_RADIAL_TERMS}"),
            ));
        }
        match &self.kind {
            Kind::ReluNtk { .. } => {
                if s != 1 {
                    return Err(RfxError::invalid(
                        "radial_terms",
                        s,
                        "1 for the ReLU NTK (a GZK of order s = 1, Lemma 16)",
                    ));
                }
                let c = self.zonal_coefficients(d, q)?;
                Ok(TruncatedGzk {
                    kernel: self.clone(),
                    d,
                    q,
                    s: 1,
                    scale: 1.0,
                    damping: false,
                    power: RadialPower::Linear,
                    ln_coef: c.iter().map(|v| v.ln()).collect(),
                })
            }
            Kind::Gaussian { sigma } => Ok(TruncatedGzk {
                kernel: self.clone(),
                d,
                q,
                s,
                scale: 1.0 / sigma,
                damping: true,
                power: RadialPower::Degree,
                ln_coef: self.ln_radial_table(d, q, s),
            }),
            Kind::Exp { .. } | Kind::Taylor { .. } => Ok(TruncatedGzk {
                kernel: self.clone(),
                d,
                q,
                s,
                scale: 1.0,
                damping: false,
                power: RadialPower::Degree,
                ln_coef: self.ln_radial_table(d, q, s),
            }),
        }
    }

    /// The unit-norm fast path: the zonal kernel $\sum_{\ell \le q} c_\ell P_d^\ell(\langle\hat x,\hat y\rangle)$
    /// (Lemma 2) with $c_\ell$ = [`Gzk::zonal_coefficients`], a GZK of order $s = 1$ with constant radial
    /// function $h_\ell \equiv \sqrt{c_\ell}$. On unit-norm inputs it is the degree-$q$ truncation of this kernel
    /// (no radial truncation at all); elsewhere it depends on the directions only.
    pub fn zonal(&self, d: usize, q: usize) -> Result<TruncatedGzk> {
        let c = self.zonal_coefficients(d, q)?;
        Ok(TruncatedGzk {
            kernel: self.clone(),
            d,
            q,
            s: 1,
            scale: 1.0,
            damping: false,
            power: RadialPower::Constant,
            ln_coef: c.iter().map(|v| v.ln()).collect(),
        })
    }
}

fn check_dq(d: usize, q: usize) -> Result<()> {
    Basis::Gegenbauer(d).validate()?;
    if q > MAX_DEGREE {
        return Err(RfxError::invalid(
            "degree",
            q,
            format!("an integer in 0..={MAX_DEGREE}"),
        ));
    }
    Ok(())
}

fn horner(coeffs: &[f64], t: f64) -> f64 {
    coeffs.iter().rev().fold(0.0, |acc, &a| acc * t + a)
}

/// Euclidean norms of the rows.
pub(crate) fn row_norms(x: ArrayView2<'_, f64>) -> Array1<f64> {
    x.map_axis(Axis(1), |r| r.dot(&r).sqrt())
}

/// The rows divided by their norms (zero rows stay zero).
pub(crate) fn unit_rows(x: ArrayView2<'_, f64>, norms: &Array1<f64>) -> Array2<f64> {
    let mut u = x.to_owned();
    for (mut row, &r) in u.axis_iter_mut(Axis(0)).zip(norms) {
        if r > 0.0 {
            row.mapv_inplace(|v| v / r);
        } else {
            row.fill(0.0);
        }
    }
    u
}

/// Applies `f(i, row_i)` to every row of `k`, in parallel when `k` is large (deterministic either way).
pub(crate) fn for_each_row<F>(mut k: ArrayViewMut2<'_, f64>, f: F)
where
    F: Fn(usize, ndarray::ArrayViewMut1<'_, f64>) + Sync + Send,
{
    let rows = Array1::from_iter(0..k.nrows());
    let parallel = k.len() >= PAR_ENTRIES;
    let zip = Zip::from(k.rows_mut()).and(&rows);
    if parallel {
        zip.par_for_each(|row, &i| f(i, row));
    } else {
        zip.for_each(|row, &i| f(i, row));
    }
}

impl Kernel for Gzk {
    /// The exact kernel value (see the constructors).
    fn eval(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
        match &self.kind {
            // σ was checked by `Gzk::gaussian`
            Kind::Gaussian { sigma } => {
                rfx_kernels::GaussianKernel::new(*sigma).map_or(f64::NAN, |k| k.eval(x, y))
            }
            Kind::ReluNtk { depth } => {
                let (rx, ry) = (x.dot(&x).sqrt(), y.dot(&y).sqrt());
                if rx > 0.0 && ry > 0.0 {
                    rx * ry * rfx_kernels::relu_ntk(*depth, x.dot(&y) / (rx * ry))
                } else {
                    0.0
                }
            }
            Kind::Exp { beta } => (beta * x.dot(&y)).exp(),
            Kind::Taylor { coeffs } => horner(coeffs, x.dot(&y)),
        }
    }

    /// The exact Gram matrix: one GEMM $XY^\top$ for the inner products, then the entries row by row
    /// (rayon when there are at least $2^{14}$ of them). When `y` is the same view as `x`, `dsyrk` computes
    /// the upper triangle only (half the flops), the kernel function is applied there, and the result is
    /// mirrored (exactly symmetric).
    fn gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        rfx_core::check_gram_columns(x, y)?;
        let sym = x.as_ptr() == y.as_ptr() && x.dim() == y.dim() && x.strides() == y.strides();
        let mut g = if sym {
            rfx_linalg::gram_rows_upper_serial(x)?
        } else {
            x.dot(&y.t())
        };
        // row i is processed from column j0(i): the upper triangle when symmetric
        let j0 = |i: usize| if sym { i } else { 0 };
        match &self.kind {
            Kind::Gaussian { sigma } => {
                let (nx, ny) = (row_norms(x), row_norms(y));
                let inv = 1.0 / (2.0 * sigma * sigma);
                for_each_row(g.view_mut(), |i, mut row| {
                    let a = nx[i] * nx[i];
                    let j = j0(i);
                    Zip::from(row.slice_mut(s![j..]))
                        .and(ny.slice(s![j..]))
                        .for_each(|v, &b| {
                            let sq = (a + b * b - 2.0 * *v).max(0.0);
                            *v = (-sq * inv).exp();
                        });
                });
            }
            Kind::ReluNtk { depth } => {
                let (nx, ny) = (row_norms(x), row_norms(y));
                let depth = *depth;
                for_each_row(g.view_mut(), |i, mut row| {
                    let a = nx[i];
                    let j = j0(i);
                    Zip::from(row.slice_mut(s![j..]))
                        .and(ny.slice(s![j..]))
                        .for_each(|v, &b| {
                            *v = if a > 0.0 && b > 0.0 {
                                a * b * rfx_kernels::relu_ntk(depth, *v / (a * b))
                            } else {
                                0.0
                            };
                        });
                });
            }
            Kind::Exp { beta } => {
                let beta = *beta;
                for_each_row(g.view_mut(), |i, mut row| {
                    row.slice_mut(s![j0(i)..])
                        .mapv_inplace(|v| (beta * v).exp())
                });
            }
            Kind::Taylor { coeffs } => {
                for_each_row(g.view_mut(), |i, mut row| {
                    row.slice_mut(s![j0(i)..])
                        .mapv_inplace(|v| horner(coeffs, v))
                });
            }
        }
        if sym {
            mirror_upper(&mut g);
        }
        Ok(g)
    }
}

/// Copies the upper triangle onto the lower one, in 64 x 64 tiles (cache-friendly transpose).
fn mirror_upper(g: &mut Array2<f64>) {
    const T: usize = 64;
    let n = g.nrows();
    for bi in (0..n).step_by(T) {
        for bj in (0..=bi).step_by(T) {
            for i in bi..(bi + T).min(n) {
                for j in bj..(bj + T).min(i) {
                    g[[i, j]] = g[[j, i]];
                }
            }
        }
    }
}

/// How the radial functions depend on $\rho = \Vert x\Vert/\sigma$: $[h_\ell(\rho)]\_i = \sqrt{C_{\ell,i}}\thinspace
/// \rho^{p_{\ell,i}}\thinspace e^{-\delta\rho^2/2}$.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RadialPower {
    /// $p = \ell + 2i$ (dot-product and Gaussian kernels, Eqs. 22–23).
    Degree,
    /// $p = 1$ (ReLU NTK, Lemma 16).
    Linear,
    /// $p = 0$ (zonal kernel, Lemma 2).
    Constant,
}

/// A truncated generalized zonal kernel $k_{q,s}$ (Eqs. 22–23), the kernel that random Gegenbauer features
/// estimate without bias (Definition 8):
/// $$k_{q,s}(x,y) = \sum_{\ell=0}^{q}\sum_{i=0}^{s-1}[h_\ell(\Vert x\Vert)]\_i\thinspace[h_\ell(\Vert y\Vert)]_i\thickspace
///   P_d^\ell\negthinspace\left(\frac{\langle x,y\rangle}{\Vert x\Vert\Vert y\Vert}\right).$$
/// Obtained from [`Gzk::truncate`] or [`Gzk::zonal`]; it is a positive-definite [`Kernel`] in its own right,
/// tied to the dimension $d$ (its `eval` returns NaN for vectors of another length, its `gram` an error).
#[derive(Clone, Debug, PartialEq)]
pub struct TruncatedGzk {
    kernel: Gzk,
    d: usize,
    q: usize,
    s: usize,
    /// $1/\sigma$ (1 except for the Gaussian).
    scale: f64,
    /// Whether the radial terms carry $e^{-\rho^2/2}$.
    damping: bool,
    power: RadialPower,
    /// $\ln C_{\ell,i}$, $(q+1) \times s$ row-major; $-\infty$ for a zero coefficient.
    ln_coef: Vec<f64>,
}

impl TruncatedGzk {
    /// The exact kernel this truncates.
    pub fn kernel(&self) -> &Gzk {
        &self.kernel
    }

    /// The input dimension $d$.
    pub fn input_dim(&self) -> usize {
        self.d
    }

    /// The truncation degree $q$.
    pub fn degree(&self) -> usize {
        self.q
    }

    /// The number of radial terms $s$ (the order of the truncated GZK).
    pub fn radial_terms(&self) -> usize {
        self.s
    }

    /// Whether this is the unit-norm (zonal) fast path of [`Gzk::zonal`].
    pub fn is_zonal(&self) -> bool {
        self.power == RadialPower::Constant
    }

    #[inline]
    fn power(&self, l: usize, i: usize) -> f64 {
        match self.power {
            RadialPower::Degree => (l + 2 * i) as f64,
            RadialPower::Linear => 1.0,
            RadialPower::Constant => 0.0,
        }
    }

    /// Fills `out[ℓ·s + i]` with $\sqrt{\alpha_{\ell,d}}^{\thinspace w}\thinspace[h_\ell(r)]_i \cdot \text{factor}$ where `w` is 0 or 1,
    /// all in log space; `ln_factor` is added to the exponent.
    pub(crate) fn radial_into(&self, r: f64, with_alpha: bool, ln_factor: f64, out: &mut [f64]) {
        let rho = r * self.scale;
        let ln_rho = rho.ln();
        let damp = if self.damping { rho * rho / 2.0 } else { 0.0 };
        for l in 0..=self.q {
            let ln_a = if with_alpha {
                0.5 * ln_alpha(l, self.d)
            } else {
                0.0
            };
            for i in 0..self.s {
                let lc = self.ln_coef[l * self.s + i];
                let p = self.power(l, i);
                out[l * self.s + i] = if lc == f64::NEG_INFINITY {
                    0.0
                } else if p == 0.0 {
                    (0.5 * lc + ln_a + ln_factor - damp).exp()
                } else if rho == 0.0 {
                    0.0
                } else {
                    (0.5 * lc + ln_a + ln_factor + p * ln_rho - damp).exp()
                };
            }
        }
    }

    /// The radial functions at norm $r$: a $(q+1) \times s$ array with entries $[h_\ell(r)]_i$.
    pub fn radial(&self, r: f64) -> Array2<f64> {
        let mut out = vec![0.0; (self.q + 1) * self.s];
        self.radial_into(r, false, 0.0, &mut out);
        let s = self.s;
        Array2::from_shape_fn((self.q + 1, s), |(l, i)| out[l * s + i])
    }

    /// An upper bound on the feature norm of Lemma 5 for every direction $w$:
    /// $$\sup_w \Vert\phi_x(w)\Vert \le B(r) = \sum_{\ell=0}^q \sqrt{\alpha_{\ell,d}}\thinspace\Vert h_\ell(r)\Vert,\qquad r = \Vert x\Vert,$$
    /// from $|P_d^\ell| \le 1$ on $[-1,1]$. With $\mathbb E_w\Vert\phi_y(w)\Vert^2 = k_{q,s}(y,y)$ (Lemma 5) it bounds
    /// the variance of one direction's contribution to $\langle z(x), z(y)\rangle$ by
    /// $\min\lbrace B(\Vert x\Vert)^2 k_{q,s}(y,y),\thinspace B(\Vert y\Vert)^2 k_{q,s}(x,x)\rbrace$.
    pub fn feature_norm_bound(&self, r: f64) -> f64 {
        let mut out = vec![0.0; (self.q + 1) * self.s];
        self.radial_into(r, true, 0.0, &mut out);
        out.chunks(self.s)
            .map(|h| h.iter().map(|v| v * v).sum::<f64>().sqrt())
            .sum()
    }

    /// The uniform upper bound of Lemma 7 on the ridge leverage scores $\tau_\lambda(w) =
    /// \operatorname{Tr}(\Phi_w^\top(K+\lambda I)^{-1}\Phi_w)$ (Definition 6) of this kernel on data with row
    /// norms `norms`:
    /// $$\tau_\lambda(w) \le \sum_{\ell=0}^{q}\alpha_{\ell,d}\thinspace\min\Big\lbrace\frac{\pi^2(\ell+1)^2}{6\lambda}
    ///   \sum_{j}\Vert h_\ell(\Vert x_j\Vert)\Vert^2,\thickspace s\Big\rbrace\quad\text{for every } w \in \mathbb{S}^{d-1}$$
    /// ($h_\ell = 0$ for $\ell > q$). Theorem 9 multiplies it by $\frac{8}{3\varepsilon^2}\log\frac{16s_\lambda}
    /// {\delta}$ to get the number of directions. Errors: $\lambda$ not finite and positive.
    pub fn leverage_bound(&self, norms: &[f64], lambda: f64) -> Result<f64> {
        if !(lambda > 0.0 && lambda.is_finite()) {
            return Err(RfxError::invalid("lambda", lambda, "a finite real > 0"));
        }
        let mut mass = vec![0.0; self.q + 1];
        let mut h = vec![0.0; (self.q + 1) * self.s];
        for &r in norms {
            self.radial_into(r, false, 0.0, &mut h);
            for (m, hl) in mass.iter_mut().zip(h.chunks(self.s)) {
                *m += hl.iter().map(|v| v * v).sum::<f64>();
            }
        }
        let pi2 = std::f64::consts::PI * std::f64::consts::PI;
        Ok(mass
            .iter()
            .enumerate()
            .map(|(l, &m)| {
                let lf = (l + 1) as f64;
                crate::harmonics::alpha(l, self.d)
                    * (pi2 * lf * lf / (6.0 * lambda) * m).min(self.s as f64)
            })
            .sum())
    }

    /// Radial values $\sqrt{\alpha_{\ell,d}}^{\thinspace w}[h_\ell(r_j)]_i e^{f}$ ($f$ = `ln_factor`) for all rows: $n \times (q+1)s$.
    pub(crate) fn radial_matrix(
        &self,
        norms: &Array1<f64>,
        with_alpha: bool,
        ln_factor: f64,
    ) -> Array2<f64> {
        let width = (self.q + 1) * self.s;
        let mut h = Array2::<f64>::zeros((norms.len(), width));
        for (mut row, &r) in h.axis_iter_mut(Axis(0)).zip(norms) {
            if let Some(out) = row.as_slice_mut() {
                self.radial_into(r, with_alpha, ln_factor, out);
            }
        }
        h
    }

    fn check_dim(&self, x: ArrayView2<'_, f64>) -> Result<()> {
        if x.ncols() != self.d {
            return Err(RfxError::DimensionMismatch(format!(
                "truncated GZK for d = {} applied to data with d = {}",
                self.d,
                x.ncols()
            )));
        }
        Ok(())
    }
}

impl Kernel for TruncatedGzk {
    /// $k_{q,s}(x,y)$ by the recurrence for $P_d^0,\dots,P_d^q$ at the cosine (0 if $x$ or $y$ is 0).
    /// NaN if the vectors do not have length $d$.
    fn eval(&self, x: ArrayView1<'_, f64>, y: ArrayView1<'_, f64>) -> f64 {
        if x.len() != self.d || y.len() != self.d {
            return f64::NAN;
        }
        let (rx, ry) = (x.dot(&x).sqrt(), y.dot(&y).sqrt());
        let cos = if rx > 0.0 && ry > 0.0 {
            (x.dot(&y) / (rx * ry)).clamp(-1.0, 1.0)
        } else {
            0.0
        };
        let mut p = vec![0.0; self.q + 1];
        gegenbauer_all(self.d, cos, &mut p);
        let (hx, hy) = (self.radial(rx), self.radial(ry));
        p.iter()
            .enumerate()
            .map(|(l, &pl)| pl * hx.row(l).dot(&hy.row(l)))
            .sum()
    }

    /// $K = \sum_{\ell\le q} (H_\ell^x H_\ell^{y\top}) \circ P_d^\ell(C)$ where $C = \hat X\hat Y^\top$ (one GEMM),
    /// $H^x_\ell$ holds the radial vectors $h_\ell(\Vert x_i\Vert)$ as rows, and the $P_d^\ell(C)$ come from one pass of
    /// the recurrence ([`gegenbauer_for_each`]). Cost $O(nmd + nmqs)$.
    fn gram(&self, x: ArrayView2<'_, f64>, y: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        rfx_core::check_gram_columns(x, y)?;
        self.check_dim(x)?;
        let (nx, ny) = (row_norms(x), row_norms(y));
        let (ux, uy) = (unit_rows(x, &nx), unit_rows(y, &ny));
        let mut c = ux.dot(&uy.t());
        c.mapv_inplace(|v| v.clamp(-1.0, 1.0));
        let (hx, hy) = (
            self.radial_matrix(&nx, false, 0.0),
            self.radial_matrix(&ny, false, 0.0),
        );
        let s = self.s;
        let mut k = Array2::<f64>::zeros(c.dim());
        gegenbauer_for_each(Basis::Gegenbauer(self.d), self.q, c.view(), |l, p| {
            let cols = s![.., l * s..(l + 1) * s];
            let r = hx.slice(cols).dot(&hy.slice(cols).t());
            let zip = Zip::from(&mut k).and(&r).and(&p);
            if p.len() >= PAR_ENTRIES {
                zip.par_for_each(|kv, &rv, &pv| *kv += rv * pv);
            } else {
                zip.for_each(|kv, &rv, &pv| *kv += rv * pv);
            }
        })?;
        Ok(k)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::series::Series;
    use rand::Rng;
    use rand_distr::StandardNormal;
    use rfx_core::{rng_stream, RfxRng};

    /// `n` points in $\mathbb{R}^d$ with uniformly random directions and norms uniform in `[r_min, r_max]`.
    pub(crate) fn points(
        n: usize,
        d: usize,
        r_min: f64,
        r_max: f64,
        rng: &mut RfxRng,
    ) -> Array2<f64> {
        let mut x = Array2::<f64>::zeros((n, d));
        for mut row in x.axis_iter_mut(Axis(0)) {
            row.mapv_inplace(|_| rng.sample(StandardNormal));
            let norm = row.dot(&row).sqrt();
            let r = r_min + (r_max - r_min) * rng.gen::<f64>();
            row.mapv_inplace(|v| v * r / norm);
        }
        x
    }

    fn max_abs_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
        Zip::from(a)
            .and(b)
            .fold(0.0f64, |m, &x, &y| m.max((x - y).abs()))
    }

    #[test]
    fn truncated_series_reproduce_exp_and_gaussian() {
        // Research notes §11 item 6 (Lemmas 4 and 15): q = s = 40, ‖x‖, ‖y‖ ≤ 1.5. The neglected terms are
        // below 1.5^{82}/(2^{41}·41!)·e^{2.25} ≈ 1e-51 (degree) and 1.5^{160}/(4^{40}·40!) (radial):
        // what remains is rounding, ≲ 1e-14 relative to Σ_ℓ |c_ℓ| ≤ e^{2.25}.
        let mut worst: f64 = 0.0;
        for d in [2, 3, 5, 10] {
            let mut rng = rng_stream(1, &format!("series-d={d}"));
            let x = points(30, d, 0.0, 1.5, &mut rng);
            for kernel in [Gzk::exponential(1.0).unwrap(), Gzk::gaussian(1.0).unwrap()] {
                let t = kernel.truncate(d, 40, 40).unwrap();
                let exact = kernel.gram(x.view(), x.view()).unwrap();
                let approx = t.gram(x.view(), x.view()).unwrap();
                let err = max_abs_diff(&exact, &approx);
                worst = worst.max(err);
                assert!(err < 1e-12, "{} d={d}: max error {err:e}", kernel.name());
                // eval agrees with gram.
                for (i, j) in [(0, 1), (2, 2), (5, 17)] {
                    let e = t.eval(x.row(i), x.row(j));
                    assert!(
                        (e - approx[[i, j]]).abs() < 1e-13,
                        "eval vs gram {e} {}",
                        approx[[i, j]]
                    );
                }
            }
        }
        eprintln!("q = s = 40: worst |k_qs - k| = {worst:e} (tolerance 1e-12)");
    }

    #[test]
    fn gaussian_bandwidth_and_radial_closed_form() {
        // exp(−‖x−y‖²/(2σ²)) with σ = 0.6 on ‖x‖ ≤ 0.9 is the σ = 1 kernel on x/σ (‖x/σ‖ ≤ 1.5).
        let d = 4;
        let mut rng = rng_stream(2, "bandwidth");
        let x = points(20, d, 0.0, 0.9, &mut rng);
        let k = Gzk::gaussian(0.6).unwrap();
        let err = max_abs_diff(
            &k.gram(x.view(), x.view()).unwrap(),
            &k.truncate(d, 40, 40)
                .unwrap()
                .gram(x.view(), x.view())
                .unwrap(),
        );
        assert!(err < 1e-12, "σ = 0.6: {err:e}");
        // Untruncated radial kernel in closed form (research notes §5.2) at a = b = 1:
        // Σ_i [h_ℓ(1)]_i² = c_ℓ(e^{t−1}) = zonal coefficient of the σ = 1 Gaussian.
        let t = k.truncate(d, 12, 40).unwrap();
        let c = Gzk::gaussian(1.0)
            .unwrap()
            .zonal_coefficients(d, 12)
            .unwrap();
        let h = t.radial(0.6); // ρ = 1
        for (l, &cl) in c.iter().enumerate() {
            let sum: f64 = h.row(l).iter().map(|v| v * v).sum();
            // Log-gamma arithmetic on both sides: relative agreement ~1e-14.
            assert!((sum - cl).abs() <= 1e-12 * cl, "ℓ={l}: {sum} vs {cl}");
        }
    }

    /// Issue 60: (x.y + 1e6)^60 said "invalid parameter `taylor[0]` = inf", a name the user never wrote.
    #[test]
    fn polynomial_overflow_names_c_and_degree() {
        let e = Gzk::polynomial(60, 1e6).unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid parameter `c` = 1000000 with degree = 60: allowed c^degree finite in float64 (it \
             overflows here); at degree 60, c below about 1.373e5, or a lower degree"
        );
        assert!(Gzk::polynomial(60, 1.3e5).is_ok());
        assert!(Gzk::polynomial(3, 1e6).is_ok());
    }

    #[test]
    fn polynomial_kernel_is_a_finite_gzk() {
        // (⟨x,y⟩ + c)^p has κ^{(j)}(0) = 0 for j > p: with q ≥ p and s = ⌊p/2⌋+1 the GZK is exact (Lemma 4).
        for d in [2, 3, 7] {
            let mut rng = rng_stream(3, &format!("poly-d={d}"));
            let x = points(15, d, 0.0, 2.0, &mut rng);
            let k = Gzk::polynomial(5, 0.5).unwrap();
            let exact = k.gram(x.view(), x.view()).unwrap();
            let approx = k
                .truncate(d, 5, 3)
                .unwrap()
                .gram(x.view(), x.view())
                .unwrap();
            let scale = exact.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            let err = max_abs_diff(&exact, &approx);
            assert!(err < 1e-13 * scale, "d={d}: {err:e} (scale {scale})");
            // Dropping the last radial term must change it (the test can fail).
            let short = k
                .truncate(d, 5, 2)
                .unwrap()
                .gram(x.view(), x.view())
                .unwrap();
            assert!(max_abs_diff(&exact, &short) > 1e-3);
            // Zonal coefficients on the sphere: κ(t) = Σ c_ℓ P_ℓ(t).
            let c = k.zonal_coefficients(d, 5).unwrap();
            let series = Series::new(Basis::Gegenbauer(d), c).unwrap();
            for t in [-1.0, -0.3, 0.2, 0.9] {
                assert!((series.eval(t) - k.on_sphere(t)).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn ntk_as_gzk() {
        // Lemma 16 (corrected): Θ_q(x,y) = ‖x‖‖y‖ Σ_{ℓ≤q} c_ℓ P_d^ℓ(cos).
        let d = 5;
        let k = Gzk::relu_ntk(2).unwrap();
        let mut rng = rng_stream(4, "ntk");
        let mut x = points(12, d, 0.2, 2.0, &mut rng);
        x.row_mut(3).fill(0.0);
        let t = k.truncate(d, 15, 1).unwrap();
        let c = k.zonal_coefficients(d, 15).unwrap();
        let series = Series::new(Basis::Gegenbauer(d), c).unwrap();
        let g = t.gram(x.view(), x.view()).unwrap();
        let exact = k.gram(x.view(), x.view()).unwrap();
        let norms = row_norms(x.view());
        for i in 0..x.nrows() {
            for j in 0..x.nrows() {
                let (a, b) = (norms[i], norms[j]);
                let want = if a > 0.0 && b > 0.0 {
                    a * b * series.eval(x.row(i).dot(&x.row(j)) / (a * b))
                } else {
                    0.0
                };
                assert!((g[[i, j]] - want).abs() < 1e-12, "{i},{j}");
                assert!((exact[[i, j]] - k.eval(x.row(i), x.row(j))).abs() < 1e-12);
            }
        }
        assert_eq!(exact.row(3).iter().fold(0.0f64, |m, v| m.max(v.abs())), 0.0);
        assert_eq!(g.row(3).iter().fold(0.0f64, |m, v| m.max(v.abs())), 0.0);
        // The truncation error is ‖x‖‖y‖ times the error of the degree-15 series of K^(2), bounded by its sup
        // norm on [-1, 1] (grid of 20,001 points; 1 % slack for the grid).
        let sup = crate::series::sup_error(|t| rfx_kernels::relu_ntk(2, t), &series, 20_001);
        assert!(sup > 1e-3 && sup < 0.2, "sup error {sup}");
        for i in 0..x.nrows() {
            for j in 0..x.nrows() {
                let bound = 1.01 * norms[i] * norms[j] * sup + 1e-12;
                assert!((g[[i, j]] - exact[[i, j]]).abs() <= bound, "{i},{j}");
            }
        }
    }

    #[test]
    fn zonal_fast_path_on_the_sphere() {
        // On unit vectors the zonal kernel of degree 40 equals the Gaussian (σ² = 1/2 as in Fig. 1) and
        // e^{β t}: coefficients decay like 2^ℓ/ℓ!, so the tail is below 1e-30.
        let d = 6;
        let mut rng = rng_stream(5, "zonal");
        let x = points(25, d, 1.0, 1.0, &mut rng);
        for k in [
            Gzk::gaussian(0.5f64.sqrt()).unwrap(),
            Gzk::exponential(2.0).unwrap(),
        ] {
            let z = k.zonal(d, 40).unwrap();
            assert!(z.is_zonal());
            let err = max_abs_diff(
                &k.gram(x.view(), x.view()).unwrap(),
                &z.gram(x.view(), x.view()).unwrap(),
            );
            assert!(err < 1e-12, "{}: {err:e}", k.name());
        }
        // NTK: zonal and truncated (s = 1) agree on the sphere.
        let k = Gzk::relu_ntk(1).unwrap();
        let err = max_abs_diff(
            &k.zonal(d, 10).unwrap().gram(x.view(), x.view()).unwrap(),
            &k.truncate(d, 10, 1)
                .unwrap()
                .gram(x.view(), x.view())
                .unwrap(),
        );
        assert!(err < 1e-13, "{err:e}");
    }

    #[test]
    fn zero_vectors_and_gram_shapes() {
        let d = 3;
        let mut rng = rng_stream(6, "zero");
        let mut x = points(6, d, 0.5, 1.5, &mut rng);
        x.row_mut(0).fill(0.0);
        let y = points(4, d, 0.5, 1.5, &mut rng);
        for k in [
            Gzk::gaussian(1.0).unwrap(),
            Gzk::exponential(1.0).unwrap(),
            Gzk::relu_ntk(2).unwrap(),
        ] {
            let s = if k.sigma().is_some() || k.name().starts_with("exp") {
                20
            } else {
                1
            };
            let t = k.truncate(d, 20, s).unwrap();
            let (g, gt) = (
                k.gram(x.view(), y.view()).unwrap(),
                t.gram(x.view(), y.view()).unwrap(),
            );
            assert_eq!(g.dim(), (6, 4));
            assert_eq!(gt.dim(), (6, 4));
            for j in 0..4 {
                let r2 = y.row(j).dot(&y.row(j));
                let want = match k.name().as_str() {
                    n if n.starts_with("gaussian") => (-r2 / 2.0).exp(),
                    n if n.starts_with("exp") => 1.0,
                    _ => 0.0,
                };
                assert!((g[[0, j]] - want).abs() < 1e-15, "{}", k.name());
                assert!((gt[[0, j]] - want).abs() < 1e-14, "{}", k.name());
                assert!((t.eval(x.row(0), y.row(j)) - want).abs() < 1e-14);
            }
            assert!((t.eval(x.row(0), x.row(0)) - k.eval(x.row(0), x.row(0))).abs() < 1e-15);
            // Tiny norms: ρ^{ℓ+2i} underflows smoothly to the x = 0 values (no NaN from ln ρ or 0/0).
            let mut tiny = x.clone();
            tiny.row_mut(0)
                .assign(&ndarray::arr1(&[1e-150, -2e-150, 0.5e-150]));
            let gt2 = t.gram(tiny.view(), y.view()).unwrap();
            let g2 = k.gram(tiny.view(), y.view()).unwrap();
            for j in 0..4 {
                assert!((gt2[[0, j]] - gt[[0, j]]).abs() < 1e-14, "{}", k.name());
                assert!((g2[[0, j]] - g[[0, j]]).abs() < 1e-14, "{}", k.name());
            }
        }
    }

    #[test]
    fn invalid_parameters_are_errors() {
        assert!(Gzk::gaussian(0.0).is_err());
        assert!(Gzk::gaussian(f64::NAN).is_err());
        assert!(Gzk::gaussian(f64::INFINITY).is_err());
        assert!(Gzk::exponential(-1.0).is_err());
        assert!(Gzk::polynomial(3, -0.5).is_err());
        assert!(Gzk::dot_product(vec![]).is_err());
        assert!(Gzk::dot_product(vec![1.0, -0.1]).is_err());
        assert!(Gzk::dot_product(vec![1.0, f64::NAN]).is_err());
        assert!(Gzk::relu_ntk(1001).is_err());
        let g = Gzk::gaussian(1.0).unwrap();
        assert!(g.truncate(1, 5, 2).is_err());
        assert!(g.truncate(3, MAX_DEGREE + 1, 2).is_err());
        assert!(g.truncate(3, 5, 0).is_err());
        assert!(g.truncate(3, 5, MAX_RADIAL_TERMS + 1).is_err());
        assert!(g.zonal(1, 5).is_err());
        assert!(Gzk::relu_ntk(2).unwrap().truncate(3, 5, 2).is_err());
        assert!(Gzk::relu_ntk(2).unwrap().truncate(3, 5, 1).is_ok());
        // Dimension mismatches.
        let (a, b) = (Array2::<f64>::zeros((2, 3)), Array2::<f64>::zeros((2, 4)));
        assert!(matches!(
            g.gram(a.view(), b.view()),
            Err(RfxError::DimensionMismatch(_))
        ));
        let t = g.truncate(4, 5, 2).unwrap();
        assert!(matches!(
            t.gram(a.view(), a.view()),
            Err(RfxError::DimensionMismatch(_))
        ));
        assert!(t.eval(a.row(0), a.row(1)).is_nan());
    }

    #[test]
    fn large_gram_is_parallel_and_consistent() {
        // 150 × 150 = 22,500 entries ≥ PAR_ENTRIES: the parallel path must equal entry-wise evaluation.
        let d = 3;
        let mut rng = rng_stream(7, "large");
        let x = points(150, d, 0.0, 1.2, &mut rng);
        for k in [Gzk::gaussian(0.8).unwrap(), Gzk::relu_ntk(2).unwrap()] {
            let g = k.gram(x.view(), x.view()).unwrap();
            for (i, j) in [(0, 149), (77, 3), (120, 120)] {
                assert!((g[[i, j]] - k.eval(x.row(i), x.row(j))).abs() < 1e-13);
            }
        }
    }
}
