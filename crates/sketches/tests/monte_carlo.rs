//! Monte Carlo tests of the sketches (issue 4, "what it must show").
//!
//! Seeds are fixed. Means are checked to 5 standard errors, $|\bar e - \kappa| \le 5\sqrt{V/R}$, with $V$ the
//! exact variance where it is known in closed form (CountSketch, OSNAP, SRHT both forms, Hadamard TensorSRHT,
//! Random Maclaurin) and otherwise a proven upper bound on it (complex TensorSRHT, TensorSketch via
//! Avron et al. Lemma 2 / NTK-RF Lemma 3, and a recursive second-moment bound for the PolySketch tree).

use ndarray::{Array1, Array2};
use rand::SeedableRng;
use rfx_core::{rng_stream, FeatureMap, RfxRng};
use rfx_sampling::random::gaussian_matrix;
use rfx_sketches::*;

fn rng(key: &str) -> RfxRng {
    rng_stream(2024, key)
}

fn dot(a: &Array1<f64>, b: &Array1<f64>) -> f64 {
    a.dot(b)
}

fn vec(d: usize, r: &mut RfxRng) -> Array1<f64> {
    gaussian_matrix(1, d, r).row(0).to_owned() / (d as f64).sqrt()
}

fn two_rows(a: &Array1<f64>, b: &Array1<f64>) -> Array2<f64> {
    let mut x = Array2::zeros((2, a.len()));
    x.row_mut(0).assign(a);
    x.row_mut(1).assign(b);
    x
}

/// Mean over `reps` fits of <z(x), z(y)> for a map fitted by `fit`.
fn mc_mean<M: FeatureMap>(
    reps: usize,
    key: &str,
    x: &Array1<f64>,
    y: &Array1<f64>,
    fit: impl Fn(&mut RfxRng) -> M,
) -> (f64, f64) {
    let xy = two_rows(x, y);
    let mut s = 0.0;
    let mut s2 = 0.0;
    for r in 0..reps {
        let mut g = rng(&format!("{key};rep={r}"));
        let map = fit(&mut g);
        let z = map.transform(xy.view()).unwrap();
        let e = z.row(0).dot(&z.row(1));
        s += e;
        s2 += e * e;
    }
    let n = reps as f64;
    let mean = s / n;
    (mean, (s2 / n - mean * mean) * n / (n - 1.0))
}

fn check_mean(name: &str, mean: f64, var_hat: f64, target: f64, v: f64, reps: usize) {
    let tol = 5.0 * (v / reps as f64).sqrt();
    println!(
        "{name}: mean {mean:.5} vs {target:.5} (|err| {:.2e}, tol {tol:.2e}); sample var {var_hat:.3e} vs formula {v:.3e}",
        (mean - target).abs()
    );
    assert!((mean - target).abs() < tol, "{name}: biased");
    // The sample variance must not exceed the exact variance / bound by more than 25% (the relative
    // standard error of a sample variance is sqrt((2 + excess kurtosis)/R) <= 0.05 here for moderate tails).
    if !var_hat.is_nan() {
        assert!(var_hat <= 1.25 * v, "{name}: variance {var_hat} above {v}");
    }
}

/// $\Vert x\Vert^2\Vert y\Vert^2 + \langle x,y\rangle^2 - 2\sum_i x_i^2y_i^2$: $m\cdot$Var of CountSketch / Hadamard SRHT.
fn cs_c(x: &Array1<f64>, y: &Array1<f64>) -> f64 {
    dot(x, x) * dot(y, y) + dot(x, y).powi(2)
        - 2.0 * x.iter().zip(y).map(|(a, b)| a * a * b * b).sum::<f64>()
}

