//! The `.npy` format's header, read by a parser of the Python literal dictionary it holds, and the matrix
//! after it read only once the header has been checked.
//!
//! A `.npy` file (NumPy's format, versions 1.0 to 3.0) is the magic `\x93NUMPY`, a version, the header's
//! length, the header — a Python literal `dict` with exactly the keys `descr`, `fortran_order` and `shape` —
//! and the values. NumPy reads the header with `ast.literal_eval`, so a valid file may spell its keys with
//! single or double quotes and its numbers in decimal, hexadecimal, octal or binary with underscores between
//! digits. [`parse_header`] accepts that grammar (strings without escapes) and refuses a repeated or unknown
//! key, a missing one, a dimension that does not fit 64 bits, and anything else, with a message naming what it
//! found. [`read_matrix`] then checks the declared size against the file's real size and the memory cap
//! before it allocates, and reads float32 or float64 values of either byte order in C or Fortran order.

use std::io::Read;
use std::path::Path;

/// The fields of a `.npy` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The dtype string, e.g. `<f8`.
    pub descr: String,
    /// Whether the values are stored column by column.
    pub fortran_order: bool,
    /// The array's shape.
    pub shape: Vec<u64>,
}

/// The longest header read (NumPy writes at most a few hundred bytes; version 1.0 allows 65,535).
pub const MAX_HEADER_BYTES: usize = 1 << 20;

/// A header value.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Literal {
    Str(String),
    Bool(bool),
    Int(u64),
    Tuple(Vec<u64>),
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn at(&self) -> String {
        format!("at byte {}", self.i + 1)
    }
    fn expect(&mut self, c: u8) -> Result<(), String> {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!(
                "expected '{}' {}, found {}",
                c as char,
                self.at(),
                self.found()
            ))
        }
    }
    /// After an item: a comma (consumed) or the closing `close` (left for the caller), else an error.
    fn comma_or(&mut self, close: u8, place: &str) -> Result<(), String> {
        self.ws();
        match self.peek() {
            Some(b',') => {
                self.i += 1;
                Ok(())
            }
            Some(c) if c == close => Ok(()),
            _ => Err(format!(
                "expected ',' or '{}'{place} {}, found {}",
                close as char,
                self.at(),
                self.found()
            )),
        }
    }
    fn found(&self) -> String {
        match self.peek() {
            Some(c) if c.is_ascii_graphic() => format!("'{}'", c as char),
            Some(c) => format!("byte 0x{c:02x}"),
            None => "the end of the header".into(),
        }
    }
    fn string(&mut self) -> Result<String, String> {
        self.ws();
        let q = match self.peek() {
            Some(q @ (b'\'' | b'"')) => q,
            _ => {
                return Err(format!(
                    "expected a quoted string {}, found {}",
                    self.at(),
                    self.found()
                ))
            }
        };
        self.i += 1;
        let start = self.i;
        while let Some(c) = self.peek() {
            if c == q {
                let text = std::str::from_utf8(&self.s[start..self.i])
                    .map_err(|_| format!("a string that is not UTF-8 at byte {}", start + 1))?
                    .to_string();
                self.i += 1;
                return Ok(text);
            }
            if c == b'\\' || c == b'\n' {
                return Err(format!(
                    "a string with an escape or a line break {} (not written by NumPy)",
                    self.at()
                ));
            }
            self.i += 1;
        }
        Err("a string that does not end".into())
    }
    /// A non-negative Python integer literal: decimal, `0x`, `0o` or `0b`, single underscores between digits.
    fn int(&mut self) -> Result<u64, String> {
        self.ws();
        let start = self.i;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            self.i += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
        if text.is_empty() {
            return Err(format!(
                "expected an integer {}, found {}",
                self.at(),
                self.found()
            ));
        }
        parse_int(text).ok_or_else(|| {
            format!(
                "\"{text}\" at byte {} is not an integer from 0 to 2^64 - 1",
                start + 1
            )
        })
    }
    fn value(&mut self) -> Result<Literal, String> {
        self.ws();
        match self.peek() {
            Some(b'\'' | b'"') => self.string().map(Literal::Str),
            Some(b'(') => {
                self.i += 1;
                let mut dims = Vec::new();
                loop {
                    self.ws();
                    if self.peek() == Some(b')') {
                        self.i += 1;
                        break;
                    }
                    dims.push(self.int()?);
                    self.comma_or(b')', " in the tuple")?;
                    if dims.len() > 32 {
                        return Err("a tuple of more than 32 dimensions".into());
                    }
                }
                Ok(Literal::Tuple(dims))
            }
            Some(b'T') if self.s[self.i..].starts_with(b"True") => {
                self.i += 4;
                Ok(Literal::Bool(true))
            }
            Some(b'F') if self.s[self.i..].starts_with(b"False") => {
                self.i += 5;
                Ok(Literal::Bool(false))
            }
            Some(c) if c.is_ascii_digit() => self.int().map(Literal::Int),
            _ => Err(format!(
                "expected a string, True, False, an integer or a tuple {}, found {}",
                self.at(),
                self.found()
            )),
        }
    }
}

