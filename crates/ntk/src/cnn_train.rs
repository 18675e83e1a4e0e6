//! A trained CNN: the finite network whose infinite-width limit the CNTK is, trained by gradient descent — the
//! "CNN" column of Table 1 of Zandieh et al. 2021 (copied there from Arora et al. 2019).
//!
//! **Network.** The convolutional part of [`CnnGradRf`] ($K$ layers of $q \times q$ filters, same padding,
//! width $w$, no biases, ReLU with the NTK scaling $\sqrt{2/(q^2 w)}$, global average pooling), with a linear
//! head of $C$ outputs instead of one: $z(x) = V^\top \mathrm{GAP}(h^{(K)}(x))$, $V \in \mathbb R^{w \times C}$;
//! every parameter drawn i.i.d. $\mathcal N(0, 1)$ (the NTK parameterisation, so that learning rates of order 1
//! work at any width).
//!
//! **Loss and gradients.** Softmax cross-entropy $L = \log\sum_c e^{z_c} - z_y$, whose gradient in the logits
//! is $p - e_y$ with $p = \mathrm{softmax}(z)$. So $\partial L/\partial V = \mathrm{GAP}(h^{(K)})\thinspace(p - e_y)^\top$,
//! and the gradient in the convolutional weights is the backpropagation of
//! $\langle V(p - e_y), \mathrm{GAP}(h^{(K)}) \rangle$ — [`CnnGradRf`]'s backward pass with the head vector
//! $V(p - e_y)$ in place of its scalar output's $v$. Tested against central finite differences of $L$.
//!
//! **Training** ([`CnnClassifierParams::fit_validated`]): minibatch SGD with heavy-ball momentum
//! ($u \leftarrow \mu u + \bar g$, $\theta \leftarrow \theta - \eta u$) on the mean loss of each batch, the rows
//! reshuffled every epoch. The learning rate $\eta$ (from a grid) and the number of epochs are chosen by the
//! accuracy on held-out validation rows (each rate trained from the same initial network on the other rows;
//! the earliest epoch of the best accuracy), then the network is trained again from that initial network on
//! all rows with the chosen rate for the chosen number of epochs. The images of a batch are processed in
//! parallel and their gradients summed in a fixed order, so the result does not depend on the thread count.

use crate::cnn_gradrf::{CnnGradRf, CnnGradRfParams, Forward};
use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis};
use rand::seq::SliceRandom;
use rand::Rng;
use rayon::prelude::*;
use rfx_core::{rng_stream, FeatureMap, Result, RfxError, RfxRng};
use rfx_sampling::random::gaussian_matrix;

/// Settings of a [`CnnClassifier`] and its training: the network (`net`: shape, filter, layers, width),
/// `classes` $C \ge 2$, at most `epochs` epochs (default 60), `batch` rows per step (default 32), momentum
/// $\mu$ (default 0.9) and the learning-rate grid `rates` (default $\lbrace 0.1, 0.3, 1, 3 \rbrace$).
#[derive(Clone, Debug)]
pub struct CnnClassifierParams {
    net: CnnGradRfParams,
    classes: usize,
    epochs: usize,
    batch: usize,
    momentum: f64,
    rates: Vec<f64>,
}

/// What [`CnnClassifierParams::fit_validated`] chose.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainChoice {
    /// The learning rate $\eta$.
    pub rate: f64,
    /// The number of epochs.
    pub epochs: usize,
    /// The validation accuracy at that rate and epoch.
    pub valid_accuracy: f64,
}

impl CnnClassifierParams {
    /// Settings for the network `net` and `classes` classes, with the defaults above.
    pub fn new(net: CnnGradRfParams, classes: usize) -> Self {
        CnnClassifierParams {
            net,
            classes,
            epochs: 60,
            batch: 32,
            momentum: 0.9,
            rates: vec![0.1, 0.3, 1.0, 3.0],
        }
    }
    /// At most this many epochs.
    pub fn epochs(mut self, e: usize) -> Self {
        self.epochs = e;
        self
    }
    /// Rows per SGD step.
    pub fn batch(mut self, b: usize) -> Self {
        self.batch = b;
        self
    }
    /// Momentum $\mu \in [0, 1)$.
    pub fn momentum(mut self, mu: f64) -> Self {
        self.momentum = mu;
        self
    }
    /// The learning-rate grid.
    pub fn rates(mut self, rates: &[f64]) -> Self {
        self.rates = rates.to_vec();
        self
    }

