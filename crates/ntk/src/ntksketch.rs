//! NTKSketch as run in the experiments of Zandieh et al. 2021 (Remark 1 and the reference code, A1.3):
//! a nonnegative, monotone polynomial fit of the NTK function, sketched with one PolySketch tree.
//!
//! **Polynomial fit** ([`fit_ntk_polynomial`]). $K^{(L)}(t) \approx P(t) = \sum_{j=0}^q \beta_j t^j$ on $[-1, 1]$ by the
//! weighted least-squares problem of the reference code (`get_poly_approx_ntk`, A1.3):
//! * nodes: 201 equispaced points on $[-1,1]$ together with $n = 15L + 5q$ points $\cos\frac{(2i+1)\pi}{4n}$,
//!   $i = 0..n-1$ (clustered near 1), sorted;
//! * weights $w_k = \mathrm{linspace}(0, 1)_k + 2/L$ on the sorted nodes (heavier near $t = 1$);
//! * $\min_\beta \sum_k w_k^2 (P(t_k) - K^{(L)}(t_k))^2 + 10^{-5}\Vert\beta\Vert^2$ subject to $\beta \ge 0$ (so that
//!   $\sqrt{\beta_j}$ is real and the kernel stays positive definite) and $P(t_k) \le P(t_{k+1})$ (monotone on
//!   the sorted nodes); then $\beta_j < 10^{-5}$ is set to 0.
//!
//! The reference solves this QP with `quadprog` (Hessian $+10^{-5}I$); here it is solved exactly as a
//! least-squares problem with linear inequality constraints ([`crate::qp::lsi`], Lawson–Hanson), the ridge
//! entering as $\sqrt{10^{-5}}I$ rows. The stated error [`NtkPolynomial::max_error`] is the maximum of
//! $|P - K^{(L)}|$ over the nodes and a 20,001-point equispaced grid.
//!
//! **Features** ([`NtkSketch`]). With $\hat x = x/\Vert x\Vert$ and a PolySketch tree of degree $2^{\lceil\log_2 q\rceil}$
//! ([`rfx_sketches::PolynomialSketch`], complex TensorSRHT nodes, `tree_dim` real outputs per degree) giving
//! $U_j(\hat x) \approx \hat x^{\otimes j}$ for $j = 1..q$:
//! $$\Psi(x) = \Vert x\Vert\thinspace\Big[\sqrt{\beta_0},\ S\big(\sqrt{\beta_1}U_1(\hat x) \oplus \dots \oplus \sqrt{\beta_q}U_q(\hat x)\big)\Big],$$
//! where $S$ is one complex-FFT SRHT to $m - 2$ reals (the reference's final `SRHTCmplx_Stndrd` to $m/2 - 1$
//! complex numbers), so the dimension is $m - 1$ as in the reference code; with `compress(false)` $S$ is
//! dropped and the dimension is $1 + q\cdot$`tree_dim`. Every stage is an unbiased linear sketch, so
//! $\mathbb E\langle\Psi(x),\Psi(y)\rangle = \Vert x\Vert\Vert y\Vert P(\rho)$ exactly; the only bias is the fit error. (The
//! theory-faithful Algorithm 1 of the paper, with Taylor polynomials of degree $\sim L^2/\varepsilon^{4/3}$ per
//! layer, is not what the experiments run and is not implemented.)

use crate::qp::{householder, lsi};
use ndarray::{s, Array2, ArrayView2, Axis, Zip};
use rfx_core::{FeatureMap, Result, RfxError, RfxRng};
use rfx_kernels::{check_depth, relu_ntk, row_norms};
use rfx_sketches::{PolynomialSketch, Srht, Transform};

/// Largest polynomial degree accepted by [`fit_ntk_polynomial`].
pub const MAX_POLY_DEGREE: usize = 32;

