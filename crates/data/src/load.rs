//! Loading registered data sets from the cache directory by name.
//!
//! Every function here first calls [`crate::fetch::require`]: the files must have been fetched
//! (`rfx fetch <name>`) and pass their checksum; nothing is downloaded implicitly.

use std::io::Read;
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
        Kind::Abalone => Loaded::Classification(load_abalone(name, cache_dir)?),
        Kind::RData { .. } => Loaded::Classification(load_rdata(name, cache_dir)?),
        Kind::LatLonGrid { .. } => Loaded::Regression(load_lat_lon_grid(name, cache_dir)?),
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

/// Loads `sklego/abalone` ([`read_abalone`]).
pub fn load_abalone(name: &str, cache_dir: &Path) -> Result<ClassificationData> {
    if dataset(name)?.kind != Kind::Abalone {
        return Err(wrong_kind(name, "abalone (sklego/abalone)"));
    }
    let files = require(name, cache_dir)?;
    read_abalone(&files[0], name)
}

/// Loads an R data frame set (`mlbench/shuttle`, `mlbench/shuttle-trn`): the registry's object and class
/// column ([`read_rdata`]), and only its first rows where the registry says so (every class level is kept,
/// so `n_classes` is the data frame's).
pub fn load_rdata(name: &str, cache_dir: &Path) -> Result<ClassificationData> {
    let Kind::RData {
        object,
        target,
        rows,
    } = dataset(name)?.kind
    else {
        return Err(wrong_kind(name, "R data frame (mlbench/...)"));
    };
    let files = require(name, cache_dir)?;
    let mut c = read_rdata(&files[0], object, target, name)?;
    if let Some(r) = rows {
        if c.x.nrows() < r {
            return Err(RfxError::Data(format!(
                "{}: object {object} has {} rows; {name} is its first {r}",
                files[0].display(),
                c.x.nrows()
            )));
        }
        c.x = c.x.slice(ndarray::s![..r, ..]).to_owned();
        c.labels.truncate(r);
    }
    Ok(c)
}

/// Loads a latitude/longitude grid set (`ferret/etopo60`, `ferret/coads-airt`) as a regression table
/// ([`read_lat_lon_grid`] with the registry's variable).
pub fn load_lat_lon_grid(name: &str, cache_dir: &Path) -> Result<RegressionData> {
    let Kind::LatLonGrid { variable, monthly } = dataset(name)?.kind else {
        return Err(wrong_kind(name, "latitude/longitude grid (ferret/...)"));
    };
    let files = require(name, cache_dir)?;
    read_lat_lon_grid(&files[0], variable, monthly, name)
}

/// Longitude `lon` in degrees mapped into $[-180, 180)$: $((\mathrm{lon} + 180) \bmod 360) - 180$.
pub fn wrap_longitude(lon: f64) -> f64 {
    (lon + 180.0).rem_euclid(360.0) - 180.0
}

