//! The PolySketch binary tree (Ahle et al. 2020; NTK-sketching Lemma 1 and Fig. 3; reference code A1.4),
//! and the polynomial / Gaussian kernel features built from it.
//!
//! **Tree.** For degree $P = 2^k$: $P$ leaves, each an independent base sketch $T_i$ applied to $x$
//! ([`Leaf::Identity`] drops the leaf, as the paper does for dense inputs; [`Leaf::Srht`] is the complex SRHT
//! $\mathbb R^d \to \mathbb C^{m^\prime}$; [`Leaf::Osnap`] is OSNAP $\mathbb R^d \to \mathbb R^{m^\prime}$), and $P - 1$ internal nodes,
//! each an independent complex TensorSRHT ([`crate::srht`], Fourier form) of its two children, with
//! $m^\prime = m/2$ complex outputs per node. The root value $u \in \mathbb C^{m^\prime}$ is returned as
//! $[\operatorname{Re} u; \operatorname{Im} u] \in \mathbb R^m$. Because every node satisfies
//! $\mathbb E\thinspace[\langle S(u\otimes v), S(u^\prime\otimes v^\prime)\rangle_{\mathbb C} \mid u, v, u^\prime, v^\prime] = \langle u,u^\prime\rangle_{\mathbb C}\langle v,v^\prime\rangle_{\mathbb C}$ and
//! the subtrees are independent, $\mathbb E\langle Q^P(x^{\otimes P}), Q^P(y^{\otimes P})\rangle = \langle x, y\rangle^P$.
//!
//! **All lower degrees from the same tree** (Lemma 1(2)): $Q^P(x^{\otimes j}\otimes e_1^{\otimes(P-j)})$ has
//! expectation $\langle x,y\rangle^j\langle e_1, e_1\rangle^{P-j} = \langle x,y\rangle^j$. Leaves $0..j-1$ take $x$ and leaves
//! $j..P-1$ take $e_1$; all-$e_1$ subtrees are constants computed once at fit time, all-$x$ subtrees are shared
//! with the degree-$P$ pass, and only the $\le k$ nodes on the boundary path are recomputed per degree.
//! Different degrees share randomness (each is unbiased; they are correlated).
//!
//! **Polynomial kernels** ([`PolynomialSketch`]): for $\kappa(x, y) = \sum_{j=0}^{q} c_j\langle x, y\rangle^j$,
//! $c_j \ge 0$, the features are $[\sqrt{c_0};\ \sqrt{c_1}\thinspace Q_1(x);\ \dots;\ \sqrt{c_q}\thinspace Q_q(x)]$ of dimension
//! $1 + qm$ (tree degree $P = 2^{\lceil\log_2 q\rceil}$). **Gaussian kernel** (Random Gegenbauer features §8,
//! baseline 5): $e^{-\Vert x-y\Vert^2/(2\sigma^2)} = e^{-\Vert x\Vert^2/(2\sigma^2)}e^{-\Vert y\Vert^2/(2\sigma^2)}e^{\langle x,y\rangle/\sigma^2}$, with the
//! exponential truncated at degree $q$: $c_j = \sigma^{-2j}/j!$ and every feature vector multiplied by
//! $e^{-\Vert x\Vert^2/(2\sigma^2)}$.

use crate::osnap::Osnap;
use crate::srht::{write_re_im, ComplexSrht, ComplexTensorSrht};
use crate::{check_even_dim, taylor_coefficients};
use ndarray::{s, Array2, ArrayView2, Axis, Zip};
use rayon::prelude::*;
use rfx_core::{FeatureMap, Result, RfxError, RfxRng};
use rfx_kernels::GaussianKernel;
use rustfft::num_complex::Complex64 as C;
use rustfft::FftPlanner;

/// The base sketch at the leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaf {
    /// No leaf sketch (dense inputs): the bottom TensorSRHTs read $x \in \mathbb R^d$ directly.
    Identity,
    /// Complex SRHT $\mathbb R^d \to \mathbb C^{m/2}$.
    Srht,
    /// OSNAP $\mathbb R^d \to \mathbb R^{m/2}$ with this many nonzeros per column (for sparse inputs).
    Osnap {
        /// Nonzeros per column.
        sparsity: usize,
    },
}