/// A Python integer literal without sign: `123`, `1_000`, `0x1F`, `0o17`, `0b101` (underscores single and
/// between digits); `None` if malformed or above `u64::MAX`.
fn parse_int(text: &str) -> Option<u64> {
    let lower = text.to_ascii_lowercase();
    let (radix, digits) = match lower.get(..2) {
        Some("0x") => (16, &lower[2..]),
        Some("0o") => (8, &lower[2..]),
        Some("0b") => (2, &lower[2..]),
        _ => (10, lower.as_str()),
    };
    let digits = if radix == 10 {
        digits
    } else {
        // Python allows one underscore right after the prefix
        digits.strip_prefix('_').unwrap_or(digits)
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return None;
    }
    // Python refuses leading zeros in a non-zero decimal literal ("007")
    if radix == 10
        && digits.len() > 1
        && digits.starts_with('0')
        && !digits.trim_matches(['0', '_']).is_empty()
    {
        return None;
    }
    u64::from_str_radix(&digits.replace('_', ""), radix).ok()
}

/// Parses the header dictionary (the text after the length field, trailing spaces and newline allowed).
pub fn parse_header(text: &[u8]) -> Result<Header, String> {
    let mut p = Parser { s: text, i: 0 };
    p.expect(b'{')?;
    let mut descr = None;
    let mut fortran = None;
    let mut shape = None;
    loop {
        p.ws();
        if p.peek() == Some(b'}') {
            p.i += 1;
            break;
        }
        let key = p.string()?;
        p.expect(b':')?;
        let value = p.value()?;
        let slot_taken = match key.as_str() {
            "descr" => match value {
                Literal::Str(s) => descr.replace(s).is_some(),
                v => return Err(format!("'descr' must be a string, found {v:?}")),
            },
            "fortran_order" => match value {
                Literal::Bool(b) => fortran.replace(b).is_some(),
                v => {
                    return Err(format!(
                        "'fortran_order' must be True or False, found {v:?}"
                    ))
                }
            },
            "shape" => match value {
                Literal::Tuple(t) => shape.replace(t).is_some(),
                v => return Err(format!("'shape' must be a tuple of integers, found {v:?}")),
            },
            other => {
                return Err(format!(
                    "unknown key '{}'; allowed: 'descr', 'fortran_order', 'shape'",
                    other.chars().take(40).collect::<String>()
                ))
            }
        };
        if slot_taken {
            return Err(format!("the key '{key}' appears twice"));
        }
        p.comma_or(b'}', "")?;
    }
    p.ws();
    if p.i != text.len() {
        return Err(format!(
            "unexpected {} after the dictionary {}",
            p.found(),
            p.at()
        ));
    }
    let missing = |k: &str| format!("the key '{k}' is missing");
    Ok(Header {
        descr: descr.ok_or_else(|| missing("descr"))?,
        fortran_order: fortran.ok_or_else(|| missing("fortran_order"))?,
        shape: shape.ok_or_else(|| missing("shape"))?,
    })
}