    fn check(&self) -> Result<()> {
        if self.classes < 2 {
            return Err(RfxError::invalid("classes", self.classes, "at least 2"));
        }
        if self.epochs == 0 || self.batch == 0 {
            return Err(RfxError::invalid(
                "epochs/batch",
                format!("{}/{}", self.epochs, self.batch),
                "integers >= 1",
            ));
        }
        if !(0.0..1.0).contains(&self.momentum) {
            return Err(RfxError::invalid("momentum", self.momentum, "[0, 1)"));
        }
        if self.rates.is_empty() || self.rates.iter().any(|r| !(r.is_finite() && *r > 0.0)) {
            return Err(RfxError::invalid(
                "rates",
                format!("{:?}", self.rates),
                "one or more finite positive numbers",
            ));
        }
        Ok(())
    }

    /// An untrained network: the convolutional weights as [`CnnGradRfParams::fit`] draws them, then $V$.
    pub fn init(&self, rng: &mut RfxRng) -> Result<CnnClassifier> {
        self.check()?;
        let net = self.net.fit(rng)?;
        let w = net.weights.last().map_or(0, |l| l.ncols());
        Ok(CnnClassifier {
            head: gaussian_matrix(w, self.classes, rng),
            net,
        })
    }

    /// Trains on the rows `fit ∪ valid` of `x` (images in height–width–channel order) with labels `labels`
    /// (in `0..classes`), choosing the learning rate and the number of epochs on the rows `valid` (module
    /// docs). Draws the initial network and the shuffling seed from `rng`.
    pub fn fit_validated(
        &self,
        x: ArrayView2<'_, f64>,
        labels: &[usize],
        fit: &[usize],
        valid: &[usize],
        rng: &mut RfxRng,
    ) -> Result<(CnnClassifier, TrainChoice)> {
        let (start, shuffle_seed, choice, _) = self.search(x, labels, fit, valid, rng)?;
        let all: Vec<usize> = fit.iter().chain(valid).copied().collect();
        let mut run = Training::new(start, choice.rate, shuffle_seed);
        for epoch in 1..=choice.epochs {
            if !run.epoch(x, labels, &all, self, epoch) {
                return Err(RfxError::Numerical(format!(
                    "the CNN diverged on all rows at learning rate {} (epoch {epoch})",
                    choice.rate
                )));
            }
        }
        Ok((run.model, choice))
    }

    /// Trains on the rows `fit` only and returns the network of the rate and epoch with the best accuracy on
    /// the rows `valid` (early stopping; no retraining on `valid`): for a labelled budget that `valid` must
    /// not enlarge, such as the designs of active learning. Draws as [`CnnClassifierParams::fit_validated`].
    pub fn fit_early_stopped(
        &self,
        x: ArrayView2<'_, f64>,
        labels: &[usize],
        fit: &[usize],
        valid: &[usize],
        rng: &mut RfxRng,
    ) -> Result<(CnnClassifier, TrainChoice)> {
        let (_, _, choice, best) = self.search(x, labels, fit, valid, rng)?;
        Ok((best, choice))
    }

    /// The search of the module docs: the initial network, the shuffling seed, the chosen rate and epoch,
    /// and the network trained on `fit` at that rate up to that epoch.
    fn search(
        &self,
        x: ArrayView2<'_, f64>,
        labels: &[usize],
        fit: &[usize],
        valid: &[usize],
        rng: &mut RfxRng,
    ) -> Result<(CnnClassifier, u64, TrainChoice, CnnClassifier)> {
        let start = self.init(rng)?;
        start.net.check_input(x)?;
        if labels.len() != x.nrows() {
            return Err(RfxError::DimensionMismatch(format!(
                "{} labels for {} images",
                labels.len(),
                x.nrows()
            )));
        }
        if let Some(&y) = labels.iter().find(|&&y| y >= self.classes) {
            return Err(RfxError::invalid(
                "label",
                y,
                format!("0..{}", self.classes),
            ));
        }
        if fit.is_empty() || valid.is_empty() || fit.iter().chain(valid).any(|&i| i >= x.nrows()) {
            return Err(RfxError::invalid(
                "fit/validation rows",
                format!("{} / {}", fit.len(), valid.len()),
                format!("non-empty, indices below {}", x.nrows()),
            ));
        }
        let shuffle_seed: u64 = rng.gen();
        let mut best: Option<(TrainChoice, CnnClassifier)> = None;
        for &rate in &self.rates {
            let mut run = Training::new(start.clone(), rate, shuffle_seed);
            for epoch in 1..=self.epochs {
                if !run.epoch(x, labels, fit, self, epoch) {
                    break; // diverged: later epochs of this rate are not candidates
                }
                let acc = run.model.accuracy(x, labels, valid);
                if best.as_ref().is_none_or(|(b, _)| acc > b.valid_accuracy) {
                    let choice = TrainChoice {
                        rate,
                        epochs: epoch,
                        valid_accuracy: acc,
                    };
                    best = Some((choice, run.model.clone()));
                }
            }
        }
        let (choice, model) = best.ok_or_else(|| {
            RfxError::Numerical("the CNN diverged at every learning rate of the grid".into())
        })?;
        Ok((start, shuffle_seed, choice, model))
    }
}