/// Parameters of [`PolySketch`]: `dim` = $m$ per degree (even; default 1024), `degree` = $P$ (a power of two
/// $\ge 2$; default 2), `leaf` (default [`Leaf::Identity`]).
#[derive(Clone, Debug)]
pub struct PolySketchParams {
    dim: usize,
    degree: usize,
    leaf: Leaf,
}

impl PolySketchParams {
    /// Real output dimension $m$ per degree.
    pub fn dim(mut self, m: usize) -> Self {
        self.dim = m;
        self
    }

    /// Tree degree $P = 2^k \ge 2$.
    pub fn degree(mut self, p: usize) -> Self {
        self.degree = p;
        self
    }

    /// Leaf sketch.
    pub fn leaf(mut self, leaf: Leaf) -> Self {
        self.leaf = leaf;
        self
    }

    /// Draws the tree for inputs of dimension `d`.
    pub fn fit(&self, d: usize, rng: &mut RfxRng) -> Result<PolySketch> {
        check_even_dim(self.dim)?;
        if self.degree < 2 || !self.degree.is_power_of_two() {
            return Err(RfxError::invalid(
                "degree",
                self.degree,
                "a power of two >= 2 (lower degrees come from the same tree)",
            ));
        }
        crate::check_dim("d", d)?;
        let mc = self.dim / 2;
        let p = self.degree;
        let mut planner = FftPlanner::new();
        let mut leaves = Vec::with_capacity(p);
        for _ in 0..p {
            leaves.push(match self.leaf {
                Leaf::Identity => LeafSketch::Identity,
                Leaf::Srht => LeafSketch::Srht(ComplexSrht::new(d, mc, rng)?),
                Leaf::Osnap { sparsity } => {
                    LeafSketch::Osnap(Osnap::params().dim(mc).sparsity(sparsity).fit(d, rng)?)
                }
            });
        }
        let leaf_len = if self.leaf == Leaf::Identity { d } else { mc };
        let levels = p.trailing_zeros() as usize;
        let mut nodes = Vec::with_capacity(levels);
        for l in 1..=levels {
            let n_in = if l == 1 { leaf_len } else { mc };
            nodes.push(
                (0..p >> l)
                    .map(|_| ComplexTensorSrht::new(n_in, n_in, mc, &mut planner, rng))
                    .collect::<Result<Vec<_>>>()?,
            );
        }
        let fft_scratch = nodes
            .iter()
            .flatten()
            .map(|n| n.scratch_len())
            .chain(leaves.iter().map(|l| match l {
                LeafSketch::Srht(s) => s.scratch_len(),
                _ => 0,
            }))
            .max()
            .unwrap_or(0);
        let mut tree = PolySketch {
            d,
            m: self.dim,
            mc,
            p,
            leaf_len,
            leaves,
            nodes,
            fft_scratch,
            leaf_e1: Vec::new(),
            node_e1: Vec::new(),
        };
        // constants: every subtree evaluated at e_1
        let mut e1 = vec![0.0; d];
        e1[0] = 1.0;
        let mut sc = tree.scratch();
        tree.full_pass(&e1, &mut sc);
        tree.leaf_e1 = sc.leaf_x;
        tree.node_e1 = sc.node_x;
        Ok(tree)
    }
}

#[derive(Clone)]
enum LeafSketch {
    Identity,
    Srht(ComplexSrht),
    Osnap(Osnap),
}

/// A fitted PolySketch tree of degree $P = 2^k$ (see the module docs).
#[derive(Clone)]
pub struct PolySketch {
    d: usize,
    m: usize,
    mc: usize,
    p: usize,
    leaf_len: usize,
    leaves: Vec<LeafSketch>,
    /// `nodes[l - 1][i]`: node `i` of level `l` (level 1 combines leaves).
    nodes: Vec<Vec<ComplexTensorSrht>>,
    fft_scratch: usize,
    leaf_e1: Vec<Vec<C>>,
    node_e1: Vec<Vec<Vec<C>>>,
}