#[test]
fn tensorsketch_equals_countsketch_of_the_kronecker_product_exactly() {
    let mut g = rng("kron");
    // m even and odd (the real FFT treats the Nyquist coefficient differently), degrees 2 and 3
    for (m, dims) in [
        (16, vec![7usize, 5]),
        (15, vec![7, 5]),
        (16, vec![3, 4, 2]),
        (9, vec![3, 4, 2]),
    ] {
        let ts = TensorSketch::params()
            .dim(m)
            .fit_dims(&dims, &mut g)
            .unwrap();
        let xs: Vec<Array2<f64>> = dims
            .iter()
            .map(|&d| gaussian_matrix(4, d, &mut g))
            .collect();
        let views: Vec<_> = xs.iter().map(|x| x.view()).collect();
        let t = ts.transform_tensor(&views).unwrap();
        // explicit Kronecker rows
        let total: usize = dims.iter().product();
        let mut kron = Array2::zeros((4, total));
        for i in 0..4 {
            for flat in 0..total {
                let mut rest = flat;
                let mut v = 1.0;
                for j in (0..dims.len()).rev() {
                    v *= xs[j][[i, rest % dims[j]]];
                    rest /= dims[j];
                }
                kron[[i, flat]] = v;
            }
        }
        let cs = ts.kronecker_count_sketch().unwrap();
        let c = cs.transform(kron.view()).unwrap();
        let diff = (&t - &c).mapv(f64::abs).fold(0.0f64, |a, &b| a.max(b));
        println!("TensorSketch vs CountSketch(⊗) m {m} dims {dims:?}: max |diff| = {diff:.1e}");
        assert!(diff < 1e-12);
        // written into a column block of a wider matrix: the same values
        let mut wide = Array2::from_elem((4, m + 3), 7.0);
        ts.transform_tensor_into(&views, wide.slice_mut(ndarray::s![.., 2..m + 2]))
            .unwrap();
        assert_eq!(wide.slice(ndarray::s![.., 2..m + 2]), t);
        assert!(wide
            .column(0)
            .iter()
            .chain(wide.column(m + 2))
            .all(|&v| v == 7.0));
    }
}

#[test]
fn countsketch_osnap_and_srht_are_unbiased_with_their_exact_variances() {
    let d = 24;
    let mut g = rng("vecs");
    let x = vec(d, &mut g);
    let y = &x * 0.6 + vec(d, &mut g);
    let k = dot(&x, &y);
    let c = cs_c(&x, &y);
    let reps = 6000;
    let m = 16;
    let (mean, vh) = mc_mean(reps, "cs", &x, &y, |r| {
        CountSketch::params().dim(m).fit(d, r).unwrap()
    });
    check_mean("CountSketch m=16", mean, vh, k, c / m as f64, reps);
    // OSNAP: Var = (1/s^2) sum_k (1/b_k) C with block sizes b_k
    for s in [1usize, 4] {
        let (mean, vh) = mc_mean(reps, &format!("osnap{s}"), &x, &y, |r| {
            Osnap::params().dim(m).sparsity(s).fit(d, r).unwrap()
        });
        let inv_b: f64 = (0..s)
            .map(|kk| 1.0 / (((kk + 1) * m / s - kk * m / s) as f64))
            .sum();
        check_mean(
            &format!("OSNAP m=16 s={s}"),
            mean,
            vh,
            k,
            c * inv_b / (s * s) as f64,
            reps,
        );
    }
    let (mean, vh) = mc_mean(reps, "srht-h", &x, &y, |r| {
        Srht::params()
            .dim(m)
            .transform(Transform::Hadamard)
            .fit(d, r)
            .unwrap()
    });
    check_mean("SRHT Hadamard m=16", mean, vh, k, c / m as f64, reps);
    // complex form, m' = m/2 samples: Var = (1/m') [avg_a sum_{ik} (x_i^2 y_k^2 + x_i y_i x_k y_k) cos^2(2 pi a (i-k)/d) - 2 sum x_i^2 y_i^2]
    let mut acc = 0.0;
    for a in 0..d {
        for i in 0..d {
            for kk in 0..d {
                let cc = (2.0 * std::f64::consts::PI * (a * (i + d - kk)) as f64 / d as f64).cos();
                acc += (x[i] * x[i] * y[kk] * y[kk] + x[i] * y[i] * x[kk] * y[kk]) * cc * cc;
            }
        }
    }
    let diag: f64 = x.iter().zip(&y).map(|(a, b)| a * a * b * b).sum();
    let v_f = (acc / d as f64 - 2.0 * diag) / (m / 2) as f64;
    let (mean, vh) = mc_mean(reps, "srht-f", &x, &y, |r| {
        Srht::params()
            .dim(m)
            .transform(Transform::Fourier)
            .fit(d, r)
            .unwrap()
    });
    check_mean("SRHT complex-FFT m=16", mean, vh, k, v_f, reps);
}

