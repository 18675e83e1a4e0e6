//! Truncated series $\sum_{\ell \le q} c_\ell\thinspace\phi_\ell(t)$ in a [`Basis`], the named scalar functions of
//! the Figure-1 experiment, and the sup-norm error on an equispaced grid.

use rayon::prelude::*;
use rfx_core::{Result, RfxError};

use crate::coefficients::{
    exp_gegenbauer_coefficients, exp_taylor_coefficients, gegenbauer_coefficients,
    gegenbauer_coefficients_angular,
};
use crate::gegenbauer::Basis;
use crate::ntk::relu_ntk_taylor;
use rfx_kernels::relu_ntk;

/// Number of grid points of the sup-norm error used by the Figure-1 experiment (research notes §10.1).
pub const SUP_GRID_POINTS: usize = 20_001;

/// Angular Gauss–Legendre nodes used for the Gegenbauer coefficients of the ReLU NTK (see
/// [`ScalarFunction::gegenbauer_coefficients`]); 100 already reach rounding level.
pub const NTK_QUADRATURE_NODES: usize = 1000;

/// A truncated series $s(t) = \sum_{\ell=0}^{q} c_\ell\thinspace\phi_\ell(t)$ with $\phi_\ell$ from a [`Basis`]
/// ($t^\ell$ or $P_d^\ell$).
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    basis: Basis,
    coeffs: Vec<f64>,
    /// Recurrence coefficients $(A_\ell, B_\ell)$, $\ell = 0..=q+1$ (see [`Basis::recurrence`]).
    rec: Vec<(f64, f64)>,
}

impl Series {
    /// A series with coefficients $c_0, \dots, c_q$ (`coeffs`, at least one). Errors (`InvalidParameter`) for an
    /// invalid basis, an empty or non-finite coefficient vector.
    pub fn new(basis: Basis, coeffs: Vec<f64>) -> Result<Self> {
        basis.validate()?;
        if coeffs.is_empty() {
            return Err(RfxError::invalid(
                "coeffs",
                "[]",
                "at least one coefficient",
            ));
        }
        if let Some((l, c)) = coeffs.iter().enumerate().find(|(_, c)| !c.is_finite()) {
            return Err(RfxError::invalid(
                format!("coeffs[{l}]"),
                c,
                "finite coefficients",
            ));
        }
        let rec = (0..coeffs.len() + 1).map(|l| basis.recurrence(l)).collect();
        Ok(Series { basis, coeffs, rec })
    }

    /// The Taylor series at 0 of `f` truncated at degree `q` (monomial basis).
    pub fn taylor(f: &ScalarFunction, q: usize) -> Result<Self> {
        f.series(Basis::Monomial, q)
    }

    /// The Gegenbauer series of an arbitrary function `f` truncated at degree `q`, coefficients (Eq. 7) by
    /// `nodes`-point Gauss–Jacobi quadrature ([`gegenbauer_coefficients`]).
    pub fn gegenbauer_of<F: Fn(f64) -> f64>(
        f: F,
        d: usize,
        q: usize,
        nodes: usize,
    ) -> Result<Self> {
        Series::new(
            Basis::Gegenbauer(d),
            gegenbauer_coefficients(f, d, q, nodes)?,
        )
    }

    /// The basis.
    pub fn basis(&self) -> Basis {
        self.basis
    }

    /// The coefficients $c_0, \dots, c_q$.
    pub fn coeffs(&self) -> &[f64] {
        &self.coeffs
    }

    /// The degree $q$ (number of coefficients minus one).
    pub fn degree(&self) -> usize {
        self.coeffs.len() - 1
    }