/// A CNN classifier (module docs): convolutional weights and the head $V$.
#[derive(Clone, Debug)]
pub struct CnnClassifier {
    net: CnnGradRf,
    /// $V$, $w \times C$.
    head: Array2<f64>,
}

/// Per-image (or summed) gradient: convolutional weights (flat, row-major per layer) and head.
struct Grad {
    conv: Array1<f64>,
    head: Array2<f64>,
}

impl CnnClassifier {
    fn zeros_like(&self) -> Grad {
        Grad {
            conv: Array1::zeros(self.net.conv_len()),
            head: Array2::zeros(self.head.dim()),
        }
    }

    /// Logits $z(x) = V^\top \mathrm{GAP}(h^{(K)}(x))$ of every row ($n \times C$).
    pub fn logits(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.net.check_input(x)?;
        let rows: Vec<Array1<f64>> = x
            .axis_iter(Axis(0))
            .into_par_iter()
            .map(|r| self.head.t().dot(&self.net.forward(r).pooled))
            .collect();
        let mut z = Array2::zeros((x.nrows(), self.head.ncols()));
        for (mut o, r) in z.axis_iter_mut(Axis(0)).zip(&rows) {
            o.assign(r);
        }
        Ok(z)
    }

    /// The penultimate layer, $\mathrm{GAP}(h^{(K)}(x))$ of every row ($n \times w$): the network's embedding
    /// of its inputs, of which the logits are the linear read-out $z = V^\top \mathrm{GAP}(h^{(K)})$ (module
    /// docs). A network trained on one data set embeds another: the stand-in for pretrained embeddings in the
    /// ternary features paper's Figs. 13 and 15.
    pub fn embed(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        self.net.check_input(x)?;
        let rows: Vec<Array1<f64>> = x
            .axis_iter(Axis(0))
            .into_par_iter()
            .map(|r| self.net.forward(r).pooled)
            .collect();
        let mut e = Array2::zeros((x.nrows(), self.head.nrows()));
        for (mut o, r) in e.axis_iter_mut(Axis(0)).zip(&rows) {
            o.assign(r);
        }
        Ok(e)
    }

    /// The predicted class of every row (argmax of the logits; ties: the lowest class).
    pub fn predict(&self, x: ArrayView2<'_, f64>) -> Result<Vec<usize>> {
        Ok(self.logits(x)?.axis_iter(Axis(0)).map(argmax).collect())
    }

    fn accuracy(&self, x: ArrayView2<'_, f64>, labels: &[usize], rows: &[usize]) -> f64 {
        let hits: usize = rows
            .par_iter()
            .map(|&i| {
                let z = self.head.t().dot(&self.net.forward(x.row(i)).pooled);
                usize::from(argmax(z.view()) == labels[i])
            })
            .sum();
        hits as f64 / rows.len() as f64
    }

    /// The cross-entropy of one image's forward pass for label `y` and its gradient in the logits,
    /// $p - e_y$ (softmax $p$).
    fn softmax_loss(&self, fw: &Forward, y: usize) -> (f64, Array1<f64>) {
        let z = self.head.t().dot(&fw.pooled);
        let zmax = z.fold(f64::NEG_INFINITY, |a, &b| a.max(b));
        let e = z.mapv(|v| (v - zmax).exp());
        let sum = e.sum();
        let loss = sum.ln() + zmax - z[y];
        let mut dz = e / sum;
        dz[y] -= 1.0;
        (loss, dz)
    }

