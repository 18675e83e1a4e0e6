//! Helpers shared by the ternary-random-features kinds (`trf_*`): data loading from the registry, the
//! per-runner cache of computations shared by several cells, and small parsing/check helpers.
//!
//! **Shared computations.** Some figures sweep a parameter that does not change the expensive part of a
//! cell (the ridge regulariser γ, a histogram bin): the cells of one group share one computation, cached in
//! the runner and computed once. Its randomness comes from `rng_stream(stream_seed, group key)` — the
//! group key is the cell key without the cheap parameter, `stream_seed` a setting of the kind — never from
//! the RNG of whichever cell happens to arrive first, so results do not depend on scheduling or thread
//! count. The computation runs on its own OS thread: a rayon worker that waits for it must not steal a
//! sibling cell that would then wait on the same cache entry (a re-entrant deadlock). That thread runs it
//! on a pool of the caller's size, so `--threads` bounds it as it bounds the cells.

use ndarray::{Array2, ArrayView2, Axis};
use rand::seq::SliceRandom;
use rfx_core::RfxRng;
use rfx_data::{cache_dir_from_env, fetch_from_env, load_idx_set, TrainTest};
use rfx_harness::config::Value;
use rfx_harness::kind::{Cell, CellError};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The slot of one group: filled once with the computation's value or its error message.
type Slot<T> = Arc<OnceLock<Result<Arc<T>, String>>>;

/// A cache of computations keyed by a group key, each computed once (see the module docs).
pub struct SharedCache<T> {
    map: Mutex<HashMap<String, Slot<T>>>,
}

impl<T: Send + Sync> Default for SharedCache<T> {
    fn default() -> Self {
        Self {
            map: Mutex::new(HashMap::new()),
        }
    }
}

impl<T: Send + Sync> SharedCache<T> {
    /// The value of group `key`, computing it with `f` on a dedicated thread (with a rayon pool of the
    /// caller's size) the first time.
    pub fn get(
        &self,
        key: &str,
        f: impl FnOnce() -> Result<T, String> + Send,
    ) -> Result<Arc<T>, CellError> {
        let slot = {
            let mut map = self
                .map
                .lock()
                .map_err(|_| CellError::Fatal("shared cache poisoned".into()))?;
            map.entry(key.to_string()).or_default().clone()
        };
        // The caller's pool size (the run's `--threads`), for the computation's own pool: a plain thread's
        // rayon calls would otherwise go to the global pool, one thread per CPU, whatever `--threads` says.
        let threads = rayon::current_num_threads();
        let r = slot.get_or_init(|| {
            std::thread::scope(|s| {
                s.spawn(|| {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .map_err(|e| format!("computation of `{key}`: no worker threads: {e}"))?;
                    pool.install(|| f().map(Arc::new))
                })
                .join()
                .unwrap_or_else(|_| Err(format!("computation of `{key}` panicked")))
            })
        });
        r.clone().map_err(CellError::Fatal)
    }

    /// Drops every cached value whose key starts with `prefix` (to bound memory once a group is done).
    pub fn forget_prefix(&self, prefix: &str) {
        if let Ok(mut map) = self.map.lock() {
            map.retain(|k, _| !k.starts_with(prefix));
        }
    }
}

/// The image sets of a runner, each loaded once and kept under its name (so one slot serves a runner that
/// reads several sets: the set returned is always the one asked for).
#[derive(Default)]
pub struct DataSlot(SharedCache<TrainTest>);

