//! Low-level reading: transparent gzip, line iteration with line numbers, field splitting and number
//! parsing shared by the text loaders.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use flate2::read::MultiGzDecoder;
use rfx_core::{Result, RfxError};

/// The two magic bytes that open every gzip member.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Opens `path` for reading its payload: gzip-compressed files (recognised by their magic bytes, not by
/// their name) are decompressed on the fly, anything else is read as is.
pub fn open_payload(path: &Path) -> Result<Box<dyn BufRead>> {
    let file = File::open(path).map_err(|e| RfxError::io(path, e))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let head = reader.fill_buf().map_err(|e| RfxError::io(path, e))?;
    if head.starts_with(&GZIP_MAGIC) {
        Ok(Box::new(BufReader::with_capacity(
            1 << 16,
            MultiGzDecoder::new(reader),
        )))
    } else {
        Ok(Box::new(reader))
    }
}

/// Reads the whole payload of `path` (see [`open_payload`]) into memory.
pub fn read_payload(path: &Path) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    open_payload(path)?
        .read_to_end(&mut out)
        .map_err(|e| RfxError::io(path, e))?;
    Ok(out)
}

/// How the fields of a text line are separated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delimiter {
    /// One byte such as `b','`, `b';'` or `b'\t'`; fields are trimmed of surrounding white space and of one
    /// pair of enclosing double quotes.
    Byte(u8),
    /// Any run of spaces and tabs (leading and trailing white space is ignored).
    Whitespace,
}

impl Delimiter {
    /// Splits one line (without its line terminator) into trimmed fields.
    pub fn split<'a>(&self, line: &'a str) -> Vec<&'a str> {
        match *self {
            Delimiter::Whitespace => line.split_whitespace().collect(),
            Delimiter::Byte(b) => line
                .split(char::from(b))
                .map(|f| {
                    let f = f.trim();
                    f.strip_prefix('"')
                        .and_then(|g| g.strip_suffix('"'))
                        .unwrap_or(f)
                })
                .collect(),
        }
    }
}

/// Parses a field as a finite `f64`; `None` for anything else (text, empty, `NaN`, `inf`).
pub fn parse_finite(field: &str) -> Option<f64> {
    field.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Iterates over the non-blank lines of a text payload together with their 1-based line numbers.
pub struct NumberedLines {
    reader: Box<dyn BufRead>,
    path: String,
    line_no: usize,
    buf: String,
}

impl NumberedLines {
    /// Opens `path` (gzip transparent).
    pub fn open(path: &Path) -> Result<Self> {
        Ok(NumberedLines {
            reader: open_payload(path)?,
            path: path.display().to_string(),
            line_no: 0,
            buf: String::new(),
        })
    }

    /// The file name used in error messages.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The next line that is not blank, without its terminator, with its line number; `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<(usize, &str)>> {
        loop {
            self.buf.clear();
            let n = self
                .reader
                .read_line(&mut self.buf)
                .map_err(|e| RfxError::Data(format!("{}:{}: {e}", self.path, self.line_no + 1)))?;
            if n == 0 {
                return Ok(None);
            }
            self.line_no += 1;
            if !self.buf.trim().is_empty() {
                let line = self.buf.trim_end_matches(['\n', '\r']);
                return Ok(Some((self.line_no, line)));
            }
        }
    }

    /// An error located at `line` of this file: `path:line: message`.
    pub fn error(&self, line: usize, msg: impl std::fmt::Display) -> RfxError {
        RfxError::Data(format!("{}:{line}: {msg}", self.path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn gzip_is_detected_by_content() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("a.gz"); // misleading name, plain content
        std::fs::write(&plain, b"1,2\n").unwrap();
        assert_eq!(read_payload(&plain).unwrap(), b"1,2\n");
        let gz = dir.path().join("b.txt");
        let mut enc = flate2::write::GzEncoder::new(
            File::create(&gz).unwrap(),
            flate2::Compression::default(),
        );
        enc.write_all(b"3,4\n").unwrap();
        enc.finish().unwrap();
        assert_eq!(read_payload(&gz).unwrap(), b"3,4\n");
    }

    #[test]
    fn splitting_and_parsing() {
        assert_eq!(
            Delimiter::Byte(b',').split(" 1, \"2\" ,x"),
            vec!["1", "2", "x"]
        );
        assert_eq!(
            Delimiter::Whitespace.split("  1.5 \t 2  3 "),
            vec!["1.5", "2", "3"]
        );
        assert_eq!(parse_finite("6.1556e+05"), Some(615560.0));
        assert_eq!(parse_finite("NaN"), None);
        assert_eq!(parse_finite("inf"), None);
        assert_eq!(parse_finite("?"), None);
    }
}