/// Reads `variable` of the NetCDF-3 file `path` (gzipped or not) as a regression table on the sphere (see
/// [`Kind::LatLonGrid`]): columns latitude, longitude in $[-180, 180)$ and, when `monthly`, the month 1–12;
/// the target is the variable, cells with its fill value dropped. The variable must have dimensions
/// (latitude, longitude), or (record, latitude, longitude) with 12 records when `monthly`, whose coordinate
/// variables exist with units `degrees_north` and `degrees_east` and finite values (latitudes in
/// $[-90, 90]$). Errors name the file and what is wrong.
pub fn read_lat_lon_grid(
    path: &Path,
    variable: &str,
    monthly: bool,
    name: &str,
) -> Result<RegressionData> {
    use crate::netcdf::NcFile;
    let what = path.display();
    let file = NcFile::read(path)?;
    let v = file.variable(variable)?;
    let shape = file.shape(v);
    let bad = |msg: String| RfxError::Data(format!("{what}: variable {variable}: {msg}"));
    let want = if monthly { 3 } else { 2 };
    if v.dims.len() != want || (monthly && !v.is_record) {
        return Err(bad(format!(
            "expected the dimensions ({}latitude, longitude), found {} dimensions{}",
            if monthly { "month record, " } else { "" },
            v.dims.len(),
            if v.is_record { " with records" } else { "" }
        )));
    }
    if monthly && shape[0] != 12 {
        return Err(bad(format!(
            "expected 12 monthly records, found {}",
            shape[0]
        )));
    }
    // the coordinate variable of dimension `d`, with its units checked
    let axis = |d: usize, units: &str| -> Result<Vec<f64>> {
        let dim = &file.dimensions[d].name;
        let c = file.variable(dim)?;
        if c.text_attribute("units").map(str::trim) != Some(units) {
            return Err(bad(format!(
                "coordinate {dim} has units {:?}, expected {units:?}",
                c.text_attribute("units")
            )));
        }
        let x = file.values(dim)?;
        if x.len() != file.dimensions[d].len || x.iter().any(|v| !v.is_finite()) {
            return Err(bad(format!(
                "coordinate {dim} has {} values, not all finite, for {} cells",
                x.len(),
                file.dimensions[d].len
            )));
        }
        Ok(x)
    };
    let lat = axis(v.dims[want - 2], "degrees_north")?;
    let lon = axis(v.dims[want - 1], "degrees_east")?;
    if let Some(l) = lat.iter().find(|l| l.abs() > 90.0) {
        return Err(bad(format!("latitude {l} lies outside [-90, 90]")));
    }
    let lon: Vec<f64> = lon.into_iter().map(wrap_longitude).collect();
    let values = file.values(variable)?;
    let cells = lat.len() * lon.len();
    let cols = want;
    let mut x = Vec::new();
    let mut y = Vec::new();
    for (k, &z) in values.iter().enumerate() {
        if z.is_nan() {
            continue;
        }
        if !z.is_finite() {
            return Err(bad(format!("value {z} at cell {k} is not finite")));
        }
        let (month, cell) = (k / cells, k % cells);
        x.push(lat[cell / lon.len()]);
        x.push(lon[cell % lon.len()]);
        if monthly {
            x.push((month + 1) as f64);
        }
        y.push(z);
    }
    if y.is_empty() {
        return Err(bad("no cell holds a value".into()));
    }
    Ok(RegressionData {
        name: name.to_string(),
        x: ndarray::Array2::from_shape_vec((y.len(), cols), x)
            .map_err(|e| RfxError::Data(e.to_string()))?,
        y: Array1::from(y),
    })
}

/// Reads the data frame `object` of a gzipped `.rda` stream (see [`crate::rdata`]) as a classification
/// set: the factor column `target` gives the labels (its levels, in R's order, are the class names; rows
/// with `NA` are an error), every other column is a feature (numeric columns as they are, other factors
/// by their 1-based codes). Errors name the file, the object and the column.
pub fn read_rdata(
    path: &Path,
    object: &str,
    target: &str,
    name: &str,
) -> Result<ClassificationData> {
    use crate::rdata::{data_frame, read_rda, Column};
    let mut bytes = Vec::new();
    flate2::read::MultiGzDecoder::new(
        std::fs::File::open(path).map_err(|e| RfxError::io(path, e))?,
    )
    .read_to_end(&mut bytes)
    .map_err(|e| RfxError::io(path, e))?;
    let what = path.display().to_string();
    let objs = read_rda(&bytes, &what)?;
    let obj = objs
        .iter()
        .find(|(k, _)| k == object)
        .map(|(_, v)| v)
        .ok_or_else(|| {
            let have: Vec<&str> = objs.iter().map(|(k, _)| k.as_str()).collect();
            RfxError::Data(format!(
                "{what}: no object {object} (it holds {})",
                have.join(", ")
            ))
        })?;
    let df = data_frame(obj, &format!("{what}, object {object}"))?;
    let t = df.names.iter().position(|c| c == target).ok_or_else(|| {
        RfxError::Data(format!(
            "{what}, object {object}: no column {target} (columns: {})",
            df.names.join(", ")
        ))
    })?;
    let Column::Factor { codes, levels } = &df.columns[t] else {
        return Err(RfxError::Data(format!(
            "{what}, object {object}: column {target} is not a factor"
        )));
    };
    if let Some(row) = codes.iter().position(|&c| c == 0) {
        return Err(RfxError::Data(format!(
            "{what}, object {object}: column {target} is NA in row {}",
            row + 1
        )));
    }
    let n = codes.len();
    // (name, column) of every feature column
    let features: Vec<(&String, &Column)> = df
        .names
        .iter()
        .zip(&df.columns)
        .enumerate()
        .filter(|(j, _)| *j != t)
        .map(|(_, nc)| nc)
        .collect();
    let mut x = ndarray::Array2::<f64>::zeros((n, features.len()));
    for (j, (_, c)) in features.iter().enumerate() {
        match c {
            Column::Numeric(v) => x.column_mut(j).assign(&ndarray::ArrayView1::from(v)),
            Column::Factor { codes, .. } => x
                .column_mut(j)
                .iter_mut()
                .zip(codes)
                .for_each(|(o, &k)| *o = if k == 0 { f64::NAN } else { f64::from(k) }),
        }
    }
    if let Some(((i, j), _)) = x.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(RfxError::Data(format!(
            "{what}, object {object}: column {} is NA or not finite in row {}",
            features[j].0,
            i + 1
        )));
    }
    Ok(ClassificationData {
        name: name.to_string(),
        x,
        labels: codes.iter().map(|&c| c as usize - 1).collect(),
        classes: levels.clone(),
    })
}