impl DataSlot {
    /// An empty slot.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Loads an IDX data set (`mnist`, `fashion-mnist`) from the cache, fetching it from `RFX_DATA_MIRROR`
/// (or its public source) first, once per slot and name.
pub fn idx_data(slot: &DataSlot, name: &str) -> Result<Arc<TrainTest>, CellError> {
    slot.0.get(name, || {
        fetch_from_env(name).map_err(|e| format!("fetching `{name}`: {e}"))?;
        load_idx_set(name, &cache_dir_from_env()).map_err(|e| format!("loading `{name}`: {e}"))
    })
}

/// The cell key without the parameters `drop` (the group key of a shared computation).
pub fn group_key(cell: &Cell, drop: &[&str]) -> String {
    cell.params
        .iter()
        .filter(|(k, _)| !drop.contains(&k.as_str()))
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// Float parameter (integers convert), or an error naming it.
pub fn cell_f64(cell: &Cell, name: &str) -> Result<f64, CellError> {
    cell.get(name).and_then(Value::as_f64).ok_or_else(|| {
        CellError::Fatal(format!(
            "cell {} has no numeric parameter `{name}`",
            cell.key()
        ))
    })
}

/// Check helper: a number in `[min, max]`.
pub fn check_f64(v: &Value, min: f64, max: f64) -> Result<(), String> {
    match v.as_f64() {
        Some(x) if x >= min && x <= max => Ok(()),
        Some(x) => Err(format!(
            "value {x} out of range; allowed: numbers from {min} to {max}"
        )),
        None => Err(format!("expected a number, found \"{v}\"")),
    }
}

/// Maps an [`rfx_core::RfxError`] (or any error) to a fatal cell error naming the cell.
pub fn fatal(cell: &Cell, what: &str) -> impl Fn(rfx_core::RfxError) -> CellError {
    let key = cell.key();
    let what = what.to_string();
    move |e| CellError::Fatal(format!("cell {key}: {what}: {e}"))
}

/// Multiplies `x` in place so that $\hat\tau = \frac1n\sum_i\Vert\mathbf x_i\Vert^2$ equals `tau`; returns the factor.
pub fn scale_to_tau(x: &mut Array2<f64>, tau: f64) -> f64 {
    let n = x.nrows().max(1) as f64;
    let t = x.iter().map(|v| v * v).sum::<f64>() / n;
    let c = if t > 0.0 { (tau / t).sqrt() } else { 1.0 };
    x.mapv_inplace(|v| v * c);
    c
}

/// Subtracts the column means of `x` (its own mean: the notebook's per-set normalisation).
pub fn center_columns(x: &mut Array2<f64>) {
    if let Some(mean) = x.mean_axis(Axis(0)) {
        *x -= &mean;
    }
}

/// Rows `idx` of `x`.
pub fn rows(x: ArrayView2<'_, f64>, idx: &[usize]) -> Array2<f64> {
    x.select(Axis(0), idx)
}

/// Seconds elapsed while running `f`, with its result.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = std::time::Instant::now();
    let r = f();
    (r, t.elapsed().as_secs_f64())
}

/// `k` distinct indices of `0..len` in random order: the first `k` of one shuffle of `0..len` drawn from
/// `rng` (the random train/test rows of the image kinds); `k > len` is an error naming `what`.
pub fn random_rows(
    what: &str,
    len: usize,
    k: usize,
    rng: &mut RfxRng,
) -> Result<Vec<usize>, String> {
    if k > len {
        return Err(format!("{what}: asked for {k} rows, the set has {len}"));
    }
    let mut idx: Vec<usize> = (0..len).collect();
    idx.shuffle(rng);
    idx.truncate(k);
    Ok(idx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn shared_cache_computes_once_under_parallel_access() {
        use rayon::prelude::*;
        let cache = SharedCache::<usize>::default();
        let calls = AtomicUsize::new(0);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let got: Vec<usize> = pool.install(|| {
            (0..16)
                .into_par_iter()
                .map(|i| {
                    *cache
                        .get(&format!("g{}", i % 2), || {
                            calls.fetch_add(1, Ordering::SeqCst);
                            // nested parallelism inside the shared computation must not deadlock
                            Ok((0..1000usize).into_par_iter().sum::<usize>() + i % 2)
                        })
                        .unwrap()
                })
                .collect()
        });
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert!(got.iter().enumerate().all(|(i, &v)| v == 499_500 + i % 2));
    }

    #[test]
    fn shared_computations_run_on_a_pool_of_the_callers_size() {
        // `--threads 1` must bound the shared computation too (its rayon calls would otherwise use the
        // global pool, one thread per CPU).
        for n in [1, 3] {
            let cache = SharedCache::<usize>::default();
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap();
            let seen =
                pool.install(|| *cache.get("g", || Ok(rayon::current_num_threads())).unwrap());
            assert_eq!(seen, n);
        }
    }

    #[test]
    fn scale_to_tau_hits_target() {
        let mut x = Array2::from_shape_fn((5, 3), |(i, j)| (i + 2 * j) as f64);
        scale_to_tau(&mut x, 0.5);
        let t = x.iter().map(|v| v * v).sum::<f64>() / 5.0;
        assert!((t - 0.5).abs() < 1e-12);
    }
}
