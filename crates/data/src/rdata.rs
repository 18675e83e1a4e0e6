//! A reader for the data frames inside R's `.rda` files (the data sets that R packages ship, e.g. the
//! `mlbench` package of Debian's `r-cran-mlbench`).
//!
//! An `.rda` file is the output of R's `save()`: an optional gzip/bzip2/xz layer (the fetcher removes it),
//! the magic `RDX2\n` or `RDX3\n`, and R's serialization stream in XDR (big-endian) form `X\n`. The stream
//! is a pairlist whose tags are the saved objects' names. This module reads the subset of the format that
//! data frames of numbers and factors need (R Internals, §1.8 "Serialization formats"):
//!
//! * every item starts with a 32-bit `flags` word: bits 0–7 the type (`SEXPTYPE`), bit 8 "is object",
//!   bit 9 "has attributes", bit 10 "has tag", bits 12–27 the `gp` field;
//! * vectors (logical 10, integer 13, double 14, character 16, list 19) are a length and the elements,
//!   then the attribute pairlist if bit 9 is set; a character element is a `CHARSXP` (9: length, −1 for
//!   `NA`, then the bytes);
//! * pairlists (2) are attributes (if bit 9), tag (if bit 10), head, tail;
//! * symbols (1) are a `CHARSXP`, and each one read is appended to the reference table, which later
//!   `REFSXP` items (255, index in `flags >> 8`, or in the next word when that is 0) point into;
//! * `NILVALUE_SXP` (254) ends a pairlist.
//!
//! Anything else (environments, closures, ALTREP compact vectors, byte code) is refused with its type
//! number, so a file this reader cannot represent is an error, never a silently wrong table.

use rfx_core::{Result, RfxError};

/// A value of the serialization stream, with the attributes it carried.
#[derive(Debug, Clone, PartialEq)]
pub struct RObject {
    /// The value.
    pub value: RValue,
    /// Attributes in stream order (`names`, `class`, `levels`, `row.names`, …).
    pub attributes: Vec<(String, RObject)>,
}

/// The value kinds a data frame of numbers and factors is made of.
#[derive(Debug, Clone, PartialEq)]
pub enum RValue {
    /// `NULL`.
    Null,
    /// A symbol (as a tag or a value).
    Symbol(String),
    /// A logical vector (`NA` is `i32::MIN`, as in R).
    Logical(Vec<i32>),
    /// An integer vector (`NA` is `i32::MIN`); factors are integer vectors with `levels` and class `factor`.
    Integer(Vec<i32>),
    /// A double vector (`NA` is a NaN).
    Double(Vec<f64>),
    /// A character vector (`None` is `NA`).
    Character(Vec<Option<String>>),
    /// A generic vector (a list; a data frame is a list of equal-length columns).
    List(Vec<RObject>),
    /// A pairlist: `(tag, value)` pairs.
    Pairlist(Vec<(Option<String>, RObject)>),
}

impl RObject {
    fn bare(value: RValue) -> RObject {
        RObject {
            value,
            attributes: Vec::new(),
        }
    }

    /// The attribute called `name`.
    pub fn attribute(&self, name: &str) -> Option<&RObject> {
        self.attributes
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }

    /// The strings of a character vector (`NA` as `"NA"`), else `None`.
    pub fn strings(&self) -> Option<Vec<String>> {
        match &self.value {
            RValue::Character(v) => Some(
                v.iter()
                    .map(|s| s.clone().unwrap_or_else(|| "NA".into()))
                    .collect(),
            ),
            _ => None,
        }
    }

    /// Whether the `class` attribute contains `class`.
    pub fn inherits(&self, class: &str) -> bool {
        self.attribute("class")
            .and_then(RObject::strings)
            .is_some_and(|c| c.iter().any(|s| s == class))
    }
}

