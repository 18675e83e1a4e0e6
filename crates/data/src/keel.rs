//! KEEL `.dat` classification files (gzip transparent).
//!
//! A KEEL file is comma separated with the class label in the last column. It may start with a KEEL/ARFF
//! style header (`@relation`, `@attribute NAME real [lo, hi]`, `@attribute NAME {a, b}`, `@inputs`,
//! `@outputs`, `@data`); the files of the project's mirror have none. Both forms are read:
//!
//! * with a header, a feature is categorical when its `@attribute` declares a `{...}` value list, and the
//!   class table follows the order of the last attribute's list when it has one;
//! * without a header, a feature column is numeric when all its values are finite numbers and categorical
//!   when none of them is; a column mixing the two (say a `?` among numbers) is an error naming the line.
//!   Class names are sorted numerically when they are all numbers (`-1 < 1`, `2 < 10`), otherwise
//!   lexicographically.
//!
//! Categorical features (the `mushroom` set has 22) are one-hot encoded by default: a column with `k`
//! values becomes `k` 0/1 columns, values in declaration order (header) or sorted order (no header), and
//! columns keep their left-to-right order. [`Categorical::Error`] rejects them instead.

use std::collections::BTreeSet;
use std::path::Path;

use ndarray::Array2;
use rfx_core::{Result, RfxError};

use crate::dataset::ClassificationData;
use crate::io::{parse_finite, Delimiter, NumberedLines};

/// What to do with categorical (non-numeric) feature columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Categorical {
    /// One-hot encode them (the default).
    #[default]
    OneHot,
    /// Fail, naming the first offending line and column.
    Error,
}

/// A declared attribute type from an `@attribute` line.
#[derive(Debug, Clone, PartialEq)]
enum Declared {
    Numeric,
    Nominal(Vec<String>),
}

fn parse_attribute(rest: &str) -> Declared {
    match (rest.find('{'), rest.rfind('}')) {
        (Some(a), Some(b)) if b > a => Declared::Nominal(
            rest[a + 1..b]
                .split(',')
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .collect(),
        ),
        _ => Declared::Numeric,
    }
}

/// The distinct values of column `j`, sorted numerically when they are all numbers, else as strings.
fn distinct_values(rows: &[(usize, Vec<String>)], j: usize) -> Vec<String> {
    let set: BTreeSet<&str> = rows.iter().map(|(_, f)| f[j].as_str()).collect();
    let mut values: Vec<String> = set.into_iter().map(String::from).collect();
    let numbers: Option<Vec<f64>> = values.iter().map(|v| parse_finite(v)).collect();
    if numbers.is_some() {
        values.sort_by(|a, b| {
            let (x, y) = (
                parse_finite(a).unwrap_or(0.0),
                parse_finite(b).unwrap_or(0.0),
            );
            x.total_cmp(&y).then_with(|| a.cmp(b))
        });
    }
    values
}