/// Ridge on the coefficients (the reference code's Hessian regulariser).
const RIDGE: f64 = 1e-5;
/// Coefficients below this are set to 0 after the fit (reference code).
const ZERO_BELOW: f64 = 1e-5;
/// Equispaced grid of the stated error.
const ERROR_GRID: usize = 20_001;

/// A nonnegative, monotone polynomial approximation $P(t) = \sum_j \beta_j t^j$ of the depth-$L$ ReLU NTK
/// function $K^{(L)}$ on $[-1, 1]$ (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct NtkPolynomial {
    depth: usize,
    coeffs: Vec<f64>,
    max_error: f64,
    nodes: Vec<f64>,
}

impl NtkPolynomial {
    /// The coefficients $\beta_0, \dots, \beta_q$ (all $\ge 0$).
    pub fn coefficients(&self) -> &[f64] {
        &self.coeffs
    }

    /// The depth $L$ of the fitted NTK.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The degree $q$.
    pub fn degree(&self) -> usize {
        self.coeffs.len() - 1
    }

    /// $P(t)$ (Horner).
    pub fn eval(&self, t: f64) -> f64 {
        self.coeffs.iter().rev().fold(0.0, |acc, &c| acc * t + c)
    }

    /// The stated error $\max|P - K^{(L)}|$ over the fit nodes and a 20,001-point grid of $[-1, 1]$.
    pub fn max_error(&self) -> f64 {
        self.max_error
    }

    /// The sorted fit nodes (the monotonicity constraints hold between consecutive nodes).
    pub fn nodes(&self) -> &[f64] {
        &self.nodes
    }
}

pub(crate) fn linspace(a: f64, b: f64, n: usize) -> impl Iterator<Item = f64> {
    (0..n).map(move |i| {
        if n == 1 {
            a
        } else {
            a + (b - a) * i as f64 / (n - 1) as f64
        }
    })
}

/// Fits the nonnegative, monotone degree-`degree` polynomial of the depth-`depth` ReLU NTK function
/// (module docs; reference code `get_poly_approx_ntk(L, q)`). `depth` $\ge 1$, $1 \le$ `degree` $\le 32$.
pub fn fit_ntk_polynomial(depth: usize, degree: usize) -> Result<NtkPolynomial> {
    check_depth(depth, 1)?;
    if degree == 0 || degree > MAX_POLY_DEGREE {
        return Err(RfxError::invalid(
            "degree",
            degree,
            format!("an integer in 1..={MAX_POLY_DEGREE}"),
        ));
    }
    let q = degree;
    let ncheb = 15 * depth + 5 * q;
    let mut nodes: Vec<f64> = linspace(-1.0, 1.0, 201).collect();
    nodes.extend(
        (0..ncheb).map(|i| ((2 * i + 1) as f64 * std::f64::consts::PI / (4 * ncheb) as f64).cos()),
    );
    nodes.sort_by(f64::total_cmp);
    let nn = nodes.len();
    let weights: Vec<f64> = linspace(0.0, 1.0, nn)
        .map(|v| v + 2.0 / depth as f64)
        .collect();
    let target: Vec<f64> = nodes.iter().map(|&t| relu_ntk(depth, t)).collect();
    let coeffs = fit_monotone_polynomial(&nodes, &weights, &target, q)?;
    let mut poly = NtkPolynomial {
        depth,
        coeffs,
        max_error: 0.0,
        nodes,
    };
    let grid_err = linspace(-1.0, 1.0, ERROR_GRID)
        .chain(poly.nodes.iter().copied())
        .map(|t| (poly.eval(t) - relu_ntk(depth, t)).abs())
        .fold(0.0f64, f64::max);
    poly.max_error = grid_err;
    Ok(poly)
}

