//! Measures whether the streamed ridge fit of `ntk-mnist-accuracy` (issue 30: "f32 where the error allows,
//! measured") may form its normal equations in `f32`: NTK random features of all 60,000 MNIST training
//! images (unit-norm rows), $G = Z^\top Z$ and $B = Z^\top Y$ accumulated over blocks of 8,192 images three
//! ways — `f64` throughout (the committed path), $G$ accumulated from `f32` features in `f32` and solved in
//! `f64`, and `f32` features, $G$ and Cholesky factor (no refinement: a refinement step would need $Z$,
//! that is the features, again) — then the test accuracy on the 10,000 test images, the relative difference
//! of the weights and of $G$ against the `f64` path, at the λ values the experiment chose.
//!
//! Run: `RFX_DATA_MIRROR=... cargo run --release -p rfx-experiments --example f32_normal_equations -- [m]`
//! (default m = 4096; memory: about 3 m² doubles).

use ndarray::{s, Array2};
use rfx_core::{rng_stream, FitData};
use rfx_linalg::{add_diag, Cholesky, CholeskyF32, NormalEquations};
use rfx_solvers::ridge::{argmax_rows, one_hot};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let m: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(4096);
    rfx_data::fetch_from_env("mnist")?;
    let tt = rfx_data::load_idx_set("mnist", &rfx_data::cache_dir_from_env())?;
    let (mut xtr, mut xte) = (tt.train.x.clone(), tt.test.x.clone());
    rfx_data::normalize_rows(&mut xtr);
    rfx_data::normalize_rows(&mut xte);
    let y = one_hot(&tt.train.labels, 10, true)?;
    let spec = rfx_registry::method("ntk-rf")?;
    let params = spec.params_from::<&str>(&[])?;
    let map = spec.fit(
        m,
        &params,
        FitData::Dim(xtr.ncols()),
        &mut rng_stream(1, "f32-normal-equations"),
    )?;
    let (n, dim, block) = (xtr.nrows(), map.dim(), 8192);
    let mut ne = NormalEquations::new(dim, 10)?;
    let mut g32 = Array2::<f32>::zeros((dim, dim));
    let mut b32 = Array2::<f32>::zeros((dim, 10));
    let (mut t64, mut t32) = (0.0, 0.0);
    for start in (0..n).step_by(block) {
        let end = (start + block).min(n);
        let z = map.transform(xtr.slice(s![start..end, ..]))?;
        let yb = y.slice(s![start..end, ..]);
        let t = Instant::now();
        ne.push(z.view(), yb)?;
        t64 += t.elapsed().as_secs_f64();
        let (z32, y32) = (z.mapv(|v| v as f32), yb.mapv(|v| v as f32));
        let t = Instant::now();
        ndarray::linalg::general_mat_mul(1.0, &z32.t(), &z32, 1.0, &mut g32);
        ndarray::linalg::general_mat_mul(1.0, &z32.t(), &y32, 1.0, &mut b32);
        t32 += t.elapsed().as_secs_f64();
    }
    let (g, b) = ne.finish();
    let zte = map.transform(xte.view())?;
    let accuracy = |w: &Array2<f64>| {
        let pred = argmax_rows(zte.dot(w).view());
        pred.iter()
            .zip(&tt.test.labels)
            .filter(|(a, b)| a == b)
            .count() as f64
            / pred.len() as f64
    };
    let rel = |a: &Array2<f64>, r: &Array2<f64>| {
        let num = (a - r).iter().map(|v| v * v).sum::<f64>().sqrt();
        num / r.iter().map(|v| v * v).sum::<f64>().sqrt()
    };
    let g32_64 = g32.mapv(f64::from);
    let b32_64 = b32.mapv(f64::from);
    println!(
        "ntk-rf, m = {m} (dim {dim}), n = {n}: ZᵀZ accumulation f64 (dsyrk tiles) {t64:.1} s, f32 (sgemm, full square) {t32:.1} s; ‖G₃₂ − G‖/‖G‖ = {:.2e}",
        rel(&g32_64, &g)
    );
    for lambda in [1e-6, 1e-5, 1e-4] {
        let lam = lambda * n as f64;
        let solve64 = |g: &Array2<f64>, b: &Array2<f64>| -> rfx_core::Result<Array2<f64>> {
            let mut a = g.clone();
            add_diag(&mut a, lam);
            Cholesky::factor(a)?.solve(b.view())
        };
        let w = solve64(&g, &b)?;
        let w_g32 = solve64(&g32_64, &b32_64)?;
        let mut a32 = g32.clone();
        a32.diag_mut().mapv_inplace(|v| v + lam as f32);
        let w_all32 = CholeskyF32::factor_upper(a32).and_then(|f| f.solve(b32_64.view()));
        let all32 = match &w_all32 {
            Ok(w32) => format!(
                "accuracy {:.4}, ‖W − W₆₄‖/‖W₆₄‖ {:.2e}",
                accuracy(w32),
                rel(w32, &w)
            ),
            Err(e) => format!("factor failed: {e}"),
        };
        println!(
            "λ = {lambda:e}·n: f64 accuracy {:.4} | f32 G, f64 solve: accuracy {:.4}, ‖W − W₆₄‖/‖W₆₄‖ {:.2e} | all f32: {all32}",
            accuracy(&w),
            accuracy(&w_g32),
            rel(&w_g32, &w)
        );
    }
    Ok(())
}
