//! Random Maclaurin features (Kar & Karnick 2012; survey §3.18; Random Gegenbauer features §8, baseline 4).
//!
//! For a dot-product kernel $\kappa(x, y) = f(\langle x, y\rangle) = \sum_{N \ge 0} a_N \langle x, y\rangle^N$,
//! $a_N \ge 0$: each of the $D$ features independently draws a degree $N$ with $\Pr[N = n] = 2^{-(n+1)}$
//! ($p = 2$), then $N$ Rademacher vectors $w_1..w_N \in \lbrace\pm 1\rbrace^d$, and is
//! $Z(x) = \sqrt{a_N\thinspace 2^{N+1}}\ \prod_{j=1}^N w_j^\top x$; the map is $z(x) = D^{-1/2}(Z_1(x), \dots, Z_D(x))$.
//! Then $\mathbb E\langle z(x), z(y)\rangle = \sum_n 2^{-(n+1)} a_n 2^{n+1}\langle x,y\rangle^n = \kappa(x, y)$. Degrees beyond
//! the given coefficients have $a_N = 0$ and give identically zero features (the method's known waste).
//! Per feature, $\operatorname{Var}[Z(x)Z(y)] = \sum_n 2^{-(n+1)} a_n^2 4^{n+1} M^n - \kappa^2$ with
//! $M = \Vert x\Vert^2\Vert y\Vert^2 + 2\langle x,y\rangle^2 - 2\sum_i x_i^2y_i^2$.
//!
//! **Gaussian kernel** ([`RandomMaclaurinParams::gaussian`]): $a_N = \sigma^{-2N}/N!$ up to a maximum degree,
//! and $z(x)$ multiplied by $e^{-\Vert x\Vert^2/(2\sigma^2)}$.
//!
//! All Rademacher vectors are stacked into one matrix $R$ (about $D$ rows), so a batch costs one GEMM
//! $XR^\top$ plus the products.

use crate::{check_dim, taylor_coefficients};
use ndarray::{Array2, ArrayView2, Axis, Zip};
use rand::Rng;
use rfx_core::{FeatureMap, Result, RfxError, RfxRng};
use rfx_kernels::GaussianKernel;
use rfx_sampling::random::rademacher_matrix;

/// Parameters: `dim` = $D$ (default 1024), `coefficients` $a_0, a_1, \dots$ (default $(1, 2, 1)$, the kernel
/// $(1 + \langle x,y\rangle)^2$).
#[derive(Clone, Debug)]
pub struct RandomMaclaurinParams {
    dim: usize,
    coefficients: Vec<f64>,
    /// The Gaussian kernel's width and the degree of its truncation, which replace `coefficients`.
    gaussian: Option<(f64, usize)>,
}

impl RandomMaclaurinParams {
    /// Number of features $D$.
    pub fn dim(mut self, m: usize) -> Self {
        self.dim = m;
        self
    }

    /// Maclaurin coefficients $a_0, a_1, \dots$ of $f$.
    pub fn coefficients(mut self, a: Vec<f64>) -> Self {
        self.coefficients = a;
        self.gaussian = None;
        self
    }

    /// The Gaussian kernel with bandwidth $\sigma$, the exponential truncated at degree `max_degree`.
    pub fn gaussian(mut self, sigma: f64, max_degree: usize) -> Self {
        self.gaussian = Some((sigma, max_degree));
        self
    }

    /// Draws the degrees and Rademacher vectors for inputs of dimension `d`.
    pub fn fit(&self, d: usize, rng: &mut RfxRng) -> Result<RandomMaclaurin> {
        check_dim("dim", self.dim)?;
        check_dim("d", d)?;
        let (coefficients, gaussian) = taylor_coefficients(&self.coefficients, self.gaussian)?;
        if coefficients.is_empty() {
            return Err(RfxError::invalid("coefficients", "[]", "at least a_0"));
        }
        let max_n = coefficients.len() - 1;
        let mut degree = Vec::with_capacity(self.dim);
        let mut weight = Vec::with_capacity(self.dim);
        let mut offset = Vec::with_capacity(self.dim + 1);
        let mut rows = 0usize;
        for _ in 0..self.dim {
            // P(N = n) = 2^{-(n+1)}: count the failures before the first success of a fair coin
            let mut n = 0usize;
            while rng.gen::<bool>() {
                n += 1;
            }
            offset.push(rows);
            if n <= max_n && coefficients[n] > 0.0 {
                degree.push(n);
                weight.push((coefficients[n] * 2f64.powi(n as i32 + 1)).sqrt());
                rows += n;
            } else {
                degree.push(0);
                weight.push(0.0);
            }
        }
        offset.push(rows);
        let w = rademacher_matrix(rows, d, rng);
        Ok(RandomMaclaurin {
            d,
            degree,
            weight,
            offset,
            w,
            gaussian,
        })
    }
}

/// Fitted Random Maclaurin features.
#[derive(Clone, Debug)]
pub struct RandomMaclaurin {
    d: usize,
    degree: Vec<usize>,
    weight: Vec<f64>,
    offset: Vec<usize>,
    w: Array2<f64>,
    gaussian: Option<GaussianKernel>,
}

impl RandomMaclaurin {
    /// Parameters with the defaults `dim` 1024 and coefficients $(1, 2, 1)$.
    pub fn params() -> RandomMaclaurinParams {
        RandomMaclaurinParams {
            dim: 1024,
            coefficients: vec![1.0, 2.0, 1.0],
            gaussian: None,
        }
    }

    /// The drawn degree of each feature (0 also for features whose $a_N$ is zero; see [`Self::weights`]).
    pub fn degrees(&self) -> &[usize] {
        &self.degree
    }

    /// $\sqrt{a_N 2^{N+1}}$ per feature (0 for wasted features).
    pub fn weights(&self) -> &[f64] {
        &self.weight
    }
}

impl FeatureMap for RandomMaclaurin {
    fn input_dim(&self) -> usize {
        self.d
    }

    fn dim(&self) -> usize {
        self.degree.len()
    }

    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        let proj = x.dot(&self.w.t()); // n × (total rows)
        let c = 1.0 / (self.degree.len() as f64).sqrt();

        let mut out = Array2::zeros((x.nrows(), self.degree.len()));
        Zip::from(out.axis_iter_mut(Axis(0)))
            .and(proj.axis_iter(Axis(0)))
            .and(x.axis_iter(Axis(0)))
            .par_for_each(|mut o, p, xr| {
                let scale = c * self.gaussian.map_or(1.0, |k| k.norm_factor(xr.dot(&xr)));
                for (k, ov) in o.iter_mut().enumerate() {
                    let mut v = self.weight[k] * scale;
                    if v != 0.0 {
                        for r in self.offset[k]..self.offset[k] + self.degree[k] {
                            v *= p[r];
                        }
                    }
                    *ov = v;
                }
            });
        Ok(out)
    }
}