/// Reads the UCI Abalone CSV (header `sex,length,diameter,height,whole_weight,shucked_weight,
/// viscera_weight,shell_weight,rings`) as the 3-class problem of the Fernández-Delgado et al. (2014)
/// collection that the Gegenbauer paper's Table 3 uses: class 0 = rings 1–8, 1 = rings 9–10, 2 = rings
/// ≥ 11 (the grouping of the UCI documentation). Eight features, as that collection has: `sex` coded as
/// one number (F = 0, I = 1, M = 2; the collection also codes it by one column) and the seven
/// measurements. Errors name the file and line.
pub fn read_abalone(path: &Path, name: &str) -> Result<ClassificationData> {
    let mut lines = crate::io::NumberedLines::open(path)?;
    let mut x: Vec<f64> = Vec::new();
    let mut labels = Vec::new();
    let mut header_seen = false;
    while let Some((no, line)) = lines.next_line()? {
        let line = line.trim().to_string();
        if line.is_empty() {
            continue;
        }
        if !header_seen {
            header_seen = true;
            if !line.starts_with("sex,") {
                return Err(lines.error(no, "expected the header `sex,length,...,rings`"));
            }
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() != 9 {
            return Err(lines.error(no, format!("expected 9 fields, found {}", f.len())));
        }
        let sex = match f[0] {
            "F" => 0.0,
            "I" => 1.0,
            "M" => 2.0,
            other => return Err(lines.error(no, format!("sex \"{other}\" is none of F, I, M"))),
        };
        x.push(sex);
        for v in &f[1..8] {
            x.push(
                crate::io::parse_finite(v)
                    .ok_or_else(|| lines.error(no, format!("\"{v}\" is not a finite number")))?,
            );
        }
        let rings = crate::io::parse_finite(f[8])
            .filter(|r| *r >= 1.0 && r.fract() == 0.0)
            .ok_or_else(|| {
                lines.error(no, format!("rings \"{}\" is not a positive integer", f[8]))
            })?;
        labels.push(match rings as u32 {
            1..=8 => 0,
            9 | 10 => 1,
            _ => 2,
        });
    }
    let n = labels.len();
    if n == 0 {
        return Err(RfxError::Data(format!("{}: no data rows", path.display())));
    }
    Ok(ClassificationData {
        name: name.to_string(),
        x: ndarray::Array2::from_shape_vec((n, 8), x).map_err(|e| RfxError::Data(e.to_string()))?,
        labels,
        classes: vec!["rings 1-8".into(), "rings 9-10".into(), "rings 11+".into()],
    })
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
        assert!(load_abalone("keel/letter", dir.path()).is_err());
        assert!(load_lat_lon_grid("mlbench/shuttle", dir.path()).is_err());
    }

    #[test]
    fn longitudes_wrap_into_minus_180_to_180() {
        for (lon, want) in [
            (20.5, 20.5),
            (179.5, 179.5),
            (180.0, -180.0),
            (190.0, -170.0),
            (379.5, 19.5),
            (-180.0, -180.0),
            (-190.0, 170.0),
            (0.0, 0.0),
        ] {
            assert_eq!(wrap_longitude(lon), want, "{lon}");
        }
    }

    #[test]
    fn a_grid_file_becomes_a_table_without_fill_cells() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("tiny.nc");
        std::fs::write(&p, crate::netcdf::tests::tiny(1)).unwrap();
        // `z[lat, lon]`: 6 cells, one the fill value; longitudes 10, 190, 350 become 10, -170, -10
        let t = read_lat_lon_grid(&p, "z", false, "t").unwrap();
        assert_eq!(
            t.x,
            ndarray::array![
                [-45.0, 10.0],
                [-45.0, -10.0],
                [45.0, 10.0],
                [45.0, -170.0],
                [45.0, -10.0]
            ]
        );
        assert_eq!(t.y, ndarray::array![1.5, 3.0, 4.0, 5.0, 6.25]);
        // the same bytes gzipped read the same
        let gz = dir.path().join("tiny.nc.gz");
        let mut enc = flate2::write::GzEncoder::new(
            std::fs::File::create(&gz).unwrap(),
            flate2::Compression::fast(),
        );
        std::io::Write::write_all(&mut enc, &crate::netcdf::tests::tiny(2)).unwrap();
        enc.finish().unwrap();
        assert_eq!(read_lat_lon_grid(&gz, "z", false, "t").unwrap(), t);
        let e = read_lat_lon_grid(&p, "lat", false, "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("tiny.nc") && e.contains("dimensions"), "{e}");
        let e = read_lat_lon_grid(&p, "w", true, "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("12 monthly records"), "{e}");
        let e = read_lat_lon_grid(&p, "w", false, "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("dimensions"), "{e}");
    }

    #[test]
    fn abalone_rows_become_eight_features_and_three_ring_classes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.csv");
        let head = "sex,length,diameter,height,whole_weight,shucked_weight,viscera_weight,shell_weight,rings\n";
        let rows = "M,0.455,0.365,0.095,0.514,0.2245,0.101,0.15,15\n\
                    F,0.53,0.42,0.135,0.677,0.2565,0.1415,0.21,9\n\
                    I,0.33,0.255,0.08,0.205,0.0895,0.0395,0.055,8\n\
                    I,0.33,0.255,0.08,0.205,0.0895,0.0395,0.055,10\n\
                    I,0.33,0.255,0.08,0.205,0.0895,0.0395,0.055,11\n";
        std::fs::write(&p, format!("{head}{rows}")).unwrap();
        let a = read_abalone(&p, "sklego/abalone").unwrap();
        assert_eq!(a.x.dim(), (5, 8));
        assert_eq!(a.x.column(0).to_vec(), vec![2.0, 0.0, 1.0, 1.0, 1.0]);
        assert_eq!(a.x[[0, 7]], 0.15);
        assert_eq!(a.labels, vec![2, 1, 0, 1, 2]);
        assert_eq!(a.n_classes(), 3);
        for (bad, what) in [
            ("X,0.1,0.1,0.1,0.1,0.1,0.1,0.1,9\n", "sex \"X\""),
            ("M,0.1,0.1,0.1,0.1,0.1,0.1,9\n", "expected 9 fields"),
            (
                "M,0.1,nan,0.1,0.1,0.1,0.1,0.1,9\n",
                "\"nan\" is not a finite number",
            ),
            ("M,0.1,0.1,0.1,0.1,0.1,0.1,0.1,9.5\n", "rings \"9.5\""),
        ] {
            std::fs::write(&p, format!("{head}{bad}")).unwrap();
            let err = read_abalone(&p, "t").unwrap_err().to_string();
            assert!(err.contains("a.csv") && err.contains(what), "{err}");
        }
        std::fs::write(&p, rows).unwrap();
        assert!(read_abalone(&p, "t")
            .unwrap_err()
            .to_string()
            .contains("header"));
    }
}