#[test]
fn tensor_srht_is_unbiased_for_products_of_inner_products() {
    let (d1, d2) = (10, 7);
    let mut g = rng("tsrht");
    let (x, x2) = (vec(d1, &mut g), vec(d1, &mut g));
    let (y, y2) = (vec(d2, &mut g), vec(d2, &mut g));
    let x2 = &x2 + &(&x * 0.8);
    let y2 = &y2 + &(&y * 0.8);
    let k = dot(&x, &x2) * dot(&y, &y2);
    let reps = 6000;
    let m = 32;
    for t in [Transform::Hadamard, Transform::Fourier] {
        let (mut s, mut s2) = (0.0, 0.0);
        for r in 0..reps {
            let mut g = rng(&format!("ts{t:?};{r}"));
            let map = TensorSrht::params()
                .dim(m)
                .transform(t)
                .fit_pair(d1, d2, &mut g)
                .unwrap();
            let a = map
                .transform_pair(two_rows(&x, &x2).view(), two_rows(&y, &y2).view())
                .unwrap();
            let e = a.row(0).dot(&a.row(1));
            s += e;
            s2 += e * e;
        }
        let mean = s / reps as f64;
        let var_hat = s2 / reps as f64 - mean * mean;
        let v = match t {
            // exact: (A_x A_y - k^2)/m, A_x = |x|^2|x'|^2 + 2<x,x'>^2 - 2 sum x_i^2 x_i'^2
            Transform::Hadamard => {
                let a = |u: &Array1<f64>, w: &Array1<f64>| cs_c(u, w) + dot(u, w).powi(2);
                (a(&x, &x2) * a(&y, &y2) - k * k) / m as f64
            }
            // bound: (B_x B_y - k^2)/m', B_x = |x|^2|x'|^2 + 2 (sum |x_i x_i'|)^2
            Transform::Fourier => {
                let b = |u: &Array1<f64>, w: &Array1<f64>| {
                    dot(u, u) * dot(w, w)
                        + 2.0
                            * u.iter()
                                .zip(w)
                                .map(|(p, q)| (p * q).abs())
                                .sum::<f64>()
                                .powi(2)
                };
                (b(&x, &x2) * b(&y, &y2) - k * k) / (m / 2) as f64
            }
        };
        check_mean(&format!("TensorSRHT {t:?} m=32"), mean, var_hat, k, v, reps);
    }
}