    /// Loss of one image; its gradient into `g` (overwritten).
    fn image_grad(&self, x: ArrayView1<'_, f64>, y: usize, g: &mut Grad) -> f64 {
        let fw = self.net.forward(x);
        let (loss, dz) = self.softmax_loss(&fw, y);
        let head_vec = self.head.dot(&dz);
        self.net.backward(&fw, head_vec.view(), g.conv.view_mut());
        // ∂L/∂V = GAP(h⁽ᴷ⁾) (p − e_y)ᵀ
        for (mut row, &h) in g.head.axis_iter_mut(Axis(0)).zip(fw.pooled.iter()) {
            row.zip_mut_with(&dz, |o, &d| *o = h * d);
        }
        loss
    }

    /// Mean loss and its gradient over `rows` (images in parallel, each into its own buffer of `scratch`,
    /// grown as needed and reused by the caller; summed in the rows' order).
    fn batch_grad(
        &self,
        x: ArrayView2<'_, f64>,
        labels: &[usize],
        rows: &[usize],
        scratch: &mut Vec<Grad>,
    ) -> (f64, Grad) {
        if self.net.pixels() == 1 {
            return self.batch_grad_dense(x, labels, rows);
        }
        self.batch_grad_images(x, labels, rows, scratch)
    }

    /// [`CnnClassifier::batch_grad`] by every image's gradient, summed in the rows' order.
    fn batch_grad_images(
        &self,
        x: ArrayView2<'_, f64>,
        labels: &[usize],
        rows: &[usize],
        scratch: &mut Vec<Grad>,
    ) -> (f64, Grad) {
        while scratch.len() < rows.len() {
            scratch.push(self.zeros_like());
        }
        let losses: Vec<f64> = scratch[..rows.len()]
            .par_iter_mut()
            .zip(rows.par_iter())
            .map(|(g, &i)| self.image_grad(x.row(i), labels[i], g))
            .collect();
        let mut total = self.zeros_like();
        let mut loss = 0.0;
        for (l, g) in losses.iter().zip(scratch.iter()) {
            loss += l;
            total.conv += &g.conv;
            total.head += &g.head;
        }
        let k = 1.0 / rows.len() as f64;
        total.conv *= k;
        total.head *= k;
        (loss * k, total)
    }

    /// [`CnnClassifier::batch_grad`] of a one-pixel (fully connected) network, with its numbers. Each image's
    /// gradient is then a sum of one term per entry: $\partial L/\partial W^{(l)} = a^{(l-1)}\delta^{(l)\top}$
    /// (`matmul_tn` with $k = 1$: $0 + a_i\delta_j$, rows of $a_i = 0$ left at $0$) and
    /// $\partial L/\partial V = h\thinspace(p - e_y)^\top$. Instead of writing every image's gradient and adding
    /// them in the rows' order, the products are added into the total in that order directly: an entry of the
    /// total starts at $+0$ and can never become $-0$, so adding $0 + a_i\delta_j$ or $a_i\delta_j$, and adding
    /// the $+0$ of a row with $a_i = 0$ or nothing, give the same bits. The forward and backward passes still
    /// run in parallel over the images; only the sums are in order. Per image this writes the rows of the
    /// nonzero inputs instead of the whole gradient twice (the embedding network of the ternary experiments:
    /// 784 × 256 + 256 × 256 weights, most pixels zero).
    fn batch_grad_dense(
        &self,
        x: ArrayView2<'_, f64>,
        labels: &[usize],
        rows: &[usize],
    ) -> (f64, Grad) {
        // per image: loss, forward pass, δ of every layer, ∂L/∂z
        type Pass = (f64, Forward, Vec<Array2<f64>>, Array1<f64>);
        let per_image: Vec<Pass> = rows
            .par_iter()
            .map(|&i| {
                let fw = self.net.forward(x.row(i));
                let (loss, dz) = self.softmax_loss(&fw, labels[i]);
                let head_vec = self.head.dot(&dz);
                let deltas = self.net.deltas(&fw, head_vec.view());
                (loss, fw, deltas, dz)
            })
            .collect();
        let mut total = self.zeros_like();
        let mut loss = 0.0;
        let conv = total.conv.as_slice_mut().expect("a new array");
        for (l, fw, deltas, dz) in &per_image {
            loss += l;
            let mut off = 0;
            for (layer, delta) in deltas.iter().enumerate() {
                let a = fw.cols[layer].row(0);
                let d = delta.row(0);
                let d = d.as_slice().expect("a row of a new array");
                let w = d.len();
                for (i, &ai) in a.iter().enumerate() {
                    if ai != 0.0 {
                        rfx_linalg::axpy(ai, d, &mut conv[off + i * w..off + (i + 1) * w]);
                    }
                }
                off += a.len() * w;
            }
            for (mut row, &h) in total.head.axis_iter_mut(Axis(0)).zip(fw.pooled.iter()) {
                row.zip_mut_with(dz, |o, &d| *o += h * d);
            }
        }
        let k = 1.0 / rows.len() as f64;
        total.conv *= k;
        total.head *= k;
        (loss * k, total)
    }

