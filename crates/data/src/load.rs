//! Loading registered data sets from the cache directory by name.
//!
//! Every function here first calls [`crate::fetch::require`]: the files must have been fetched
//! (`rfx fetch <name>`) and pass their checksum; nothing is downloaded implicitly.

use std::path::Path;

use ndarray::{s, Array1};
use rfx_core::{Result, RfxError};

use crate::csv::{read_csv, CsvOptions, Header};
use crate::dataset::{ClassificationData, Loaded, RegressionData, TrainTest, UciData};
use crate::fetch::require;
use crate::idx::{read_idx_images, read_idx_labels};
use crate::keel::{read_keel, Categorical};
use crate::registry::{dataset, Kind};

/// Loads any registered data set (see [`crate::registry::datasets`]) in its natural form.
/// KEEL sets use [`Categorical::OneHot`].
pub fn load(name: &str, cache_dir: &Path) -> Result<Loaded> {
    Ok(match dataset(name)?.kind {
        Kind::Idx { .. } => Loaded::TrainTest(load_idx_set(name, cache_dir)?),
        Kind::Keel => Loaded::Classification(load_keel(name, cache_dir, Categorical::OneHot)?),
        Kind::Uci => Loaded::UciSplits(load_uci(name, cache_dir)?),
        Kind::UciRaw { .. } => Loaded::Regression(load_uci_raw(name, cache_dir)?),
    })
}

fn wrong_kind(name: &str, wanted: &str) -> RfxError {
    RfxError::invalid("data set", name, format!("a {wanted} set"))
}

/// Loads `mnist` or `fashion-mnist`: pixel values `0.0..=255.0` (unscaled), 784 columns, labels 0..9
/// with the set's class names. The parts are named `<name>/train` and `<name>/test`.
pub fn load_idx_set(name: &str, cache_dir: &Path) -> Result<TrainTest> {
    let Kind::Idx { classes } = dataset(name)?.kind else {
        return Err(wrong_kind(name, "IDX (mnist, fashion-mnist)"));
    };
    let files = require(name, cache_dir)?;
    let part = |images: &Path, labels: &Path, suffix: &str| -> Result<ClassificationData> {
        let x = read_idx_images(images)?;
        let labels_v = read_idx_labels(labels)?;
        if labels_v.len() != x.nrows() {
            return Err(RfxError::Data(format!(
                "{} has {} labels for {} images in {}",
                labels.display(),
                labels_v.len(),
                x.nrows(),
                images.display()
            )));
        }
        if let Some(&bad) = labels_v.iter().find(|&&l| l >= classes.len()) {
            return Err(RfxError::Data(format!(
                "{}: label {bad} outside 0..{}",
                labels.display(),
                classes.len()
            )));
        }
        Ok(ClassificationData {
            name: format!("{name}/{suffix}"),
            x,
            labels: labels_v,
            classes: classes.iter().map(|c| c.to_string()).collect(),
        })
    };
    Ok(TrainTest {
        train: part(&files[0], &files[1], "train")?,
        test: part(&files[2], &files[3], "test")?,
    })
}

/// Loads a KEEL set (`keel/<set>`; see [`crate::keel`] for the handling of categorical features).
pub fn load_keel(
    name: &str,
    cache_dir: &Path,
    categorical: Categorical,
) -> Result<ClassificationData> {
    if dataset(name)?.kind != Kind::Keel {
        return Err(wrong_kind(name, "KEEL (keel/...)"));
    }
    let files = require(name, cache_dir)?;
    read_keel(&files[0], name, categorical)
}