const NILVALUE: u32 = 254;
const REFSXP: u32 = 255;
const SYMSXP: u32 = 1;
const LISTSXP: u32 = 2;
const CHARSXP: u32 = 9;
const LGLSXP: u32 = 10;
const INTSXP: u32 = 13;
const REALSXP: u32 = 14;
const STRSXP: u32 = 16;
const VECSXP: u32 = 19;

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    refs: Vec<RObject>,
    what: &'a str,
    /// Items being read (lists and attributes nest): bounded by [`MAX_DEPTH`] so that a forged stream of
    /// nested one-element lists cannot overflow the stack.
    depth: usize,
}

/// Deepest nesting of items read (a data frame needs 4: frame, column, attributes, levels).
const MAX_DEPTH: usize = 256;

impl Reader<'_> {
    fn error(&self, msg: impl std::fmt::Display) -> RfxError {
        RfxError::Data(format!(
            "{}: R serialization stream, byte {}: {msg}",
            self.what, self.pos
        ))
    }

    fn take(&mut self, n: usize) -> Result<&[u8]> {
        if self.bytes.len() - self.pos < n {
            return Err(self.error(format!("truncated (needs {n} more bytes)")));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn int(&mut self) -> Result<i32> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn length(&mut self) -> Result<usize> {
        let n = self.int()?;
        if n == -1 {
            // long vector: two more words, upper then lower 32 bits
            let hi = self.int()? as u32 as u64;
            let lo = self.int()? as u32 as u64;
            return usize::try_from((hi << 32) | lo).map_err(|_| self.error("vector too long"));
        }
        usize::try_from(n).map_err(|_| self.error(format!("negative length {n}")))
    }

    /// Bounds a claimed element count by the bytes left, so a corrupt length cannot allocate wildly.
    fn check_room(&self, count: usize, bytes_each: usize) -> Result<()> {
        if count.saturating_mul(bytes_each) > self.bytes.len() - self.pos {
            return Err(self.error(format!(
                "a vector of {count} elements does not fit in the remaining {} bytes",
                self.bytes.len() - self.pos
            )));
        }
        Ok(())
    }

    fn charsxp(&mut self) -> Result<Option<String>> {
        let n = self.int()?;
        if n == -1 {
            return Ok(None);
        }
        let n = usize::try_from(n).map_err(|_| self.error(format!("string length {n}")))?;
        let b = self.take(n)?;
        // R marks Latin-1 and UTF-8 strings in the gp bits; data set names and levels are ASCII, and
        // anything else is kept lossily rather than refused.
        Ok(Some(String::from_utf8_lossy(b).into_owned()))
    }

    fn attributes(&mut self, has: bool) -> Result<Vec<(String, RObject)>> {
        if !has {
            return Ok(Vec::new());
        }
        match self.item()?.value {
            RValue::Pairlist(pairs) => Ok(pairs
                .into_iter()
                .map(|(k, v)| (k.unwrap_or_default(), v))
                .collect()),
            RValue::Null => Ok(Vec::new()),
            _ => Err(self.error("attributes are not a pairlist")),
        }
    }

    /// The elements of a vector of type `ty` (its attributes follow in the stream).
    fn vector(&mut self, ty: u32) -> Result<RValue> {
        let n = self.length()?;
        Ok(match ty {
            LGLSXP | INTSXP => {
                self.check_room(n, 4)?;
                let v = (0..n).map(|_| self.int()).collect::<Result<Vec<_>>>()?;
                if ty == LGLSXP {
                    RValue::Logical(v)
                } else {
                    RValue::Integer(v)
                }
            }
            REALSXP => {
                self.check_room(n, 8)?;
                let b = self.take(8 * n)?;
                RValue::Double(
                    b.chunks_exact(8)
                        .map(|c| f64::from_be_bytes(c.try_into().expect("8-byte chunk")))
                        .collect(),
                )
            }
            STRSXP => {
                self.check_room(n, 8)?;
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    let f = self.int()? as u32;
                    if f & 0xff != CHARSXP {
                        return Err(
                            self.error(format!("a character vector element of type {}", f & 0xff))
                        );
                    }
                    v.push(self.charsxp()?);
                }
                RValue::Character(v)
            }
            _ => {
                self.check_room(n, 4)?;
                RValue::List((0..n).map(|_| self.item()).collect::<Result<Vec<_>>>()?)
            }
        })
    }

    fn item(&mut self) -> Result<RObject> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(format!(
                "items nested more than {MAX_DEPTH} deep (not a data set)"
            )));
        }
        self.depth += 1;
        let item = self.item_inner();
        self.depth -= 1;
        item
    }

    fn item_inner(&mut self) -> Result<RObject> {
        let flags = self.int()? as u32;
        let ty = flags & 0xff;
        let has_attr = flags & (1 << 9) != 0;
        let has_tag = flags & (1 << 10) != 0;
        match ty {
            NILVALUE => Ok(RObject::bare(RValue::Null)),
            REFSXP => {
                let mut idx = (flags >> 8) as usize;
                if idx == 0 {
                    idx = self.length()?;
                }
                self.refs
                    .get(idx.wrapping_sub(1))
                    .cloned()
                    .ok_or_else(|| self.error(format!("reference {idx} to an unknown item")))
            }
            SYMSXP => {
                let name = match self.item()?.value {
                    RValue::Character(mut v) if v.len() == 1 => v.pop().flatten(),
                    _ => None,
                }
                .ok_or_else(|| self.error("a symbol's name is not a string"))?;
                let sym = RObject::bare(RValue::Symbol(name));
                self.refs.push(sym.clone());
                Ok(sym)
            }
            // CHARSXP read on its own (a symbol's name): a one-element character vector
            CHARSXP => {
                let s = self.charsxp()?;
                Ok(RObject::bare(RValue::Character(vec![s])))
            }
            LISTSXP => {
                // A pairlist is a chain of cells; read it iteratively so that long ones need no deep recursion.
                let mut pairs = Vec::new();
                let mut first_attrs = None;
                let (mut attr, mut tag) = (has_attr, has_tag);
                loop {
                    let attrs = self.attributes(attr)?;
                    if first_attrs.is_none() {
                        first_attrs = Some(attrs);
                    }
                    let name = if tag {
                        match self.item()?.value {
                            RValue::Symbol(s) => Some(s),
                            _ => return Err(self.error("a pairlist tag is not a symbol")),
                        }
                    } else {
                        None
                    };
                    let head = self.item()?;
                    pairs.push((name, head));
                    let next = self.int()? as u32;
                    match next & 0xff {
                        LISTSXP => {
                            attr = next & (1 << 9) != 0;
                            tag = next & (1 << 10) != 0;
                        }
                        NILVALUE => break,
                        other => {
                            return Err(self.error(format!(
                                "a pairlist tail of type {other} (only proper lists are read)"
                            )))
                        }
                    }
                }
                Ok(RObject {
                    value: RValue::Pairlist(pairs),
                    attributes: first_attrs.unwrap_or_default(),
                })
            }
            LGLSXP | INTSXP | REALSXP | STRSXP | VECSXP => {
                let value = self.vector(ty)?;
                let attributes = self.attributes(has_attr)?;
                Ok(RObject { value, attributes })
            }
            other => Err(self.error(format!(
                "R type {other} is not supported (only NULL, symbols, pairlists, logical, integer, double, \
                 character and list vectors: the parts of a data frame)"
            ))),
        }
    }
}

