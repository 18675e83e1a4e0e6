//! In-memory data sets returned by the loaders.

use ndarray::{Array1, Array2, Axis};
use rfx_core::{Result, RfxError};

/// A classification data set: inputs and class indices into a table of class names.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassificationData {
    /// Name of the set (registry name, possibly with a `/train` or `/test` suffix).
    pub name: String,
    /// Inputs, one row per example.
    pub x: Array2<f64>,
    /// Class of each row, an index into `classes`.
    pub labels: Vec<usize>,
    /// Class names; `classes[labels[i]]` is the original label of row `i`.
    pub classes: Vec<String>,
}

impl ClassificationData {
    /// Number of examples.
    pub fn len(&self) -> usize {
        self.x.nrows()
    }

    /// True when there are no examples.
    pub fn is_empty(&self) -> bool {
        self.x.nrows() == 0
    }

    /// Number of classes.
    pub fn n_classes(&self) -> usize {
        self.classes.len()
    }

    /// How many examples each class has.
    pub fn class_counts(&self) -> Vec<usize> {
        let mut c = vec![0; self.classes.len()];
        for &l in &self.labels {
            c[l] += 1;
        }
        c
    }

    /// The rows `idx` (in that order), with the same class table.
    pub fn select(&self, idx: &[usize]) -> Result<Self> {
        check_indices(idx, self.len())?;
        Ok(ClassificationData {
            name: self.name.clone(),
            x: self.x.select(Axis(0), idx),
            labels: idx.iter().map(|&i| self.labels[i]).collect(),
            classes: self.classes.clone(),
        })
    }
}

/// A regression data set: inputs and real targets.
#[derive(Debug, Clone, PartialEq)]
pub struct RegressionData {
    /// Name of the set (registry name).
    pub name: String,
    /// Inputs, one row per example.
    pub x: Array2<f64>,
    /// Targets.
    pub y: Array1<f64>,
}

impl RegressionData {
    /// Number of examples.
    pub fn len(&self) -> usize {
        self.x.nrows()
    }

    /// True when there are no examples.
    pub fn is_empty(&self) -> bool {
        self.x.nrows() == 0
    }

    /// The rows `idx` (in that order).
    pub fn select(&self, idx: &[usize]) -> Result<Self> {
        check_indices(idx, self.len())?;
        Ok(RegressionData {
            name: self.name.clone(),
            x: self.x.select(Axis(0), idx),
            y: self.y.select(Axis(0), idx),
        })
    }
}

/// A UCI regression benchmark with its published train/test splits.
#[derive(Debug, Clone, PartialEq)]
pub struct UciData {
    /// Inputs and targets.
    pub data: RegressionData,
    /// One mask per split, `true` for test rows (the source's `test_mask.csv.gz`, one column per split).
    pub test_masks: Vec<Vec<bool>>,
}

impl UciData {
    /// Number of published splits.
    pub fn n_splits(&self) -> usize {
        self.test_masks.len()
    }

    /// Split `k` as `(train, test)`, rows in file order.
    pub fn split(&self, k: usize) -> Result<(RegressionData, RegressionData)> {
        let mask = self.test_masks.get(k).ok_or_else(|| {
            RfxError::invalid(
                "split",
                k,
                format!("0..{} for {}", self.test_masks.len(), self.data.name),
            )
        })?;
        let test: Vec<usize> = (0..mask.len()).filter(|&i| mask[i]).collect();
        let train: Vec<usize> = (0..mask.len()).filter(|&i| !mask[i]).collect();
        Ok((self.data.select(&train)?, self.data.select(&test)?))
    }
}

/// A data set with a fixed train/test division (MNIST, Fashion-MNIST).
#[derive(Debug, Clone, PartialEq)]
pub struct TrainTest {
    /// The training part.
    pub train: ClassificationData,
    /// The test part.
    pub test: ClassificationData,
}

/// Any registered data set, as loaded by [`crate::load()`].
#[derive(Debug, Clone, PartialEq)]
pub enum Loaded {
    /// IDX image sets with their own train/test division.
    TrainTest(TrainTest),
    /// KEEL classification sets.
    Classification(ClassificationData),
    /// UCI regression benchmarks with published splits (`uci/...`).
    UciSplits(UciData),
    /// Raw UCI regression sets (`uci-raw/...`).
    Regression(RegressionData),
}

pub(crate) fn check_indices(idx: &[usize], n: usize) -> Result<()> {
    match idx.iter().find(|&&i| i >= n) {
        Some(&i) => Err(RfxError::invalid("row index", i, format!("0..{n}"))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn uci_split_partitions_rows() {
        let u = UciData {
            data: RegressionData {
                name: "t".into(),
                x: array![[0.0], [1.0], [2.0], [3.0]],
                y: array![0.0, 10.0, 20.0, 30.0],
            },
            test_masks: vec![vec![false, true, false, true]],
        };
        let (tr, te) = u.split(0).unwrap();
        assert_eq!(tr.y, array![0.0, 20.0]);
        assert_eq!(te.x, array![[1.0], [3.0]]);
        assert!(u.split(1).is_err());
        assert!(u.data.select(&[4]).is_err());
    }
}