/// Reads the magic, version and header of a `.npy` stream; returns the header and its end (the offset of
/// the first value).
pub fn read_header(r: &mut impl Read) -> Result<(Header, u64), String> {
    let mut pre = [0u8; 12];
    r.read_exact(&mut pre[..10])
        .map_err(|_| "shorter than a .npy header".to_string())?;
    if &pre[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (no \\x93NUMPY magic)".into());
    }
    let (len, start) = match pre[6] {
        1 => (usize::from(u16::from_le_bytes([pre[8], pre[9]])), 10u64),
        2 | 3 => {
            r.read_exact(&mut pre[10..12])
                .map_err(|_| "shorter than a .npy header".to_string())?;
            let len = u32::from_le_bytes([pre[8], pre[9], pre[10], pre[11]]);
            (usize::try_from(len).unwrap_or(usize::MAX), 12u64)
        }
        v => {
            return Err(format!(
                ".npy format version {v}.{}; allowed: 1, 2, 3",
                pre[7]
            ))
        }
    };
    if len > MAX_HEADER_BYTES {
        return Err(format!(
            "the header declares {len} bytes, more than the {MAX_HEADER_BYTES} allowed"
        ));
    }
    let mut text = vec![0u8; len];
    r.read_exact(&mut text)
        .map_err(|_| format!("the header declares {len} bytes; the file ends before"))?;
    let h = parse_header(&text).map_err(|e| format!("malformed header: {e}"))?;
    Ok((h, start + len as u64))
}