/// Reads the objects saved in an uncompressed `.rda` stream (`RDX2`/`RDX3` + XDR serialization), as
/// `(name, object)` pairs. `what` names the source in errors.
pub fn read_rda(bytes: &[u8], what: &str) -> Result<Vec<(String, RObject)>> {
    let body = bytes
        .strip_prefix(b"RDX2\n")
        .or_else(|| bytes.strip_prefix(b"RDX3\n"))
        .ok_or_else(|| {
            RfxError::Data(format!(
                "{what}: not an uncompressed .rda file (expected the magic RDX2 or RDX3)"
            ))
        })?;
    let body = body.strip_prefix(b"X\n").ok_or_else(|| {
        RfxError::Data(format!(
            "{what}: only the XDR (binary, big-endian) serialization format is read"
        ))
    })?;
    let mut r = Reader {
        bytes: body,
        pos: 0,
        refs: Vec::new(),
        what,
        depth: 0,
    };
    let version = r.int()?;
    let _writer = r.int()?;
    let _min_reader = r.int()?;
    match version {
        2 => {}
        3 => {
            let n = r.length()?;
            r.take(n)?; // native encoding name
        }
        v => return Err(r.error(format!("serialization version {v} (2 and 3 are read)"))),
    }
    match r.item()?.value {
        RValue::Pairlist(pairs) => pairs
            .into_iter()
            .map(|(k, v)| {
                k.map(|k| (k, v))
                    .ok_or_else(|| RfxError::Data(format!("{what}: a saved object has no name")))
            })
            .collect(),
        _ => Err(RfxError::Data(format!(
            "{what}: the saved objects are not a pairlist"
        ))),
    }
}