    /// $s(t)$ by Clenshaw's algorithm for $\phi_{\ell+1} = A_\ell t\phi_\ell - B_\ell\phi_{\ell-1}$:
    /// $b_{q+1} = b_{q+2} = 0$, $b_\ell = c_\ell + A_\ell t\thinspace b_{\ell+1} - B_{\ell+1} b_{\ell+2}$, $s(t) = b_0$
    /// (with $\phi_0 = 1$, $A_0 = 1$). For monomials this is Horner's rule. Backward stable; the error is a few
    /// ulps times $\sum_\ell |c_\ell|$ on $[-1,1]$.
    pub fn eval(&self, t: f64) -> f64 {
        let (mut b1, mut b2) = (0.0, 0.0);
        for l in (0..self.coeffs.len()).rev() {
            let b0 = self.coeffs[l] + self.rec[l].0 * t * b1 - self.rec[l + 1].1 * b2;
            b2 = b1;
            b1 = b0;
        }
        b1
    }
}

/// The functions of the Figure-1 experiment, as functions of the cosine $t \in [-1, 1]$.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScalarFunction {
    /// $e^{\beta t}$; $\beta = 2$ is the Gaussian kernel $e^{-\Vert x-y\Vert^2} = e^{-2}e^{2\langle x,y\rangle}$ on the
    /// unit sphere (Fig. 1a).
    Exp {
        /// The rate $\beta$ (finite).
        beta: f64,
    },
    /// The depth-$L$ ReLU NTK $K^{(L)}(t)$ of [`crate::ntk`]; depth 2 is Fig. 1b.
    ReluNtk {
        /// The depth $L$.
        depth: usize,
    },
}

impl ScalarFunction {
    /// `Err(InvalidParameter)` for a non-finite $\beta$.
    pub fn validate(&self) -> Result<()> {
        match *self {
            ScalarFunction::Exp { beta } if !beta.is_finite() => {
                Err(RfxError::invalid("beta", beta, "a finite real number"))
            }
            _ => Ok(()),
        }
    }

    /// A short name: `exp(2t)`, `relu_ntk(L=2)`.
    pub fn name(&self) -> String {
        match *self {
            ScalarFunction::Exp { beta } => format!("exp({beta}t)"),
            ScalarFunction::ReluNtk { depth } => format!("relu_ntk(L={depth})"),
        }
    }

    /// The value at $t$ (the NTK clamps $t$ to $[-1, 1]$).
    pub fn eval(&self, t: f64) -> f64 {
        match *self {
            ScalarFunction::Exp { beta } => (beta * t).exp(),
            ScalarFunction::ReluNtk { depth } => relu_ntk(depth, t),
        }
    }

    /// Taylor coefficients at 0 of degrees $0..=q$: $\beta^j/j!$, or [`relu_ntk_taylor`].
    pub fn taylor_coefficients(&self, q: usize) -> Result<Vec<f64>> {
        self.validate()?;
        match *self {
            ScalarFunction::Exp { beta } => exp_taylor_coefficients(beta, q),
            ScalarFunction::ReluNtk { depth } => Ok(relu_ntk_taylor(depth, q)),
        }
    }

