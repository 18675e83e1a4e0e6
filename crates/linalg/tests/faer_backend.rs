//! The faer `f64` backend ([`rfx_linalg::Backend::Faer`]): its Grams and products are the exact ones to the
//! rounding bound of a dot product, its Cholesky factor to Higham's backward-error bound, both differ from
//! OpenBLAS's only at that level, and the tiled kernels are bit-for-bit the same in rayon pools of 1 and 2
//! threads. One test function: the backend is process-wide.

use ndarray::{s, Array2};
use rand::{Rng, SeedableRng};
use rfx_linalg::{
    f64_backend, gram_cols, gram_rows, gram_rows_add_upper, matmul_abt_par, set_f64_backend,
    symmetrize_from_upper, Backend, Cholesky, NormalEquations,
};

fn uniform(n: usize, m: usize, seed: u64) -> Array2<f64> {
    let mut rng = rfx_core::RfxRng::seed_from_u64(seed);
    Array2::from_shape_fn((n, m), |_| rng.gen_range(-1.0..1.0))
}

/// $\gamma_k = ku/(1 - ku)$ with $u = 2^{-53}$ (Higham, Eq. 3.5): a dot product of length $k$ in any order
/// is within $\gamma_k \sum_r \vert a_r b_r \vert$ of the exact value (Higham, Eq. 3.5 and §3.1).
fn gamma(k: usize) -> f64 {
    let ku = k as f64 * 2f64.powi(-53);
    ku / (1.0 - ku)
}

/// $A B^\top$ by the textbook loop, and $\vert A \vert \vert B \vert^\top$ (the scale of the rounding bound).
fn reference(a: &Array2<f64>, b: &Array2<f64>) -> (Array2<f64>, Array2<f64>) {
    let (r, c, k) = (a.nrows(), b.nrows(), a.ncols());
    let mut p = Array2::zeros((r, c));
    let mut q = Array2::zeros((r, c));
    for i in 0..r {
        for j in 0..c {
            let (mut s, mut t) = (0.0, 0.0);
            for l in 0..k {
                s += a[[i, l]] * b[[j, l]];
                t += (a[[i, l]] * b[[j, l]]).abs();
            }
            p[[i, j]] = s;
            q[[i, j]] = t;
        }
    }
    (p, q)
}

/// Largest $\vert x - p \vert / (2\gamma_k q)$ over the entries: at most 1 when both $x$ and the reference $p$
/// are within $\gamma_k q$ of the exact product.
fn worst_ratio(x: &Array2<f64>, (p, q): &(Array2<f64>, Array2<f64>), k: usize) -> f64 {
    let bound = 2.0 * gamma(k);
    x.iter()
        .zip(p.iter().zip(q))
        .map(|(x, (p, q))| (x - p).abs() / (bound * q))
        .fold(0.0, f64::max)
}

/// The Cholesky factor of $A = Z^\top Z / 700 + 10^{-3} I$ (order 333) and $A$.
fn factor() -> (Array2<f64>, Array2<f64>) {
    let z = uniform(700, 333, 1);
    let mut a = z.t().dot(&z) / 700.0;
    rfx_linalg::add_diag(&mut a, 1e-3);
    (Cholesky::factor_view(a.view()).unwrap().l().clone(), a)
}

/// Every output of the backend-dispatched kernels for a 333 x 333 Gram (ragged 256-row tiles) from 700 rows.
fn outputs() -> Vec<Array2<f64>> {
    let z = uniform(700, 333, 1);
    let y = uniform(700, 2, 2);
    let w = uniform(290, 700, 3);
    let mut acc = Array2::zeros((333, 333));
    gram_rows_add_upper(z.t().slice(s![.., ..400]), &mut acc).unwrap();
    gram_rows_add_upper(z.t().slice(s![.., 400..]), &mut acc).unwrap();
    let mut ne = NormalEquations::new(333, 2).unwrap();
    ne.push_all(z.view(), y.view()).unwrap();
    let (g, b) = ne.finish();
    vec![
        gram_cols(z.view()).unwrap(),
        gram_rows(z.t()).unwrap(),
        acc,
        g,
        b,
        matmul_abt_par(w.view(), z.t()).unwrap(),
    ]
}

#[test]
fn faer_grams_are_exact_to_rounding_and_thread_count_independent() {
    assert_eq!(f64_backend(), Backend::OpenBlas, "the default");
    let z = uniform(700, 333, 1);
    let y = uniform(700, 2, 2);
    let w = uniform(290, 700, 3);
    let zt = z.t().to_owned();
    let gram = reference(&zt, &zt);
    let zty = reference(&zt, &y.t().to_owned());
    let cross = reference(&w, &zt);

    let pool = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    };
    let openblas = pool(2).install(outputs);
    let (l_openblas, _) = factor();
    assert_eq!(set_f64_backend(Backend::Faer), Backend::OpenBlas);
    let one = pool(1).install(outputs);
    let two = pool(2).install(outputs);
    let (l, a) = factor();
    let mut indefinite = a.clone();
    indefinite[[100, 100]] = -1.0;
    let refused = Cholesky::factor(indefinite).err().unwrap().to_string();
    assert_eq!(set_f64_backend(Backend::OpenBlas), Backend::Faer);

    // faer's Cholesky: lower triangular, and L Lᵀ = A + ΔA with |ΔA| ≤ γ_{n+1} |L||L|ᵀ (Higham, Thm 10.3),
    // plus the rounding of the textbook L Lᵀ (γ_n |L||L|ᵀ)
    assert!(refused.contains("not positive definite"), "{refused}");
    assert!((0..333).all(|i| (i + 1..333).all(|j| l[[i, j]] == 0.0)));
    let (llt, scale) = reference(&l, &l);
    let worst = llt
        .iter()
        .zip(a.iter().zip(&scale))
        .map(|(x, (a, s))| (x - a).abs() / ((gamma(334) + gamma(333)) * s))
        .fold(0.0, f64::max);
    assert!(worst <= 1.0, "Cholesky: {worst} times Higham's bound");
    assert!(
        l.iter().zip(&l_openblas).any(|(x, y)| x != y),
        "Cholesky ran LAPACK"
    );

    // the same bits in pools of 1 and 2 threads
    for (i, (a, b)) in one.iter().zip(&two).enumerate() {
        assert!(
            a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()),
            "output {i} depends on the thread count"
        );
    }
    // the upper triangle of the accumulated Gram only; symmetric after the mirror
    let mut acc = one[2].clone();
    assert!((0..333).all(|i| (0..i).all(|j| acc[[i, j]] == 0.0)));
    symmetrize_from_upper(&mut acc);
    for (name, x, reference, k) in [
        ("gram_cols", &one[0], &gram, 700),
        ("gram_rows", &one[1], &gram, 700),
        ("gram_rows_add_upper", &acc, &gram, 700),
        ("NormalEquations gram", &one[3], &gram, 700),
        ("NormalEquations zty", &one[4], &zty, 700),
        ("matmul_abt_par", &one[5], &cross, 700),
    ] {
        let r = worst_ratio(x, reference, k);
        assert!(r <= 1.0, "{name}: {r} times the rounding bound");
    }
    // and it is faer's arithmetic, not OpenBLAS's: the Grams differ from OpenBLAS's somewhere
    let differ = |a: &Array2<f64>, b: &Array2<f64>| a.iter().zip(b).any(|(x, y)| x != y);
    assert!(differ(&one[0], &openblas[0]), "gram_cols ran OpenBLAS");
    assert!(differ(&one[5], &openblas[5]), "matmul_abt_par ran OpenBLAS");
}