/// A data frame as columns of numbers: numeric and logical columns as they are, factors by their codes
/// (1-based, as in R) with their levels.
#[derive(Debug, Clone, PartialEq)]
pub struct DataFrame {
    /// Column names.
    pub names: Vec<String>,
    /// Columns, each of the frame's row count.
    pub columns: Vec<Column>,
}

/// One column of a [`DataFrame`].
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    /// Numbers (integer and logical columns converted; `NA` as NaN).
    Numeric(Vec<f64>),
    /// A factor: 1-based codes (`NA` as 0) and level names.
    Factor {
        /// Codes into `levels`, 1-based; 0 for `NA`.
        codes: Vec<u32>,
        /// Level names.
        levels: Vec<String>,
    },
}

impl Column {
    fn len(&self) -> usize {
        match self {
            Column::Numeric(v) => v.len(),
            Column::Factor { codes, .. } => codes.len(),
        }
    }
}

/// Interprets `obj` as a data frame (class `data.frame`, a list of equal-length numeric, logical or factor
/// columns with `names`).
pub fn data_frame(obj: &RObject, what: &str) -> Result<DataFrame> {
    let err = |m: String| RfxError::Data(format!("{what}: {m}"));
    let RValue::List(cols) = &obj.value else {
        return Err(err("not a list, so not a data frame".into()));
    };
    if !obj.inherits("data.frame") {
        return Err(err("a list without class data.frame".into()));
    }
    let names = obj
        .attribute("names")
        .and_then(RObject::strings)
        .ok_or_else(|| err("a data frame without column names".into()))?;
    if names.len() != cols.len() {
        return Err(err(format!(
            "{} column names for {} columns",
            names.len(),
            cols.len()
        )));
    }
    let na_int = |v: i32| if v == i32::MIN { f64::NAN } else { v as f64 };
    let mut columns = Vec::with_capacity(cols.len());
    for (name, c) in names.iter().zip(cols) {
        let col = match &c.value {
            RValue::Double(v) => Column::Numeric(v.clone()),
            RValue::Integer(v) if c.inherits("factor") => {
                let levels = c
                    .attribute("levels")
                    .and_then(RObject::strings)
                    .ok_or_else(|| err(format!("factor column {name} has no levels")))?;
                let codes = v
                    .iter()
                    .map(|&k| match k {
                        i32::MIN => Ok(0),
                        k if k >= 1 && (k as usize) <= levels.len() => Ok(k as u32),
                        k => Err(err(format!(
                            "factor column {name}: code {k} outside 1..={}",
                            levels.len()
                        ))),
                    })
                    .collect::<Result<Vec<_>>>()?;
                Column::Factor { codes, levels }
            }
            RValue::Integer(v) | RValue::Logical(v) => {
                Column::Numeric(v.iter().map(|&k| na_int(k)).collect())
            }
            _ => {
                return Err(err(format!(
                    "column {name} is neither numeric, logical nor a factor"
                )))
            }
        };
        columns.push(col);
    }
    if let Some(first) = columns.first() {
        if let Some((k, c)) = columns
            .iter()
            .enumerate()
            .find(|(_, c)| c.len() != first.len())
        {
            return Err(err(format!(
                "column {} has {} rows, column {} has {}",
                names[k],
                c.len(),
                names[0],
                first.len()
            )));
        }
    }
    Ok(DataFrame { names, columns })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny XDR writer for the items the reader understands (the same layout R writes).
    #[derive(Default)]
    struct W(Vec<u8>);
    impl W {
        fn int(&mut self, v: i32) -> &mut Self {
            self.0.extend_from_slice(&v.to_be_bytes());
            self
        }
        fn flags(&mut self, ty: u32, obj: bool, attr: bool, tag: bool) -> &mut Self {
            let f = ty | (u32::from(obj) << 8) | (u32::from(attr) << 9) | (u32::from(tag) << 10);
            self.int(f as i32)
        }
        fn chars(&mut self, s: &str) -> &mut Self {
            self.int(CHARSXP as i32 | (1 << 12)).int(s.len() as i32);
            self.0.extend_from_slice(s.as_bytes());
            self
        }
        fn sym(&mut self, s: &str) -> &mut Self {
            self.int(SYMSXP as i32).chars(s)
        }
        fn strs(&mut self, v: &[&str], attr: bool) -> &mut Self {
            self.flags(STRSXP, false, attr, false).int(v.len() as i32);
            for s in v {
                self.chars(s);
            }
            self
        }
        fn nil(&mut self) -> &mut Self {
            self.int(NILVALUE as i32)
        }
    }

    /// `x <- data.frame(a = c(1.5, NA), k = factor(c("u", "v")), i = c(3L, NA)); save(x, file = ...)`,
    /// written as R writes it; the second and later uses of the symbols `class` and `names` are references.
    fn sample() -> Vec<u8> {
        let mut w = W::default();
        w.0.extend_from_slice(b"RDX2\nX\n");
        w.int(2).int(0x040200).int(0x020300);
        w.flags(LISTSXP, false, false, true).sym("x"); // refs: 1 = x
        w.flags(VECSXP, true, true, false).int(3);
        // column a: double
        w.flags(REALSXP, false, false, false).int(2);
        w.0.extend_from_slice(&1.5f64.to_be_bytes());
        w.0.extend_from_slice(&f64::NAN.to_be_bytes());
        // column k: factor with levels and class
        w.flags(INTSXP, true, true, false).int(2).int(1).int(2);
        w.flags(LISTSXP, false, false, true).sym("levels"); // 2 = levels
        w.strs(&["u", "v"], false);
        w.flags(LISTSXP, false, false, true).sym("class"); // 3 = class
        w.strs(&["factor"], false).nil();
        // column i: integer with NA
        w.flags(INTSXP, false, false, false)
            .int(2)
            .int(3)
            .int(i32::MIN);
        // the frame's attributes: names, class (a reference), row.names
        w.flags(LISTSXP, false, false, true).sym("names"); // 4 = names
        w.strs(&["a", "k", "i"], false);
        w.flags(LISTSXP, false, false, true)
            .int(((3 << 8) | REFSXP) as i32);
        w.strs(&["data.frame"], false);
        w.flags(LISTSXP, false, false, true).sym("row.names");
        w.flags(INTSXP, false, false, false)
            .int(2)
            .int(i32::MIN)
            .int(-2);
        w.nil();
        w.nil(); // end of the saved-objects pairlist
        w.0
    }

    #[test]
    fn reads_a_data_frame_of_doubles_factors_and_integers() {
        let objs = read_rda(&sample(), "sample.rda").unwrap();
        assert_eq!(objs.len(), 1);
        assert_eq!(objs[0].0, "x");
        let df = data_frame(&objs[0].1, "x").unwrap();
        assert_eq!(df.names, ["a", "k", "i"]);
        let Column::Numeric(a) = &df.columns[0] else {
            panic!("a numeric")
        };
        assert_eq!(a[0], 1.5);
        assert!(a[1].is_nan());
        assert_eq!(
            df.columns[1],
            Column::Factor {
                codes: vec![1, 2],
                levels: vec!["u".into(), "v".into()]
            }
        );
        let Column::Numeric(i) = &df.columns[2] else {
            panic!("i numeric")
        };
        assert_eq!(i[0], 3.0);
        assert!(i[1].is_nan());
    }

    #[test]
    fn truncated_or_foreign_streams_are_errors_naming_the_source() {
        let full = sample();
        for cut in [10, 40, full.len() - 1] {
            let e = read_rda(&full[..cut], "cut.rda").unwrap_err().to_string();
            assert!(e.contains("cut.rda"), "{e}");
        }
        let e = read_rda(b"RDA2\nA\n", "ascii.rda").unwrap_err().to_string();
        assert!(e.contains("RDX2"), "{e}");
        let e = read_rda(b"RDX2\nA\n\x00", "ascii.rda")
            .unwrap_err()
            .to_string();
        assert!(e.contains("XDR"), "{e}");
        // an environment (type 4) is refused with its type number
        let mut w = W::default();
        w.0.extend_from_slice(b"RDX2\nX\n");
        w.int(2).int(0).int(0);
        w.flags(LISTSXP, false, false, true).sym("e").int(4);
        let e = read_rda(&w.0, "env.rda").unwrap_err().to_string();
        assert!(e.contains("R type 4"), "{e}");
        // a huge claimed length does not allocate
        let mut w = W::default();
        w.0.extend_from_slice(b"RDX2\nX\n");
        w.int(2).int(0).int(0);
        w.flags(LISTSXP, false, false, true)
            .sym("v")
            .flags(REALSXP, false, false, false)
            .int(i32::MAX);
        let e = read_rda(&w.0, "big.rda").unwrap_err().to_string();
        assert!(e.contains("does not fit"), "{e}");
    }

    #[test]
    fn a_list_without_data_frame_class_is_not_a_frame() {
        let obj = RObject::bare(RValue::List(vec![RObject::bare(RValue::Double(vec![1.0]))]));
        assert!(data_frame(&obj, "l")
            .unwrap_err()
            .to_string()
            .contains("data.frame"));
    }

    #[test]
    fn deeply_nested_lists_are_an_error_not_a_stack_overflow() {
        let mut w = W::default();
        w.0.extend_from_slice(b"RDX2\nX\n");
        w.int(2).int(0x040200).int(0x020300);
        w.flags(LISTSXP, false, false, true).sym("x");
        for _ in 0..200_000 {
            w.flags(VECSXP, false, false, false).int(1);
        }
        w.nil();
        let e = read_rda(&w.0, "nested.rda").unwrap_err().to_string();
        assert!(e.contains("nested more than"), "{e}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 512,
            failure_persistence: None,
            ..Default::default()
        })]

        /// Any byte flipped, inserted or dropped in a valid stream, and any truncation: an error or a value,
        /// never a panic (and no allocation beyond the stream's size: `check_room`).
        #[test]
        fn mutated_streams_never_panic(
            edits in proptest::collection::vec((0usize..400, proptest::num::u8::ANY, 0u8..3), 1..6),
            cut in 0usize..400,
        ) {
            let mut b = sample();
            for (at, byte, op) in edits {
                let at = at % (b.len() + 1);
                match op {
                    0 if at < b.len() => b[at] = byte,
                    1 => b.insert(at, byte),
                    _ if at < b.len() => { b.remove(at); }
                    _ => {}
                }
            }
            if cut < b.len() {
                b.truncate(b.len() - cut % b.len().max(1));
            }
            if let Ok(objs) = read_rda(&b, "fuzz.rda") {
                for (_, o) in &objs {
                    let _ = data_frame(o, "fuzz.rda");
                }
            }
        }

        /// Random bytes behind a valid magic.
        #[test]
        fn random_streams_never_panic(body in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            let mut b = b"RDX2\nX\n".to_vec();
            b.extend(body);
            let _ = read_rda(&b, "fuzz.rda");
        }
    }
}