#[test]
fn tensorsketch_is_unbiased_and_within_lemma_3() {
    let d = 12;
    let mut g = rng("ts");
    let x = vec(d, &mut g);
    let y = &x * 0.9 + vec(d, &mut g) * 0.3;
    let reps = 4000;
    let m = 64;
    for p in [2usize, 3] {
        let k = dot(&x, &y).powi(p as i32);
        // Avron et al. Lemma 2: E(err^2) <= (2 + 3^p)/m |x|^{2p} |y|^{2p}
        let bound =
            (2.0 + 3f64.powi(p as i32)) / m as f64 * (dot(&x, &x) * dot(&y, &y)).powi(p as i32);
        let (mean, vh) = mc_mean(reps, &format!("ts{p}"), &x, &y, |r| {
            TensorSketch::params().dim(m).degree(p).fit(d, r).unwrap()
        });
        check_mean(
            &format!("TensorSketch p={p} m=64"),
            mean,
            vh,
            k,
            bound,
            reps,
        );
    }
    // Lemma 3 (NTK-RF): for x⊗y vs x'⊗y', E(<Γ,Γ'> - <x,x'><y,y'>)^2 <= 11 |x|^2|x'|^2|y|^2|y'|^2 / m.
    let d2 = 9;
    let x2 = &x * 0.7 + vec(d, &mut g);
    let (y1, y2) = (vec(d2, &mut g), vec(d2, &mut g));
    let y2 = &y2 + &(&y1 * 0.7);
    let k = dot(&x, &x2) * dot(&y1, &y2);
    let bound = 11.0 * dot(&x, &x) * dot(&x2, &x2) * dot(&y1, &y1) * dot(&y2, &y2) / m as f64;
    let mut se2 = 0.0;
    for r in 0..reps {
        let mut g = rng(&format!("lemma3;{r}"));
        let ts = TensorSketch::params()
            .dim(m)
            .fit_dims(&[d, d2], &mut g)
            .unwrap();
        let a = ts
            .transform_tensor(&[two_rows(&x, &x2).view(), two_rows(&y1, &y2).view()])
            .unwrap();
        se2 += (a.row(0).dot(&a.row(1)) - k).powi(2);
    }
    let msq = se2 / reps as f64;
    println!("TensorSketch Lemma 3: E(err^2) = {msq:.3e} vs bound 11/m·norms = {bound:.3e} (ratio {:.3})", msq / bound);
    assert!(msq <= bound);
}

/// Second-moment bookkeeping for a PolySketch subtree evaluated at (x-side, y-side) inputs:
/// `q` >= E|<o, o'>|^2, `nx` >= E|o|^4, `ny` >= E|o'|^4, and the "kurtosis" factors of the subtree output
/// as the input of a DFT-with-random-signs coordinate: `kc` >= E|U_a|^2|U'_a|^2 / (|o|^2 |o'|^2),
/// `kx` >= E|U_a|^4/|o|^4, `ky` likewise (U = (F D o)_a with Rademacher D, uniform a).
#[derive(Clone, Copy)]
struct Moments {
    q: f64,
    nx: f64,
    ny: f64,
    kc: f64,
    kx: f64,
    ky: f64,
}

/// E_{a,D}|U_a|^2|U'_a|^2 / (|a|^2|b|^2) for real a, b (exact):
/// (|a|^2|b|^2 + <a,b>^2 + avg_t |sum_i a_i b_i e^{-4 pi i t i/n}|^2 - 2 sum a_i^2 b_i^2) / (|a|^2 |b|^2).
fn kappa(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len();
    let (aa, bb): (f64, f64) = (a.iter().map(|v| v * v).sum(), b.iter().map(|v| v * v).sum());
    let ab: f64 = a.iter().zip(b).map(|(p, q)| p * q).sum();
    let diag: f64 = a.iter().zip(b).map(|(p, q)| p * p * q * q).sum();
    let mut avg = 0.0;
    for t in 0..n {
        let (mut re, mut im) = (0.0, 0.0);
        for i in 0..n {
            let ph = -4.0 * std::f64::consts::PI * ((t * i) % n) as f64 / n as f64;
            re += a[i] * b[i] * ph.cos();
            im += a[i] * b[i] * ph.sin();
        }
        avg += (re * re + im * im) / n as f64;
    }
    (aa * bb + ab * ab + avg - 2.0 * diag) / (aa * bb)
}

