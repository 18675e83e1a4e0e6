//! Numeric delimited text (CSV, TSV, whitespace separated), gzip transparent.

use std::path::Path;

use ndarray::Array2;
use rfx_core::Result;

use crate::io::{parse_finite, Delimiter, NumberedLines};

/// Whether the first non-blank line is a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Header {
    /// A header if any of its fields is non-empty text that does not parse as a number (the default).
    #[default]
    Auto,
    /// Always a header.
    Present,
    /// Never a header: the first line is data.
    Absent,
}

/// Options of [`read_csv`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsvOptions {
    /// Field separator.
    pub delimiter: Delimiter,
    /// Header handling.
    pub header: Header,
}

impl Default for CsvOptions {
    /// Comma separated, header detected automatically.
    fn default() -> Self {
        CsvOptions {
            delimiter: Delimiter::Byte(b','),
            header: Header::Auto,
        }
    }
}

impl CsvOptions {
    /// White-space separated, header detected automatically.
    pub fn whitespace() -> Self {
        CsvOptions {
            delimiter: Delimiter::Whitespace,
            header: Header::Auto,
        }
    }
}

/// A numeric table read by [`read_csv`].
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Column names, when the file has a header.
    pub header: Option<Vec<String>>,
    /// The values, one row per data line.
    pub data: Array2<f64>,
}

/// A header field is text that is not a number at all: `NaN`, `inf` and empty fields count as (bad) data,
/// so that a first data line holding a NaN is rejected rather than mistaken for a header.
fn looks_like_text(field: &str) -> bool {
    !field.is_empty() && field.parse::<f64>().is_err()
}

/// Reads a numeric delimited text file into a matrix.
///
/// Blank lines are skipped. Every data line must have as many fields as the first one (or the header),
/// and every field must be a finite number; otherwise the error names the file and the line
/// (`path:line: ...`). A file without data lines gives a `0 × c` matrix (`c` from the header, else 0).
pub fn read_csv(path: &Path, options: &CsvOptions) -> Result<Table> {
    let mut lines = NumberedLines::open(path)?;
    let mut header = None;
    let mut values: Vec<f64> = Vec::new();
    let mut ncols: Option<usize> = None;
    let mut nrows = 0usize;
    let mut first = true;
    while let Some((line_no, line)) = lines.next_line()? {
        let fields = options.delimiter.split(line);
        if first {
            first = false;
            let is_header = match options.header {
                Header::Present => true,
                Header::Absent => false,
                Header::Auto => fields.iter().any(|f| looks_like_text(f)),
            };
            if is_header {
                ncols = Some(fields.len());
                header = Some(fields.iter().map(|s| s.to_string()).collect());
                continue;
            }
        }
        let expected = *ncols.get_or_insert(fields.len());
        if fields.len() != expected {
            let msg = format!("expected {expected} fields, found {}", fields.len());
            return Err(lines.error(line_no, msg));
        }
        for (j, f) in fields.iter().enumerate() {
            match parse_finite(f) {
                Some(v) => values.push(v),
                None => {
                    let msg = format!("field {} is `{f}`, not a finite number", j + 1);
                    return Err(lines.error(line_no, msg));
                }
            }
        }
        nrows += 1;
    }
    let data = Array2::from_shape_vec((nrows, ncols.unwrap_or(0)), values)
        .expect("row lengths were checked");
    Ok(Table { header, data })
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
    fn header_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let with = write(&dir, "h.csv", "a,b\n1,2\n\n3,4e1\n");
        let t = read_csv(&with, &CsvOptions::default()).unwrap();
        assert_eq!(t.header, Some(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(t.data, ndarray::array![[1.0, 2.0], [3.0, 40.0]]);
        let without = write(&dir, "n.csv", "1,2\n3,4\n");
        let t = read_csv(&without, &CsvOptions::default()).unwrap();
        assert_eq!(t.header, None);
        assert_eq!(t.data.dim(), (2, 2));
        // A numeric first line forced to be a header.
        let opts = CsvOptions {
            header: Header::Present,
            ..CsvOptions::default()
        };
        assert_eq!(read_csv(&without, &opts).unwrap().data.dim(), (1, 2));
    }

    #[test]
    fn whitespace_and_other_delimiters() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(&dir, "w.txt", " 1  2\t3 \n4 5 6\n");
        let t = read_csv(&p, &CsvOptions::whitespace()).unwrap();
        assert_eq!(t.data, ndarray::array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        let p = write(&dir, "s.csv", "x;y\n1;2\n");
        let opts = CsvOptions {
            delimiter: Delimiter::Byte(b';'),
            header: Header::Auto,
        };
        assert_eq!(
            read_csv(&p, &opts).unwrap().data,
            ndarray::array![[1.0, 2.0]]
        );
    }

    #[test]
    fn bad_rows_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(&dir, "nan.csv", "a,b\n1,2\n\n3,NaN\n");
        let err = read_csv(&p, &CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("nan.csv:4:"), "{err}");
        assert!(err.contains("NaN"), "{err}");
        let p = write(&dir, "first.csv", "1,NaN\n3,4\n");
        let err = read_csv(&p, &CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("first.csv:1:"), "{err}");
        let p = write(&dir, "inf.csv", "1,2\n3,inf\n");
        let err = read_csv(&p, &CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("inf.csv:2:"), "{err}");
        let p = write(&dir, "short.csv", "1,2\n3,4\n5\n");
        let err = read_csv(&p, &CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("short.csv:3: expected 2 fields, found 1"),
            "{err}"
        );
    }
}