/// The constrained fit shared by the NTK and the CNTK polynomials: $\min_\beta \sum_k w_k^2 (P(t_k) - y_k)^2 +
/// 10^{-5}\Vert\beta\Vert^2$ over degree-`degree` polynomials $P = \sum_j \beta_j t^j$, subject to $\beta \ge 0$ and
/// $P(t_k) \le P(t_{k+1})$ on the **sorted** nodes $t_k$; coefficients below $10^{-5}$ are then set to 0
/// (module docs). Solved exactly by [`crate::qp::lsi`].
pub(crate) fn fit_monotone_polynomial(
    nodes: &[f64],
    weights: &[f64],
    target: &[f64],
    degree: usize,
) -> Result<Vec<f64>> {
    let (q, nn) = (degree, nodes.len());
    if nn < 2 || weights.len() != nn || target.len() != nn {
        return Err(RfxError::DimensionMismatch(
            "polynomial fit: nodes, weights and targets must have the same length >= 2".into(),
        ));
    }
    let vander = |t: f64| -> Vec<f64> {
        let mut v = Vec::with_capacity(q + 1);
        let mut p = 1.0;
        for _ in 0..=q {
            v.push(p);
            p *= t;
        }
        v
    };
    // least-squares system [W Z; sqrt(ridge) I] β ≈ [W y; 0]
    let mut a = Array2::<f64>::zeros((nn + q + 1, q + 1));
    let mut b = vec![0.0; nn + q + 1];
    for (k, ((&t, &w), &y)) in nodes.iter().zip(weights).zip(target).enumerate() {
        for (j, v) in vander(t).into_iter().enumerate() {
            a[[k, j]] = w * v;
        }
        b[k] = w * y;
    }
    for j in 0..=q {
        a[[nn + j, j]] = RIDGE.sqrt();
    }
    let (r, f) = householder(a.view(), &b);
    // constraints: β ≥ 0, and Z_{k+1}β − Z_kβ ≥ 0
    let p = (q + 1) + (nn - 1);
    let mut g = Array2::<f64>::zeros((p, q + 1));
    for j in 0..=q {
        g[[j, j]] = 1.0;
    }
    for k in 0..nn - 1 {
        let (v0, v1) = (vander(nodes[k]), vander(nodes[k + 1]));
        for j in 0..=q {
            g[[q + 1 + k, j]] = v1[j] - v0[j];
        }
    }
    let beta = lsi(&r, &f, g.view(), &vec![0.0; p])?;
    Ok(beta
        .into_iter()
        .map(|v| if v < ZERO_BELOW { 0.0 } else { v })
        .collect())
}

/// Parameters of [`NtkSketch`]: `depth` $L \ge 1$ (default 1), `degree` $q$ of the polynomial (default 4,
/// Zandieh's script; the UCI commands of Han's code use 2), `dim` $m$ (even, $\ge 4$; default 1024; output
/// $m - 1$), `tree_dim` real outputs per degree of the PolySketch tree (even; default: $m/2$ rounded down to
/// even, as the reference's $m/4$ complex), `compress` (default `true`).
#[derive(Clone, Debug)]
pub struct NtkSketchParams {
    depth: usize,
    degree: usize,
    dim: usize,
    tree_dim: Option<usize>,
    compress: bool,
}

impl NtkSketchParams {
    /// Depth $L$ of the NTK.
    pub fn depth(mut self, l: usize) -> Self {
        self.depth = l;
        self
    }

    /// Degree $q$ of the polynomial fit.
    pub fn degree(mut self, q: usize) -> Self {
        self.degree = q;
        self
    }

    /// Target dimension $m$ (output $m - 1$ when compressing).
    pub fn dim(mut self, m: usize) -> Self {
        self.dim = m;
        self
    }

    /// Real outputs per degree of the tree.
    pub fn tree_dim(mut self, m: usize) -> Self {
        self.tree_dim = Some(m);
        self
    }

    /// Whether to compress the stacked degrees with a final SRHT (reference code) or output them directly.
    pub fn compress(mut self, c: bool) -> Self {
        self.compress = c;
        self
    }