/// Leaf moments for real inputs a (x-side) and b (y-side): identity leaf, or complex SRHT with m' samples.
fn leaf_moments(a: &[f64], b: &[f64], srht_mc: Option<f64>) -> Moments {
    let (aa, bb): (f64, f64) = (a.iter().map(|v| v * v).sum(), b.iter().map(|v| v * v).sum());
    let ab: f64 = a.iter().zip(b).map(|(p, q)| p * q).sum();
    let (kc, kx, ky) = (kappa(a, b), kappa(a, a), kappa(b, b));
    match srht_mc {
        None => Moments {
            q: ab * ab,
            nx: aa * aa,
            ny: bb * bb,
            kc,
            kx,
            ky,
        },
        Some(mc) => Moments {
            q: (kc * aa * bb + (mc - 1.0) * ab * ab) / mc,
            nx: (1.0 + (kx - 1.0) / mc) * aa * aa,
            ny: (1.0 + (ky - 1.0) / mc) * bb * bb,
            kc: 3.0,
            kx: 3.0,
            ky: 3.0,
        },
    }
}

/// Complex TensorSRHT node with m' samples over two independent children: given the children,
/// E|S|^2 = (1/m') E|Z|^2 + (1 - 1/m') |<u,u'>|^2 |<v,v'>|^2 with E|Z|^2 <= kc_l kc_r |u|^2|u'|^2|v|^2|v'|^2,
/// and E|u|^2|u'|^2 <= sqrt(E|u|^4 E|u'|^4) (Cauchy–Schwarz); the output is a generic complex vector, for
/// which E|U_a|^2|U'_a|^2 <= 3 |o|^2|o'|^2.
fn tree_moments(leaves: &[Moments], mc: f64) -> Moments {
    if leaves.len() == 1 {
        return leaves[0];
    }
    let h = leaves.len() / 2;
    let (l, r) = (
        tree_moments(&leaves[..h], mc),
        tree_moments(&leaves[h..], mc),
    );
    let bl = (l.nx * l.ny).sqrt();
    let br = (r.nx * r.ny).sqrt();
    Moments {
        q: l.kc * r.kc * bl * br / mc + (1.0 - 1.0 / mc) * l.q * r.q,
        nx: (l.kx * r.kx / mc + 1.0 - 1.0 / mc) * l.nx * r.nx,
        ny: (l.ky * r.ky / mc + 1.0 - 1.0 / mc) * l.ny * r.ny,
        kc: 3.0,
        kx: 3.0,
        ky: 3.0,
    }
}

/// Variance bound of the degree-j estimate of a degree-p tree (leaves j..p take e_1).
fn tree_var_bound(
    x: &Array1<f64>,
    y: &Array1<f64>,
    p: usize,
    j: usize,
    mc: f64,
    srht: bool,
) -> f64 {
    let mut e1 = vec![0.0; x.len()];
    e1[0] = 1.0;
    let leaves: Vec<Moments> = (0..p)
        .map(|i| {
            let lm = srht.then_some(mc);
            if i < j {
                leaf_moments(x.as_slice().unwrap(), y.as_slice().unwrap(), lm)
            } else {
                leaf_moments(&e1, &e1, lm)
            }
        })
        .collect();
    (tree_moments(&leaves, mc).q - x.dot(y).powi(2 * j as i32)).max(0.0)
}

