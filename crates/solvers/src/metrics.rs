//! Prediction metrics and timing helpers.

use ndarray::ArrayView2;
use rfx_core::{Result, RfxError};
use std::time::{Duration, Instant};

fn check_len(a: usize, b: usize) -> Result<()> {
    if a != b {
        return Err(RfxError::DimensionMismatch(format!(
            "lengths {a} and {b} differ"
        )));
    }
    if a == 0 {
        return Err(RfxError::invalid("length", 0, "at least 1"));
    }
    Ok(())
}

/// Mean squared error $\frac1N \sum_i (\hat y_i - y_i)^2$ over all entries.
pub fn mse(pred: ArrayView2<'_, f64>, target: ArrayView2<'_, f64>) -> Result<f64> {
    if pred.dim() != target.dim() {
        return Err(RfxError::DimensionMismatch(format!(
            "prediction {:?} vs target {:?}",
            pred.dim(),
            target.dim()
        )));
    }
    check_len(pred.len(), target.len())?;
    Ok(pred
        .iter()
        .zip(target.iter())
        .map(|(p, t)| (p - t) * (p - t))
        .sum::<f64>()
        / pred.len() as f64)
}

/// Mean squared error of two slices.
pub fn mse_slice(pred: &[f64], target: &[f64]) -> Result<f64> {
    check_len(pred.len(), target.len())?;
    Ok(pred
        .iter()
        .zip(target)
        .map(|(p, t)| (p - t) * (p - t))
        .sum::<f64>()
        / pred.len() as f64)
}

/// Root mean squared error $\sqrt{\mathrm{MSE}}$.
pub fn rmse(pred: ArrayView2<'_, f64>, target: ArrayView2<'_, f64>) -> Result<f64> {
    Ok(mse(pred, target)?.sqrt())
}

/// Per-item correctness $[\hat y_i = y_i]$, in the items' order: the outcomes a paired test over the same
/// test items compares (their mean is [`accuracy`]).
///
/// ```
/// assert_eq!(rfx_solvers::metrics::correct(&[1, 0, 2], &[1, 1, 2]).unwrap(), vec![true, false, true]);
/// ```
pub fn correct(pred: &[usize], target: &[usize]) -> Result<Vec<bool>> {
    check_len(pred.len(), target.len())?;
    Ok(pred.iter().zip(target).map(|(a, b)| a == b).collect())
}

/// Fraction of equal labels.
pub fn accuracy(pred: &[usize], target: &[usize]) -> Result<f64> {
    check_len(pred.len(), target.len())?;
    Ok(pred.iter().zip(target).filter(|(a, b)| a == b).count() as f64 / pred.len() as f64)
}

/// Runs `f` and returns its value with the wall-clock time it took.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let v = f();
    (v, t.elapsed())
}

/// Achieved GFLOP/s for `flops` floating-point operations in `d`.
pub fn gflops(flops: f64, d: Duration) -> f64 {
    flops / d.as_secs_f64().max(1e-12) / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::arr2;

    #[test]
    fn metrics_values() {
        let p = arr2(&[[1.0, 2.0], [3.0, 4.0]]);
        let t = arr2(&[[1.0, 0.0], [3.0, 6.0]]);
        assert_eq!(mse(p.view(), t.view()).unwrap(), 2.0);
        assert_eq!(rmse(p.view(), t.view()).unwrap(), 2f64.sqrt());
        assert_eq!(mse_slice(&[1.0, 3.0], &[0.0, 0.0]).unwrap(), 5.0);
        assert_eq!(accuracy(&[0, 1, 2, 2], &[0, 1, 1, 2]).unwrap(), 0.75);
        assert!(accuracy(&[0], &[0, 1]).is_err());
        assert!(accuracy(&[], &[]).is_err());
        assert!(mse(p.view(), t.t()).is_ok());
        assert!(mse(p.view(), arr2(&[[1.0, 2.0]]).view()).is_err());
        let (v, d) = timed(|| 3);
        assert_eq!(v, 3);
        assert!(gflops(2e9, Duration::from_secs(1)) == 2.0 && d.as_secs() < 1);
    }
}