/// A matrix of float64 values read from a `.npy` file, after its declared size has been checked against the
/// file's length and against `check_bytes` (called with the bytes the matrix will take, e.g. a memory cap).
pub fn read_matrix(
    path: &Path,
    check_bytes: impl FnOnce(&str, u128) -> Result<(), String>,
) -> Result<(usize, usize, Vec<f64>), String> {
    let mut f = std::io::BufReader::new(
        rfx_harness::io::open_input(path, false, "a regular .npy file")
            .map_err(|e| e.to_string())?,
    );
    let (h, offset) = read_header(&mut f)?;
    let (big, item) = match h.descr.as_str() {
        "<f8" | "=f8" => (false, 8usize),
        ">f8" => (true, 8),
        "<f4" | "=f4" => (false, 4),
        ">f4" => (true, 4),
        d => {
            return Err(format!(
                "unsupported .npy dtype '{}'; allowed: float32 ('<f4') or float64 ('<f8'), 2-D",
                d.chars().take(40).collect::<String>()
            ))
        }
    };
    let [rows, cols] = h.shape[..] else {
        return Err(format!(
            ".npy array has {} dimensions; expected a 2-D matrix (rows x columns)",
            h.shape.len()
        ));
    };
    let values = u128::from(rows) * u128::from(cols);
    let file = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
    let payload = u128::from(file.saturating_sub(offset));
    if values * item as u128 > payload {
        return Err(format!(
            "the .npy header declares shape ({rows}, {cols}) of {item}-byte values, more than the {payload} bytes the file holds after its header (a truncated or forged file)"
        ));
    }
    // the values as float64, and a second copy while a Fortran-order matrix is transposed
    let copies = if h.fortran_order { 2 } else { 1 };
    check_bytes(&format!("{rows} x {cols} values"), values * 8 * copies)?;
    let (rows, cols) = (rows as usize, cols as usize);
    let n = rows * cols;
    let mut out = Vec::with_capacity(n);
    let mut buf = vec![0u8; item * 8192];
    while out.len() < n {
        let take = (n - out.len()).min(8192) * item;
        f.read_exact(&mut buf[..take]).map_err(|e| e.to_string())?;
        for c in buf[..take].chunks_exact(item) {
            out.push(match (item, big) {
                (8, false) => f64::from_le_bytes(c.try_into().expect("8 bytes")),
                (8, true) => f64::from_be_bytes(c.try_into().expect("8 bytes")),
                (_, false) => f64::from(f32::from_le_bytes(c.try_into().expect("4 bytes"))),
                (_, true) => f64::from(f32::from_be_bytes(c.try_into().expect("4 bytes"))),
            });
        }
    }
    if h.fortran_order {
        // stored column by column: transpose into row order
        let mut t = vec![0.0; n];
        for j in 0..cols {
            for i in 0..rows {
                t[i * cols + j] = out[j * rows + i];
            }
        }
        out = t;
    }
    Ok((rows, cols, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(s: &str) -> Result<Header, String> {
        parse_header(s.as_bytes())
    }

    #[test]
    fn numpy_headers_parse() {
        let want = Header {
            descr: "<f8".into(),
            fortran_order: false,
            shape: vec![3, 4],
        };
        assert_eq!(
            h("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }          \n"),
            Ok(want.clone())
        );
        // double quotes, hex, underscores, other key order: what ast.literal_eval accepts
        assert_eq!(
            h("{\"shape\": (0x3, 0b1_00), \"fortran_order\": False, \"descr\": \"<f8\"}"),
            Ok(want)
        );
        assert_eq!(
            h("{'descr':'<f4','fortran_order':True,'shape':(5,)}").map(|h| h.shape),
            Ok(vec![5])
        );
        assert_eq!(
            h("{'descr':'<f4','fortran_order':True,'shape':()}").map(|h| h.shape),
            Ok(vec![])
        );
        assert_eq!(parse_int("0b101"), Some(5));
        assert_eq!(parse_int("0o17"), Some(15));
        assert_eq!(parse_int("0x_ff"), Some(255));
        assert_eq!(parse_int("1_000_000"), Some(1_000_000));
        assert_eq!(parse_int("0"), Some(0));
        assert_eq!(parse_int("18446744073709551615"), Some(u64::MAX));
    }

    #[test]
    fn forged_headers_are_refused() {
        let bad = [
            (
                "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), 'shape': (1, 1)}",
                "twice",
            ),
            (
                "{'descr': '<f8', 'fortran_order': False}",
                "'shape' is missing",
            ),
            (
                "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), 'x': 1}",
                "unknown key",
            ),
            (
                "{'descr': '<f8', 'fortran_order': False, 'shape': (18446744073709551616, 1)}",
                "2^64",
            ),
            (
                "{'descr': '<f8', 'fortran_order': False, 'shape': (1__0, 1)}",
                "not an integer",
            ),
            (
                "{'descr': '<f8', 'fortran_order': False, 'shape': (10_, 1)}",
                "not an integer",
            ),
            (
                "{'descr': '<f8', 'fortran_order': False, 'shape': (-3, 4)}",
                "expected an integer",
            ),
            (
                "{'descr': '<f8', 'fortran_order': 0, 'shape': (3, 4)}",
                "True or False",
            ),
            (
                "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4)} x",
                "after the dictionary",
            ),
            (
                "{'descr': '<f8\\n', 'fortran_order': False, 'shape': (3, 4)}",
                "escape",
            ),
            (
                "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4)",
                "expected",
            ),
            ("{'descr: '<f8'}", "expected"),
            ("", "expected '{'"),
            ("{'shape': (007, 1)}", "not an integer"),
            ("{'shape': (0_4, 1)}", "not an integer"),
        ];
        for (text, want) in bad {
            let e = h(text).expect_err(text);
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn any_byte_string_is_parsed_or_refused_without_panic() {
        // a cheap fuzz: every prefix and every one-byte corruption of a valid header
        let good = b"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }";
        for k in 0..=good.len() {
            let _ = parse_header(&good[..k]);
        }
        for k in 0..good.len() {
            for b in [0u8, b'\'', b'"', b'(', b')', b',', b'_', b'x', b'9', 0xff] {
                let mut t = good.to_vec();
                t[k] = b;
                let _ = parse_header(&t);
            }
        }
    }
}