impl std::fmt::Debug for PolySketch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolySketch")
            .field("d", &self.d)
            .field("m", &self.m)
            .field("degree", &self.p)
            .finish()
    }
}

struct Scratch {
    leaf_x: Vec<Vec<C>>,
    node_x: Vec<Vec<Vec<C>>>,
    mixed: Vec<C>,
    mixed_next: Vec<C>,
    b1: Vec<C>,
    b2: Vec<C>,
    leafbuf: Vec<C>,
    real: Vec<f64>,
    fft: Vec<C>,
}

impl PolySketch {
    /// Parameters with the defaults `dim` 1024, `degree` 2, identity leaves.
    pub fn params() -> PolySketchParams {
        PolySketchParams {
            dim: 1024,
            degree: 2,
            leaf: Leaf::Identity,
        }
    }

    /// Tree degree $P$.
    pub fn degree(&self) -> usize {
        self.p
    }

    fn scratch(&self) -> Scratch {
        let z = C::default();
        let nb = self.leaf_len.max(self.mc);
        Scratch {
            leaf_x: (0..self.p).map(|_| vec![z; self.leaf_len]).collect(),
            node_x: self
                .nodes
                .iter()
                .map(|lvl| lvl.iter().map(|_| vec![z; self.mc]).collect())
                .collect(),
            mixed: vec![z; self.mc],
            mixed_next: vec![z; self.mc],
            b1: vec![z; nb],
            b2: vec![z; nb],
            leafbuf: vec![z; self.d],
            real: vec![0.0; self.mc],
            fft: vec![z; self.fft_scratch],
        }
    }

    /// Leaf values and every node's value for the all-$x$ tree (degree $P$).
    fn full_pass(&self, x: &[f64], sc: &mut Scratch) {
        for (leaf, out) in self.leaves.iter().zip(sc.leaf_x.iter_mut()) {
            match leaf {
                LeafSketch::Identity => {
                    for (o, v) in out.iter_mut().zip(x) {
                        *o = C::new(*v, 0.0);
                    }
                }
                LeafSketch::Srht(s) => {
                    for (o, v) in sc.leafbuf.iter_mut().zip(x) {
                        *o = C::new(*v, 0.0);
                    }
                    s.apply_complex(&mut sc.leafbuf, out, &mut sc.fft);
                }
                LeafSketch::Osnap(o) => {
                    o.apply(x, &mut sc.real);
                    for (c, v) in out.iter_mut().zip(&sc.real) {
                        *c = C::new(*v, 0.0);
                    }
                }
            }
        }
        for (li, level) in self.nodes.iter().enumerate() {
            let n_in = level[0].n1;
            for (i, node) in level.iter().enumerate() {
                {
                    let (left, right): (&[C], &[C]) = if li == 0 {
                        (&sc.leaf_x[2 * i], &sc.leaf_x[2 * i + 1])
                    } else {
                        (&sc.node_x[li - 1][2 * i], &sc.node_x[li - 1][2 * i + 1])
                    };
                    sc.b1[..n_in].copy_from_slice(left);
                    sc.b2[..n_in].copy_from_slice(right);
                }
                node.apply(
                    &mut sc.b1[..n_in],
                    &mut sc.b2[..n_in],
                    &mut sc.node_x[li][i],
                    &mut sc.fft,
                );
            }
        }
    }

    /// Value of child `c` at level `l` (0 = leaves) for degree `j`: all-x, all-e1 or the mixed buffer.
    fn child<'a>(&'a self, sc: &'a Scratch, l: usize, c: usize, j: usize) -> &'a [C] {
        let (lo, hi) = (c << l, (c + 1) << l);
        if hi <= j {
            if l == 0 {
                &sc.leaf_x[c]
            } else {
                &sc.node_x[l - 1][c]
            }
        } else if lo >= j {
            if l == 0 {
                &self.leaf_e1[c]
            } else {
                &self.node_e1[l - 1][c]
            }
        } else {
            &sc.mixed
        }
    }