#[test]
fn polysketch_tree_is_unbiased_for_every_degree() {
    let d = 6;
    let mut g = rng("poly");
    let x = vec(d, &mut g) * 1.5;
    let y = &x * 0.6 + vec(d, &mut g);
    let (p, m) = (4usize, 64usize);
    let mc = (m / 2) as f64;
    let reps = 6000;
    for leaf in [Leaf::Identity, Leaf::Srht] {
        let mut sums = vec![0.0; p];
        let mut sq = vec![0.0; p];
        for r in 0..reps {
            let mut g = rng(&format!("poly{leaf:?};{r}"));
            let t = PolySketch::params()
                .dim(m)
                .degree(p)
                .leaf(leaf)
                .fit(d, &mut g)
                .unwrap();
            let a = t.sketch_all_degrees(two_rows(&x, &y).view()).unwrap();
            for (j, s) in sums.iter_mut().enumerate() {
                let r0 = a.slice(ndarray::s![0, j * m..(j + 1) * m]);
                let r1 = a.slice(ndarray::s![1, j * m..(j + 1) * m]);
                let e = r0.iter().zip(r1.iter()).map(|(p, q)| p * q).sum::<f64>();
                *s += e;
                sq[j] += e * e;
            }
        }
        for j in 1..=p {
            let k = dot(&x, &y).powi(j as i32);
            let v = tree_var_bound(&x, &y, p, j, mc, leaf == Leaf::Srht);
            let mean = sums[j - 1] / reps as f64;
            let var_hat = sq[j - 1] / reps as f64 - mean * mean;
            check_mean(
                &format!("PolySketch {leaf:?} P=4 degree {j} m=64"),
                mean,
                var_hat,
                k,
                v,
                reps,
            );
        }
    }
    // the FeatureMap gives the degree-P block
    let mut g = rng("poly-fm");
    let t = PolySketch::params()
        .dim(m)
        .degree(p)
        .fit(d, &mut g)
        .unwrap();
    let xy = two_rows(&x, &y);
    let all = t.sketch_all_degrees(xy.view()).unwrap();
    let top = t.transform(xy.view()).unwrap();
    assert_eq!(all.slice(ndarray::s![.., (p - 1) * m..]), top);
    assert_eq!(
        t.sketch_degree(xy.view(), 2).unwrap(),
        all.slice(ndarray::s![.., m..2 * m])
    );
}

#[test]
fn polynomial_and_gaussian_polysketch_and_random_maclaurin_are_unbiased() {
    let d = 5;
    let mut g = rng("polyk");
    let x = vec(d, &mut g);
    let y = &x * 0.5 + vec(d, &mut g);
    let (xy, xx, yy) = (dot(&x, &y), dot(&x, &x), dot(&y, &y));
    let reps = 3000;
    let m = 64;
    let mc = (m / 2) as f64;
    // (1 + <x,y>)^2 = 1 + 2<x,y> + <x,y>^2 by a degree-2 tree: Var <= (sum_j c_j sqrt(V_j))^2
    let c = [1.0, 2.0, 1.0];
    let vj = |j: usize| tree_var_bound(&x, &y, 2, j, mc, false);
    let v = (c[1] * vj(1).sqrt() + c[2] * vj(2).sqrt()).powi(2);
    let (mean, vh) = mc_mean(reps, "polyk", &x, &y, |r| {
        PolynomialSketch::params().dim(m).fit(d, r).unwrap()
    });
    check_mean(
        "PolynomialSketch (1+<x,y>)^2 m=64",
        mean,
        vh,
        (1.0 + xy).powi(2),
        v,
        reps,
    );
    // Gaussian kernel, sigma = 1, degree q = 3 (tree P = 4): target is the truncated series
    let (sigma, q) = (1.0f64, 3usize);
    let mut coef = vec![1.0];
    for j in 1..=q {
        coef.push(coef[j - 1] / (sigma * sigma * j as f64));
    }
    let fx = (-(xx + yy) / (2.0 * sigma * sigma)).exp();
    let target = fx * (0..=q).map(|j| coef[j] * xy.powi(j as i32)).sum::<f64>();
    let vjq = |j: usize| tree_var_bound(&x, &y, 4, j, mc, false);
    let v = (fx * (1..=q).map(|j| coef[j] * vjq(j).sqrt()).sum::<f64>()).powi(2);
    let (mean, vh) = mc_mean(reps, "gpoly", &x, &y, |r| {
        PolynomialSketch::params()
            .dim(m)
            .gaussian(sigma, q)
            .fit(d, r)
            .unwrap()
    });
    check_mean("Gaussian PolySketch q=3 m=64", mean, vh, target, v, reps);
    println!(
        "  (truncated series {target:.5} vs Gaussian kernel {:.5})",
        (-(&x - &y).mapv(|v| v * v).sum() / 2.0).exp()
    );

    // Random Maclaurin, exact variance: per feature sum_n 2^{-(n+1)} a_n^2 4^{n+1} M^n - kappa^2
    let mm = cs_c(&x, &y) + xy * xy; // E[(w.x)^2 (w.y)^2] for Rademacher w
    let rm_var = |a: &[f64], dfeat: usize| {
        let kappa: f64 = a
            .iter()
            .enumerate()
            .map(|(n, an)| an * xy.powi(n as i32))
            .sum();
        let second: f64 = a
            .iter()
            .enumerate()
            .map(|(n, an)| {
                0.5f64.powi(n as i32 + 1) * an * an * 4f64.powi(n as i32 + 1) * mm.powi(n as i32)
            })
            .sum();
        ((second - kappa * kappa) / dfeat as f64, kappa)
    };
    let dfeat = 256;
    let (v, kappa) = rm_var(&[1.0, 2.0, 1.0], dfeat);
    let (mean, vh) = mc_mean(reps, "rm", &x, &y, |r| {
        RandomMaclaurin::params().dim(dfeat).fit(d, r).unwrap()
    });
    check_mean(
        "Random Maclaurin (1+<x,y>)^2 D=256",
        mean,
        vh,
        kappa,
        v,
        reps,
    );
    // Gaussian RM, sigma = 1, max degree 4: E = e^{-|x|^2/2} e^{-|y|^2/2} sum_{n<=4} <x,y>^n/n!
    let a: Vec<f64> = (0..=4)
        .map(|n| 1.0 / (1..=n).product::<usize>() as f64)
        .collect();
    let (v, kappa) = rm_var(&a, dfeat);
    let (mean, vh) = mc_mean(reps, "rmg", &x, &y, |r| {
        RandomMaclaurin::params()
            .dim(dfeat)
            .gaussian(1.0, 4)
            .fit(d, r)
            .unwrap()
    });
    check_mean(
        "Gaussian Random Maclaurin N<=4 D=256",
        mean,
        vh,
        fx * kappa,
        fx * fx * v,
        reps,
    );
}