/// Reads a KEEL `.dat` file as a classification set named `name`.
pub fn read_keel(path: &Path, name: &str, categorical: Categorical) -> Result<ClassificationData> {
    let mut lines = NumberedLines::open(path)?;
    let mut declared: Vec<Declared> = Vec::new();
    let mut rows: Vec<(usize, Vec<String>)> = Vec::new();
    let delim = Delimiter::Byte(b',');
    while let Some((line_no, line)) = lines.next_line()? {
        let t = line.trim_start();
        if let Some(h) = t.strip_prefix('@') {
            let lower = h.to_ascii_lowercase();
            if lower.starts_with("attribute") {
                declared.push(parse_attribute(&h["attribute".len()..]));
            }
            continue;
        }
        if t.starts_with('%') {
            continue;
        }
        let fields: Vec<String> = delim.split(line).into_iter().map(String::from).collect();
        if let Some((first_no, first)) = rows.first() {
            if fields.len() != first.len() {
                let msg = format!(
                    "expected {} fields (as on line {first_no}), found {}",
                    first.len(),
                    fields.len()
                );
                return Err(lines.error(line_no, msg));
            }
        } else if !declared.is_empty() && declared.len() != fields.len() {
            let msg = format!(
                "the header declares {} attributes, the line has {} fields",
                declared.len(),
                fields.len()
            );
            return Err(lines.error(line_no, msg));
        } else if fields.len() < 2 {
            return Err(lines.error(line_no, "need at least one feature and a label"));
        }
        rows.push((line_no, fields));
    }
    let ncols = rows.first().map_or(0, |(_, f)| f.len());
    if ncols == 0 {
        return Err(RfxError::Data(format!("{}: no data lines", lines.path())));
    }
    let nfeat = ncols - 1;

    // Column kinds: declared by the header, else inferred from the values.
    let mut kinds: Vec<Declared> = Vec::with_capacity(ncols);
    for j in 0..ncols {
        let kind = match declared.get(j) {
            Some(d) => d.clone(),
            None => {
                let numeric = rows
                    .iter()
                    .filter(|(_, f)| parse_finite(&f[j]).is_some())
                    .count();
                if j < nfeat && numeric == rows.len() {
                    Declared::Numeric
                } else if j < nfeat && numeric > 0 {
                    let (ln, f) = rows
                        .iter()
                        .find(|(_, f)| parse_finite(&f[j]).is_none())
                        .expect("some value is not numeric");
                    let msg = format!(
                        "column {} mixes numbers and `{}`; not a finite number",
                        j + 1,
                        f[j]
                    );
                    return Err(lines.error(*ln, msg));
                } else {
                    Declared::Nominal(distinct_values(&rows, j))
                }
            }
        };
        kinds.push(kind);
    }
    if categorical == Categorical::Error {
        if let Some(j) = (0..nfeat).find(|&j| matches!(kinds[j], Declared::Nominal(_))) {
            let (ln, f) = &rows[0];
            let msg = format!(
                "column {} is categorical (`{}`) and categorical features are not allowed here",
                j + 1,
                f[j]
            );
            return Err(lines.error(*ln, msg));
        }
    }

    // The class table: the last column's values.
    let classes: Vec<String> = match &kinds[nfeat] {
        Declared::Nominal(v) => v.clone(),
        Declared::Numeric => distinct_values(&rows, nfeat),
    };

    let width: usize = kinds[..nfeat]
        .iter()
        .map(|k| match k {
            Declared::Numeric => 1,
            Declared::Nominal(v) => v.len(),
        })
        .sum();
    let mut x = Array2::<f64>::zeros((rows.len(), width));
    let mut labels = Vec::with_capacity(rows.len());
    for (i, (ln, f)) in rows.iter().enumerate() {
        let mut c = 0;
        for j in 0..nfeat {
            match &kinds[j] {
                Declared::Numeric => {
                    x[[i, c]] = parse_finite(&f[j]).ok_or_else(|| {
                        let msg = format!("field {} is `{}`, not a finite number", j + 1, f[j]);
                        lines.error(*ln, msg)
                    })?;
                    c += 1;
                }
                Declared::Nominal(values) => {
                    let k = values.iter().position(|v| v == &f[j]).ok_or_else(|| {
                        let msg = format!("field {} is `{}`, not one of {values:?}", j + 1, f[j]);
                        lines.error(*ln, msg)
                    })?;
                    x[[i, c + k]] = 1.0;
                    c += values.len();
                }
            }
        }
        let label = classes.iter().position(|v| v == &f[nfeat]).ok_or_else(|| {
            let msg = format!("class `{}` is not one of {classes:?}", f[nfeat]);
            lines.error(*ln, msg)
        })?;
        labels.push(label);
    }
    Ok(ClassificationData {
        name: name.to_string(),
        x,
        labels,
        classes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn headerless_numeric_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            &dir,
            "a.dat",
            "1.0, 2.0, 10\n3, 4, 2\n\n5, 6, 10\n-1,0,-1\n",
        );
        let d = read_keel(&p, "keel/a", Categorical::OneHot).unwrap();
        assert_eq!(d.name, "keel/a");
        assert_eq!(d.x.dim(), (4, 2));
        assert_eq!(d.x[[3, 0]], -1.0);
        // Numeric class names sort numerically.
        assert_eq!(d.classes, vec!["-1", "2", "10"]);
        assert_eq!(d.labels, vec![2, 1, 2, 0]);
        assert_eq!(d.class_counts(), vec![1, 1, 2]);
    }

    #[test]
    fn text_labels_and_categorical_features() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(&dir, "m.dat", "x,s,1.5,e\nb,s,2,p\nx,y,0,e\n");
        let d = read_keel(&p, "m", Categorical::OneHot).unwrap();
        assert_eq!(d.classes, vec!["e", "p"]);
        assert_eq!(d.labels, vec![0, 1, 0]);
        // Column 1 -> {b, x}, column 2 -> {s, y}, column 3 numeric.
        assert_eq!(
            d.x,
            ndarray::array![
                [0.0, 1.0, 1.0, 0.0, 1.5],
                [1.0, 0.0, 1.0, 0.0, 2.0],
                [0.0, 1.0, 0.0, 1.0, 0.0]
            ]
        );
        let err = read_keel(&p, "m", Categorical::Error)
            .unwrap_err()
            .to_string();
        assert!(err.contains("m.dat:1: column 1 is categorical"), "{err}");
    }

    #[test]
    fn keel_header_is_honoured() {
        let dir = tempfile::tempdir().unwrap();
        let text = "@relation t\n@attribute A real [0.0, 9.0]\n@attribute B {u, v}\n\
                    @attribute Class {positive, negative}\n@inputs A, B\n@outputs Class\n@data\n\
                    1.5, v, negative\n2, u, positive\n";
        let p = write(&dir, "h.dat", text);
        let d = read_keel(&p, "h", Categorical::OneHot).unwrap();
        assert_eq!(d.classes, vec!["positive", "negative"]);
        assert_eq!(d.labels, vec![1, 0]);
        assert_eq!(d.x, ndarray::array![[1.5, 0.0, 1.0], [2.0, 1.0, 0.0]]);
    }

    #[test]
    fn bad_lines_are_located() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(&dir, "q.dat", "1,2,a\n3,?,b\n");
        let err = read_keel(&p, "q", Categorical::OneHot)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("q.dat:2: column 2 mixes numbers and `?`"),
            "{err}"
        );
        let p = write(&dir, "r.dat", "1,2,a\n3,b\n");
        let err = read_keel(&p, "r", Categorical::OneHot)
            .unwrap_err()
            .to_string();
        assert!(err.contains("r.dat:2: expected 3 fields"), "{err}");
    }
}
