//! Shared pieces of the NTK random-features kinds (`arccos_condition`, `ntk_mse`): a fixed row subsample of
//! a registered data set, preprocessed once per run, and a per-run cache of derived matrices (exact Grams)
//! shared by every cell (and thread) that asks for them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ndarray::{Array2, Axis};
use rfx_data::{Loaded, Standardizer};

use rfx_harness::config::Value;
use rfx_harness::kind::CellError;

/// Checks a `dataset` sweep value: any registered data set; the error lists the allowed names.
pub fn check_any_dataset(v: &Value) -> Result<(), String> {
    match v.as_str().map(rfx_data::dataset) {
        Some(Ok(_)) => Ok(()),
        _ => Err(format!(
            "unknown data set \"{v}\"; allowed: {}",
            rfx_data::datasets()
                .iter()
                .map(|d| d.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// How the rows are preprocessed after subsampling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prep {
    /// Standardise every column (mean 0, standard deviation 1 over the subsample), then scale every row
    /// to unit Euclidean norm.
    StandardizeThenUnit,
    /// Scale every row to unit Euclidean norm (raw units otherwise; e.g. MNIST pixels).
    Unit,
}

/// The inputs of data set `name` (for MNIST-like sets with a fixed split: the training images): `n` rows
/// drawn uniformly without replacement from the stream `(seed, "rows;dataset=<name>")` (all rows when
/// `n` is at least the number of rows), preprocessed by `prep`. Errors name the data set.
pub fn load_rows(name: &str, n: usize, seed: u64, prep: Prep) -> Result<Array2<f64>, CellError> {
    let err = |e: rfx_core::RfxError| CellError::Fatal(format!("data set {name}: {e}"));
    rfx_data::fetch_from_env(name).map_err(err)?;
    let x = match rfx_data::load(name, &rfx_data::cache_dir_from_env()).map_err(err)? {
        Loaded::TrainTest(t) => t.train.x,
        Loaded::Classification(c) => c.x,
        Loaded::UciSplits(u) => u.data.x,
        Loaded::Regression(r) => r.x,
    };
    if x.nrows() == 0 || x.ncols() == 0 {
        return Err(CellError::Fatal(format!(
            "data set {name}: no rows or no columns"
        )));
    }
    let rows = if n < x.nrows() {
        rfx_data::subsample(x.nrows(), n, seed, &format!("rows;dataset={name}")).map_err(err)?
    } else {
        (0..x.nrows()).collect()
    };
    let mut x = x.select(Axis(0), &rows);
    if prep == Prep::StandardizeThenUnit {
        let st = Standardizer::fit(x.view()).map_err(err)?;
        x = st.transform(x.view()).map_err(err)?;
    }
    rfx_data::normalize_rows(&mut x);
    Ok(x)
}

/// Values computed once per run and shared by cells: `get(key, make)` runs `make` on the first request for
/// `key` (holding the lock, so concurrent cells wait instead of computing it twice) and returns the shared
/// value afterwards.
pub struct Shared<T> {
    map: Mutex<HashMap<String, Arc<T>>>,
}

impl<T> Default for Shared<T> {
    fn default() -> Self {
        Shared {
            map: Mutex::new(HashMap::new()),
        }
    }
}

impl<T> Shared<T> {
    /// The value for `key`, computed by `make` on first use.
    pub fn get(
        &self,
        key: &str,
        make: impl FnOnce() -> Result<T, CellError>,
    ) -> Result<Arc<T>, CellError> {
        let mut map = self
            .map
            .lock()
            .map_err(|_| CellError::Fatal("shared cache poisoned".into()))?;
        if let Some(v) = map.get(key) {
            return Ok(Arc::clone(v));
        }
        let v = Arc::new(make()?);
        map.insert(key.to_string(), Arc::clone(&v));
        Ok(v)
    }
}