    fn tree_dim_value(&self) -> usize {
        self.tree_dim.unwrap_or((self.dim / 2) & !1)
    }

    /// The output dimension: $m - 1$ with compression, else $1 + q\cdot$`tree_dim`.
    pub fn output_dim(&self) -> usize {
        if self.compress {
            self.dim.saturating_sub(1)
        } else {
            1 + self.degree * self.tree_dim_value()
        }
    }

    /// Fits the polynomial and draws the sketches for inputs of dimension `d`.
    pub fn fit(&self, d: usize, rng: &mut RfxRng) -> Result<NtkSketch> {
        if self.compress && (self.dim < 4 || self.dim % 2 != 0) {
            return Err(RfxError::invalid(
                "dim",
                self.dim,
                "an even integer >= 4 (output m - 1 = 1 + (m - 2) SRHT reals)",
            ));
        }
        let tree_dim = self.tree_dim_value();
        if tree_dim < 2 || tree_dim % 2 != 0 {
            return Err(RfxError::invalid(
                "tree_dim",
                tree_dim,
                "an even integer >= 2",
            ));
        }
        if d == 0 {
            return Err(RfxError::invalid("d", d, "an integer >= 1"));
        }
        let poly = fit_ntk_polynomial(self.depth, self.degree)?;
        let sketch = PolynomialSketch::params()
            .dim(tree_dim)
            .coefficients(poly.coefficients().to_vec())
            .fit(d, rng)?;
        let srht = if self.compress {
            Some(
                Srht::params()
                    .dim(self.dim - 2)
                    .transform(Transform::Fourier)
                    .fit(self.degree * tree_dim, rng)?,
            )
        } else {
            None
        };
        Ok(NtkSketch {
            params: self.clone(),
            d,
            poly,
            sketch,
            srht,
        })
    }
}

/// Fitted NTKSketch features (module docs); dimension $m - 1$ (or $1 + q\cdot$`tree_dim` uncompressed).
#[derive(Clone, Debug)]
pub struct NtkSketch {
    params: NtkSketchParams,
    d: usize,
    poly: NtkPolynomial,
    sketch: PolynomialSketch,
    srht: Option<Srht>,
}

impl NtkSketch {
    /// Defaults: $L = 1$, $q = 4$, $m = 1024$, compressed.
    pub fn params() -> NtkSketchParams {
        NtkSketchParams {
            depth: 1,
            degree: 4,
            dim: 1024,
            tree_dim: None,
            compress: true,
        }
    }

    /// The polynomial the map sketches: $\mathbb E\langle\Psi(x),\Psi(y)\rangle = \Vert x\Vert\Vert y\Vert P(\rho)$.
    pub fn polynomial(&self) -> &NtkPolynomial {
        &self.poly
    }
}

impl FeatureMap for NtkSketch {
    fn input_dim(&self) -> usize {
        self.d
    }

    fn dim(&self) -> usize {
        self.params.output_dim()
    }

    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        let norms = row_norms(x);
        let mut xh = x.to_owned();
        Zip::from(xh.axis_iter_mut(Axis(0)))
            .and(&norms)
            .par_for_each(|mut r, &nv| {
                if nv > 0.0 {
                    r.mapv_inplace(|v| v / nv);
                }
            });
        let f = self.sketch.transform(xh.view())?;
        let mut out = match &self.srht {
            None => f,
            Some(srht) => {
                let c = srht.transform(f.slice(s![.., 1..]))?;
                let mut out = Array2::zeros((x.nrows(), self.dim()));
                out.column_mut(0).assign(&f.column(0));
                out.slice_mut(s![.., 1..]).assign(&c);
                out
            }
        };
        Zip::from(out.axis_iter_mut(Axis(0)))
            .and(&norms)
            .par_for_each(|mut r, &nv| r.mapv_inplace(|v| v * nv));
        Ok(out)
    }
}