    /// Writes all degrees $1..P$ for one row into `out` (length $P m$); `all = false` writes degree $P$ only
    /// (into `out[..m]`).
    fn row(&self, x: &[f64], out: &mut [f64], sc: &mut Scratch, all: bool) {
        self.full_pass(x, sc);
        let levels = self.nodes.len();
        if !all {
            write_re_im(&sc.node_x[levels - 1][0], &mut out[..self.m]);
            return;
        }
        write_re_im(
            &sc.node_x[levels - 1][0],
            &mut out[(self.p - 1) * self.m..self.p * self.m],
        );
        for j in 1..self.p {
            for l in 1..=levels {
                if j % (1 << l) == 0 {
                    continue;
                }
                let i = j >> l;
                let node = &self.nodes[l - 1][i];
                let n_in = node.n1;
                let mut b1 = std::mem::take(&mut sc.b1);
                let mut b2 = std::mem::take(&mut sc.b2);
                b1[..n_in].copy_from_slice(self.child(sc, l - 1, 2 * i, j));
                b2[..n_in].copy_from_slice(self.child(sc, l - 1, 2 * i + 1, j));
                let mut next = std::mem::take(&mut sc.mixed_next);
                node.apply(&mut b1[..n_in], &mut b2[..n_in], &mut next, &mut sc.fft);
                sc.mixed_next = std::mem::replace(&mut sc.mixed, next);
                sc.b1 = b1;
                sc.b2 = b2;
            }
            write_re_im(&sc.mixed, &mut out[(j - 1) * self.m..j * self.m]);
        }
    }

    fn run(&self, x: ArrayView2<'_, f64>, all: bool) -> Array2<f64> {
        let x = x.as_standard_layout();
        let width = if all { self.p * self.m } else { self.m };
        let mut out = Array2::zeros((x.nrows(), width));
        out.axis_iter_mut(Axis(0))
            .into_par_iter()
            .zip(x.axis_iter(Axis(0)).into_par_iter())
            .for_each_init(
                || self.scratch(),
                |sc, (mut o, xr)| {
                    self.row(
                        xr.to_slice().expect("standard layout"),
                        o.as_slice_mut().expect("standard layout"),
                        sc,
                        all,
                    )
                },
            );
        out
    }

    /// Sketches of every degree $j = 1..P$: an $n \times Pm$ matrix whose columns $(j-1)m..jm$ hold
    /// $Q(x^{\otimes j} \otimes e_1^{\otimes(P-j)})$, with $\mathbb E\langle\cdot,\cdot\rangle = \langle x,y\rangle^j$.
    pub fn sketch_all_degrees(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        Ok(self.run(x, true))
    }

    /// The degree-`j` sketch ($1 \le j \le P$), $n \times m$.
    pub fn sketch_degree(&self, x: ArrayView2<'_, f64>, j: usize) -> Result<Array2<f64>> {
        if j == 0 || j > self.p {
            return Err(RfxError::invalid("degree", j, format!("1..={}", self.p)));
        }
        if j == self.p {
            return self.transform(x);
        }
        let all = self.sketch_all_degrees(x)?;
        Ok(all.slice(s![.., (j - 1) * self.m..j * self.m]).to_owned())
    }
}

impl FeatureMap for PolySketch {
    fn input_dim(&self) -> usize {
        self.d
    }

    fn dim(&self) -> usize {
        self.m
    }

    /// The degree-$P$ sketch $Q^P(x^{\otimes P})$ (kernel $\langle x, y\rangle^P$).
    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        Ok(self.run(x, false))
    }
}

/// Parameters of [`PolynomialSketch`]: `dim` = $m$ per degree (even; default 1024), `coefficients`
/// $c_0, \dots, c_q$ ($q \ge 1$, all $\ge 0$; default $(1, 2, 1)$, i.e. $(1 + \langle x,y\rangle)^2$), `leaf`.
#[derive(Clone, Debug)]
pub struct PolynomialSketchParams {
    dim: usize,
    coefficients: Vec<f64>,
    leaf: Leaf,
    /// The Gaussian kernel's width and the degree of its truncation, which replace `coefficients`.
    gaussian: Option<(f64, usize)>,
}