    /// Gegenbauer coefficients (Eq. 7) of degrees $0..=q$ for dimension $d \ge 2$.
    ///
    /// * `Exp`: the closed form [`exp_gegenbauer_coefficients`] (relative accuracy a few ulps).
    /// * `ReluNtk`: quadrature in the angle, [`gegenbauer_coefficients_angular`] with
    ///   [`NTK_QUADRATURE_NODES`] = 1000 Gauss–Legendre nodes in $\theta = \arccos t$. $K^{(L)}$ behaves like
    ///   $\sqrt{1 \mp t}$ at $t = \pm 1$, so Gauss–Jacobi in $t$ converges only algebraically (for $d = 2$ like
    ///   $n^{-2}$, error $7\cdot10^{-8}$ at 2000 nodes, $1.4\cdot10^{-8}$ at 4000), whereas in $\theta$ the
    ///   integrand is analytic and 100 nodes reach rounding level (tests). Exact coefficients are $\ge 0$
    ///   (Schoenberg: the NTK is positive definite on every sphere), and for $L = 1$ the odd ones of degree
    ///   $\ge 3$ are exactly 0; quadrature returns such zeros as round-off of either sign (about
    ///   $\varepsilon\sqrt{\alpha_{\ell,d}}$ in size). Negative values with $|c_\ell| \le 10^{-10}$ are therefore
    ///   set to 0 (keeps $\sqrt{c_\ell}$ real for feature maps and changes the series by less than the
    ///   quadrature error), while a more negative value is reported as a `Numerical` error.
    pub fn gegenbauer_coefficients(&self, d: usize, q: usize) -> Result<Vec<f64>> {
        self.validate()?;
        Basis::Gegenbauer(d).validate()?;
        match *self {
            ScalarFunction::Exp { beta } => exp_gegenbauer_coefficients(beta, d, q),
            ScalarFunction::ReluNtk { depth } => {
                let mut c = gegenbauer_coefficients_angular(
                    |t| relu_ntk(depth, t),
                    d,
                    q,
                    NTK_QUADRATURE_NODES,
                )?;
                for (l, v) in c.iter_mut().enumerate() {
                    if *v < 0.0 {
                        if *v < -NTK_NEGATIVE_TOLERANCE {
                            return Err(RfxError::Numerical(format!(
                                "Gegenbauer coefficient {l} of the depth-{depth} NTK for d = {d} is {v} < 0"
                            )));
                        }
                        *v = 0.0;
                    }
                }
                Ok(c)
            }
        }
    }

    /// Coefficients in `basis`: Taylor for [`Basis::Monomial`], Gegenbauer otherwise.
    pub fn coefficients(&self, basis: Basis, q: usize) -> Result<Vec<f64>> {
        match basis {
            Basis::Monomial => self.taylor_coefficients(q),
            Basis::Gegenbauer(d) => self.gegenbauer_coefficients(d, q),
        }
    }

    /// The truncated series of degree `q` in `basis`.
    pub fn series(&self, basis: Basis, q: usize) -> Result<Series> {
        Series::new(basis, self.coefficients(basis, q)?)
    }

    /// [`sup_error`] of `series` against this function.
    pub fn sup_error(&self, series: &Series, grid_points: usize) -> f64 {
        sup_error(|t| self.eval(t), series, grid_points)
    }
}

/// Largest negative NTK coefficient attributed to quadrature round-off (see
/// [`ScalarFunction::gegenbauer_coefficients`]).
const NTK_NEGATIVE_TOLERANCE: f64 = 1e-10;

/// The $i$-th of `n` equispaced points of $[-1, 1]$, $t_i = (2i - (n-1))/(n-1)$: exact endpoints, exactly
/// symmetric, and $t = 0$ is a grid point when $n$ is odd. `n` below 2 is treated as 2.
pub fn grid_point(i: usize, n: usize) -> f64 {
    let m = (n.max(2) - 1) as f64;
    (2.0 * i as f64 - m) / m
}

/// $\max_i |f(t_i) - g(t_i)|$ over `grid_points` equispaced points of $[-1, 1]$ (endpoints included, at least
/// 2). NaN if any difference is NaN. Evaluated in parallel; the result does not depend on the thread count
/// (the maximum is order independent).
pub fn sup_distance<F, G>(f: F, g: G, grid_points: usize) -> f64
where
    F: Fn(f64) -> f64 + Sync,
    G: Fn(f64) -> f64 + Sync,
{
    let n = grid_points.max(2);
    (0..n)
        .into_par_iter()
        .with_min_len(1024)
        .map(|i| {
            let t = grid_point(i, n);
            (f(t) - g(t)).abs()
        })
        .reduce(|| 0.0, nan_max)
}

fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// Sup-norm error $\max_i |f(t_i) - s(t_i)|$ of a truncated series on an equispaced grid of $[-1,1]$ with
/// `grid_points` points, endpoints included (the Figure-1 metric, with [`SUP_GRID_POINTS`] = 20,001).
pub fn sup_error<F: Fn(f64) -> f64 + Sync>(f: F, series: &Series, grid_points: usize) -> f64 {
    sup_distance(f, |t| series.eval(t), grid_points)
}