    /// Mean cross-entropy over `rows`.
    pub fn loss(&self, x: ArrayView2<'_, f64>, labels: &[usize], rows: &[usize]) -> f64 {
        self.batch_grad(x, labels, rows, &mut Vec::new()).0
    }
}

/// One training run: the network, its momentum buffer $u$, the learning rate $\eta$ and the seed of the
/// epochs' shuffles.
struct Training {
    model: CnnClassifier,
    velocity: Grad,
    rate: f64,
    seed: u64,
    /// Per-image gradient buffers of a batch, reused from step to step.
    scratch: Vec<Grad>,
}

impl Training {
    /// A run from `model` with $u = 0$.
    fn new(model: CnnClassifier, rate: f64, seed: u64) -> Self {
        Training {
            velocity: model.zeros_like(),
            model,
            rate,
            seed,
            scratch: Vec::new(),
        }
    }

    /// One epoch of SGD with momentum over `rows` in the order of stream `(seed, "epoch <e>")`; false when a
    /// loss or parameter is not finite (divergence).
    fn epoch(
        &mut self,
        x: ArrayView2<'_, f64>,
        labels: &[usize],
        rows: &[usize],
        p: &CnnClassifierParams,
        epoch: usize,
    ) -> bool {
        let (model, velocity, rate) = (&mut self.model, &mut self.velocity, self.rate);
        let scratch = &mut self.scratch;
        let mut order = rows.to_vec();
        order.shuffle(&mut rng_stream(self.seed, &format!("epoch {epoch}")));
        for batch in order.chunks(p.batch) {
            let (loss, g) = model.batch_grad(x, labels, batch, scratch);
            if !loss.is_finite() {
                return false;
            }
            velocity.conv *= p.momentum;
            velocity.conv += &g.conv;
            velocity.head *= p.momentum;
            velocity.head += &g.head;
            let mut off = 0;
            for w in model.net.weights.iter_mut() {
                let len = w.len();
                let u = velocity.conv.slice(s![off..off + len]);
                w.iter_mut()
                    .zip(u.iter())
                    .for_each(|(a, &b)| *a -= rate * b);
                off += len;
            }
            model.head.scaled_add(-rate, &velocity.head);
        }
        model.head.iter().all(|v| v.is_finite())
            && model
                .net
                .weights
                .iter()
                .all(|w| w.iter().all(|v| v.is_finite()))
    }
}