impl PolynomialSketchParams {
    /// Real output dimension $m$ per degree.
    pub fn dim(mut self, m: usize) -> Self {
        self.dim = m;
        self
    }

    /// Coefficients $c_0..c_q$ of $\sum_j c_j \langle x, y\rangle^j$.
    pub fn coefficients(mut self, c: Vec<f64>) -> Self {
        self.coefficients = c;
        self.gaussian = None;
        self
    }

    /// The Gaussian kernel $e^{-\Vert x-y\Vert^2/(2\sigma^2)}$ by its degree-$q$ Taylor truncation (module docs).
    pub fn gaussian(mut self, sigma: f64, q: usize) -> Self {
        self.gaussian = Some((sigma, q));
        self
    }

    /// Leaf sketch of the tree.
    pub fn leaf(mut self, leaf: Leaf) -> Self {
        self.leaf = leaf;
        self
    }

    /// Fits for inputs of dimension `d`.
    pub fn fit(&self, d: usize, rng: &mut RfxRng) -> Result<PolynomialSketch> {
        let (coefficients, gaussian) = taylor_coefficients(&self.coefficients, self.gaussian)?;
        if coefficients.len() < 2 {
            return Err(RfxError::invalid(
                "coefficients",
                format!("{coefficients:?}"),
                "c_0..c_q with q >= 1",
            ));
        }
        let q = coefficients.len() - 1;
        let tree = PolySketch::params()
            .dim(self.dim)
            .degree(q.next_power_of_two().max(2))
            .leaf(self.leaf)
            .fit(d, rng)?;
        Ok(PolynomialSketch {
            tree,
            coefficients,
            gaussian,
        })
    }
}

/// Features for $\sum_{j=0}^q c_j \langle x, y\rangle^j$ (or the truncated Gaussian kernel) from one
/// [`PolySketch`] tree; dimension $1 + qm$.
#[derive(Clone, Debug)]
pub struct PolynomialSketch {
    tree: PolySketch,
    coefficients: Vec<f64>,
    gaussian: Option<GaussianKernel>,
}

impl PolynomialSketch {
    /// Parameters with the defaults `dim` 1024, coefficients $(1, 2, 1)$, identity leaves.
    pub fn params() -> PolynomialSketchParams {
        PolynomialSketchParams {
            dim: 1024,
            coefficients: vec![1.0, 2.0, 1.0],
            leaf: Leaf::Identity,
            gaussian: None,
        }
    }

    /// The coefficients $c_j$.
    pub fn coefficients(&self) -> &[f64] {
        &self.coefficients
    }

    /// The underlying tree.
    pub fn tree(&self) -> &PolySketch {
        &self.tree
    }
}

impl FeatureMap for PolynomialSketch {
    fn input_dim(&self) -> usize {
        self.tree.d
    }

    fn dim(&self) -> usize {
        1 + (self.coefficients.len() - 1) * self.tree.m
    }

    fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.check_input(x)?;
        let all = self.tree.run(x, true);
        let m = self.tree.m;
        let q = self.coefficients.len() - 1;
        let mut out = Array2::zeros((x.nrows(), self.dim()));

        Zip::from(out.axis_iter_mut(Axis(0)))
            .and(all.axis_iter(Axis(0)))
            .and(x.axis_iter(Axis(0)))
            .par_for_each(|mut o, a, xr| {
                let scale = self.gaussian.map_or(1.0, |k| k.norm_factor(xr.dot(&xr)));
                o[0] = scale * self.coefficients[0].sqrt();
                for j in 1..=q {
                    let cj = scale * self.coefficients[j].sqrt();
                    o.slice_mut(s![1 + (j - 1) * m..1 + j * m])
                        .zip_mut_with(&a.slice(s![(j - 1) * m..j * m]), |ov, av| *ov = cj * av);
                }
            });
        Ok(out)
    }
}