#[test]
fn params_validate() {
    let mut g = RfxRng::seed_from_u64(0);
    assert!(CountSketch::params().dim(0).fit(3, &mut g).is_err());
    assert!(TensorSketch::params().degree(0).fit(3, &mut g).is_err());
    assert!(Srht::params()
        .dim(7)
        .transform(Transform::Fourier)
        .fit(3, &mut g)
        .is_err());
    assert!(TensorSrht::params().dim(0).fit(3, &mut g).is_err());
    assert!(Osnap::params().dim(4).sparsity(5).fit(3, &mut g).is_err());
    assert!(PolySketch::params().degree(3).fit(3, &mut g).is_err());
    assert!(PolySketch::params().degree(1).fit(3, &mut g).is_err());
    assert!(PolynomialSketch::params()
        .coefficients(vec![1.0])
        .fit(3, &mut g)
        .is_err());
    assert!(PolynomialSketch::params()
        .coefficients(vec![1.0, -1.0])
        .fit(3, &mut g)
        .is_err());
    assert!(RandomMaclaurin::params()
        .coefficients(vec![])
        .fit(3, &mut g)
        .is_err());
    let cs = CountSketch::params().dim(4).fit(3, &mut g).unwrap();
    assert!(cs.transform(Array2::zeros((1, 2)).view()).is_err());
    let p = PolynomialSketch::params()
        .dim(8)
        .coefficients(vec![1.0, 1.0, 1.0, 1.0])
        .fit(3, &mut g)
        .unwrap();
    assert_eq!(p.dim(), 1 + 3 * 8);
    assert_eq!(p.tree().degree(), 4);
}