fn argmax(z: ArrayView1<'_, f64>) -> usize {
    let mut best = 0;
    for (c, &v) in z.iter().enumerate() {
        if v > z[best] {
            best = c;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(classes: usize) -> CnnClassifierParams {
        CnnClassifierParams::new(
            CnnGradRf::params().shape(4, 4, 1).layers(2).width(4),
            classes,
        )
    }

    #[test]
    fn the_logits_are_the_head_applied_to_the_embedding() {
        let model = params(3)
            .init(&mut rng_stream(3, "cnn-train-embed"))
            .unwrap();
        let mut rng = rng_stream(4, "cnn-train-embed-x");
        let x = Array2::from_shape_simple_fn((5, 16), || rng.gen::<f64>() * 2.0 - 1.0);
        let e = model.embed(x.view()).unwrap();
        assert_eq!(e.dim(), (5, 4));
        // GAP of ReLU activations: nonnegative; the read-out V^T e is the logits to rounding
        assert!(e.iter().all(|&v| v >= 0.0));
        let z = model.logits(x.view()).unwrap();
        let diff = (&e.dot(&model.head) - &z)
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(diff <= 1e-12 * (1.0 + z.iter().fold(0.0f64, |m, v| m.max(v.abs()))));
        assert!(model.embed(Array2::zeros((2, 15)).view()).is_err());
    }

    #[test]
    fn loss_gradient_matches_central_finite_differences() {
        let model = params(3).init(&mut rng_stream(1, "cnn-train-fd")).unwrap();
        let mut rng = rng_stream(2, "cnn-train-x");
        let x = Array2::from_shape_simple_fn((3, 16), || rng.gen::<f64>() * 2.0 - 1.0);
        let labels = [0, 2, 1];
        let rows = [0, 1, 2];
        let (_, g) = model.batch_grad(x.view(), &labels, &rows, &mut Vec::new());
        let eps = 1e-6;
        let check = |fd: f64, an: f64, what: &str| {
            // L is smooth away from ReLU kinks: central differences are exact to O(eps²) and round-off
            // O(1e-16 L / eps)
            assert!(
                (fd - an).abs() <= 1e-6 * (1.0 + fd.abs()),
                "{what}: fd {fd} vs {an}"
            );
        };
        let mut off = 0;
        for l in 0..model.net.weights.len() {
            let c = model.net.weights[l].ncols();
            for k in 0..model.net.weights[l].len() {
                let bump = |d: f64| {
                    let mut m2 = model.clone();
                    m2.net.weights[l][[k / c, k % c]] += d;
                    m2.loss(x.view(), &labels, &rows)
                };
                let fd = (bump(eps) - bump(-eps)) / (2.0 * eps);
                check(fd, g.conv[off + k], &format!("layer {l} weight {k}"));
            }
            off += model.net.weights[l].len();
        }
        for (i, j) in ndarray::indices(model.head.dim()) {
            let bump = |d: f64| {
                let mut m2 = model.clone();
                m2.head[[i, j]] += d;
                m2.loss(x.view(), &labels, &rows)
            };
            let fd = (bump(eps) - bump(-eps)) / (2.0 * eps);
            check(fd, g.head[[i, j]], &format!("head ({i}, {j})"));
        }
    }

    /// Two classes of 4×4 images told apart by which half is bright, under noise: SGD must learn them (a
    /// linear rule on the pooled features separates them), the chosen epoch must be one that was tried,
    /// and the result must not depend on the thread count.
    #[test]
    fn sgd_learns_a_separable_pattern_for_any_thread_count() {
        let mut rng = rng_stream(3, "cnn-train-data");
        let n = 80;
        let labels: Vec<usize> = (0..n).map(|i| i % 2).collect();
        let x = Array2::from_shape_fn((n, 16), |(i, p)| {
            let left = p % 4 < 2;
            let bright = if labels[i] == 0 { left } else { !left };
            f64::from(u8::from(bright)) + 0.3 * (rng.gen::<f64>() - 0.5)
        });
        let fit: Vec<usize> = (0..60).collect();
        let valid: Vec<usize> = (60..n).collect();
        let p = params(2).epochs(30).batch(8);
        let run = |t: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .unwrap()
                .install(|| {
                    p.fit_validated(x.view(), &labels, &fit, &valid, &mut rng_stream(4, "cnn"))
                        .unwrap()
                })
        };
        let (model, choice) = run(1);
        let start = p.init(&mut rng_stream(4, "cnn")).unwrap();
        let all: Vec<usize> = (0..n).collect();
        assert!(model.loss(x.view(), &labels, &all) < start.loss(x.view(), &labels, &all));
        assert!((1..=30).contains(&choice.epochs));
        assert!(choice.valid_accuracy >= 0.95, "{choice:?}");
        let pred = model.predict(x.view()).unwrap();
        let acc = pred.iter().zip(&labels).filter(|(a, b)| a == b).count() as f64 / n as f64;
        assert!(acc >= 0.95, "training accuracy {acc}");
        let (model3, choice3) = run(3);
        assert_eq!(choice, choice3);
        assert_eq!(
            model.logits(x.view()).unwrap(),
            model3.logits(x.view()).unwrap()
        );
    }

    /// Early stopping returns the network trained on the fitting rows alone at the chosen rate and epoch:
    /// training it again that far from the same start gives the same logits, and its validation accuracy is
    /// the reported one.
    #[test]
    fn early_stopping_keeps_the_chosen_epoch_of_the_fitting_rows() {
        let mut rng = rng_stream(6, "cnn-es-data");
        let n = 40;
        let labels: Vec<usize> = (0..n).map(|i| i % 2).collect();
        let x = Array2::from_shape_fn((n, 16), |(i, p)| {
            let bright = (p % 4 < 2) == (labels[i] == 0);
            f64::from(u8::from(bright)) + 0.5 * (rng.gen::<f64>() - 0.5)
        });
        let fit: Vec<usize> = (0..24).collect();
        let valid: Vec<usize> = (24..n).collect();
        let p = params(2).epochs(8).batch(8);
        let (model, choice) = p
            .fit_early_stopped(x.view(), &labels, &fit, &valid, &mut rng_stream(7, "es"))
            .unwrap();
        assert_eq!(
            model.accuracy(x.view(), &labels, &valid),
            choice.valid_accuracy
        );
        let mut rng2 = rng_stream(7, "es");
        let start = p.init(&mut rng2).unwrap();
        let seed: u64 = rng2.gen();
        let mut again = Training::new(start, choice.rate, seed);
        for e in 1..=choice.epochs {
            assert!(again.epoch(x.view(), &labels, &fit, &p, e));
        }
        assert_eq!(
            model.logits(x.view()).unwrap(),
            again.model.logits(x.view()).unwrap()
        );
    }

    #[test]
    fn the_dense_batch_gradient_has_the_bits_of_the_per_image_sum() {
        // a one-pixel network (fully connected: 1 × 1 images of 30 channels, filter 1), inputs with zeros
        // (skipped rows) and of both signs (products −0), labels of every class
        let net = CnnGradRf::params()
            .shape(1, 1, 30)
            .filter(1)
            .layers(2)
            .width(12);
        let params = CnnClassifierParams::new(net, 4);
        let model = params.init(&mut rng_stream(9, "init")).unwrap();
        let mut rng = rng_stream(9, "data");
        let x = Array2::from_shape_fn((40, 30), |(i, j)| {
            if (i + j) % 3 == 0 {
                0.0
            } else {
                rng.gen_range(-1.0..1.0)
            }
        });
        let labels: Vec<usize> = (0..40).map(|i| i % 4).collect();
        let rows: Vec<usize> = (0..40).rev().step_by(3).collect();
        let (l_dense, g_dense) = model.batch_grad_dense(x.view(), &labels, &rows);
        let (l_images, g_images) =
            model.batch_grad_images(x.view(), &labels, &rows, &mut Vec::new());
        assert_eq!(l_dense.to_bits(), l_images.to_bits());
        for (a, b) in g_dense.conv.iter().zip(&g_images.conv) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
        for (a, b) in g_dense.head.iter().zip(&g_images.head) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
        assert!(g_dense.conv.iter().any(|&v| v != 0.0) && g_dense.head.iter().any(|&v| v != 0.0));
    }

    #[test]
    fn bad_settings_and_inputs_are_errors() {
        let x = Array2::zeros((4, 16));
        let rng = &mut rng_stream(5, "cnn-bad");
        assert!(params(1).init(rng).is_err());
        assert!(params(2).rates(&[]).init(rng).is_err());
        assert!(params(2).rates(&[0.1, f64::NAN]).init(rng).is_err());
        assert!(params(2).momentum(1.0).init(rng).is_err());
        let p = params(2);
        assert!(p
            .fit_validated(x.view(), &[0, 1, 0, 2], &[0, 1], &[2, 3], rng)
            .is_err());
        assert!(p
            .fit_validated(x.view(), &[0, 1, 0], &[0, 1], &[2], rng)
            .is_err());
        assert!(p
            .fit_validated(x.view(), &[0, 1, 0, 1], &[0, 1], &[], rng)
            .is_err());
        assert!(p
            .fit_validated(x.view(), &[0, 1, 0, 1], &[0, 9], &[2], rng)
            .is_err());
        let wide = Array2::zeros((4, 17));
        assert!(p
            .fit_validated(wide.view(), &[0, 1, 0, 1], &[0, 1], &[2, 3], rng)
            .is_err());
    }
}