/// Reads a UCI benchmark from its two files: `data` (comma separated, no header, target last) and
/// `test_mask` (one 0/1 column per split, 1 = test row, same number of rows).
pub fn read_uci(data: &Path, test_mask: &Path, name: &str) -> Result<UciData> {
    let opts = CsvOptions {
        header: Header::Absent,
        ..CsvOptions::default()
    };
    let table = read_csv(data, &opts)?.data;
    if table.ncols() < 2 {
        return Err(RfxError::Data(format!(
            "{}: need at least one input column and a target, found {} columns",
            data.display(),
            table.ncols()
        )));
    }
    let masks = read_csv(test_mask, &opts)?.data;
    if masks.nrows() != table.nrows() {
        return Err(RfxError::Data(format!(
            "{} has {} rows but {} has {}",
            test_mask.display(),
            masks.nrows(),
            data.display(),
            table.nrows()
        )));
    }
    if let Some((i, v)) = masks
        .indexed_iter()
        .find(|(_, &v)| v != 0.0 && v != 1.0)
        .map(|((i, _), &v)| (i, v))
    {
        return Err(RfxError::Data(format!(
            "{}: data row {}: mask value {v} is neither 0 nor 1",
            test_mask.display(),
            i + 1
        )));
    }
    let d = table.ncols() - 1;
    Ok(UciData {
        data: RegressionData {
            name: name.to_string(),
            x: table.slice(s![.., ..d]).to_owned(),
            y: table.column(d).to_owned(),
        },
        test_masks: masks
            .columns()
            .into_iter()
            .map(|c| c.iter().map(|&v| v == 1.0).collect())
            .collect(),
    })
}

/// Loads a UCI benchmark with its published splits (`uci/<set>`).
pub fn load_uci(name: &str, cache_dir: &Path) -> Result<UciData> {
    if dataset(name)?.kind != Kind::Uci {
        return Err(wrong_kind(name, "UCI (uci/...)"));
    }
    let files = require(name, cache_dir)?;
    read_uci(&files[0], &files[1], name)
}

/// Reads a whitespace-separated numeric file whose column `target` is the target and whose columns
/// before it are the inputs (columns after it are ignored).
pub fn read_uci_raw(path: &Path, target: usize, name: &str) -> Result<RegressionData> {
    let table = read_csv(path, &CsvOptions::whitespace())?.data;
    if target == 0 || target >= table.ncols() {
        return Err(RfxError::Data(format!(
            "{}: target column {target} needs inputs before it and must be below the {} columns",
            path.display(),
            table.ncols()
        )));
    }
    Ok(RegressionData {
        name: name.to_string(),
        x: table.slice(s![.., ..target]).to_owned(),
        y: Array1::from_iter(table.column(target).iter().copied()),
    })
}

/// Loads a raw UCI set (`uci-raw/<set>`) with the registry's target column.
pub fn load_uci_raw(name: &str, cache_dir: &Path) -> Result<RegressionData> {
    let Kind::UciRaw { target } = dataset(name)?.kind else {
        return Err(wrong_kind(name, "raw UCI (uci-raw/...)"));
    };
    let files = require(name, cache_dir)?;
    read_uci_raw(&files[0], target, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uci_files_are_read_with_their_masks() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data.csv");
        let mask = dir.path().join("mask.csv");
        std::fs::write(&data, "1,2,3\n4,5,6\n7,8,9\n").unwrap();
        std::fs::write(&mask, "0,1\n1,0\n0,0\n").unwrap();
        let u = read_uci(&data, &mask, "t").unwrap();
        assert_eq!(
            u.data.x,
            ndarray::array![[1.0, 2.0], [4.0, 5.0], [7.0, 8.0]]
        );
        assert_eq!(u.data.y, ndarray::array![3.0, 6.0, 9.0]);
        assert_eq!(
            u.test_masks,
            vec![vec![false, true, false], vec![true, false, false]]
        );
        std::fs::write(&mask, "0,1\n1,0\n0,2\n").unwrap();
        let err = read_uci(&data, &mask, "t").unwrap_err().to_string();
        assert!(err.contains("mask.csv: data row 3:"), "{err}");
        std::fs::write(&mask, "0,1\n1,0\n").unwrap();
        assert!(read_uci(&data, &mask, "t").is_err());
    }

    #[test]
    fn raw_uci_target_column() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("d.txt");
        std::fs::write(&p, " 1 2 3 4\n 5 6 7 8\n").unwrap();
        let r = read_uci_raw(&p, 2, "t").unwrap();
        assert_eq!(r.x, ndarray::array![[1.0, 2.0], [5.0, 6.0]]);
        assert_eq!(r.y, ndarray::array![3.0, 7.0]);
        assert!(read_uci_raw(&p, 4, "t").is_err());
    }

    #[test]
    fn kinds_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        assert!(load_keel("mnist", dir.path(), Categorical::OneHot).is_err());
        assert!(load_uci("keel/letter", dir.path()).is_err());
        assert!(load_idx_set("uci/protein", dir.path()).is_err());
        assert!(load_uci_raw("uci/protein", dir.path()).is_err());
    }
}
