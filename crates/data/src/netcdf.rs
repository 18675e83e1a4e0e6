//! A reader for NetCDF-3 classic files (CDF-1, and CDF-2 with 64-bit offsets).
//!
//! The format (Unidata's "NetCDF Classic Format Specification") is a big-endian header followed by the
//! data. The header is the magic `CDF`, a version byte (1, or 2 for 64-bit offsets), the number of records,
//! then three lists: the dimensions (name and length; length 0 marks the one unlimited, or record,
//! dimension), the global attributes, and the variables (name, dimension ids, attributes, type, size
//! `vsize` and the byte offset `begin` of its data). Names are a length and bytes padded to 4; attribute
//! values are padded to 4.
//!
//! A fixed variable's values sit contiguously at `begin`, in C order. A record variable (first dimension
//! the record dimension) stores one slab per record: record $r$ of it starts at $\mathrm{begin} + r \cdot
//! \mathrm{recsize}$, where $\mathrm{recsize}$ is the sum of the record variables' padded slab sizes (with
//! exactly one record variable, its unpadded slab size).
//!
//! [`NcFile::parse`] reads the header and checks every variable's data lies inside the file; [`NcFile::values`]
//! returns a variable's values as `f64` (types byte, short, int, float, double), with the values equal to
//! its `_FillValue` or `missing_value` attribute (compared in the variable's own type) as `NaN`. Anything
//! malformed — a truncated header, a count larger than the file, an unknown type or tag, data beyond the
//! end of the file — is an error naming the file and what is wrong, never a panic.

use std::io::Read;
use std::path::Path;

use rfx_core::{Result, RfxError};

/// The external type of a variable or attribute (`nc_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NcType {
    /// 1: signed 8-bit integer.
    Byte,
    /// 2: 8-bit character (text).
    Char,
    /// 3: big-endian 16-bit integer.
    Short,
    /// 4: big-endian 32-bit integer.
    Int,
    /// 5: big-endian IEEE 754 single precision.
    Float,
    /// 6: big-endian IEEE 754 double precision.
    Double,
}

impl NcType {
    fn from_code(code: u32) -> Option<NcType> {
        Some(match code {
            1 => NcType::Byte,
            2 => NcType::Char,
            3 => NcType::Short,
            4 => NcType::Int,
            5 => NcType::Float,
            6 => NcType::Double,
            _ => return None,
        })
    }

    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            NcType::Byte | NcType::Char => 1,
            NcType::Short => 2,
            NcType::Int | NcType::Float => 4,
            NcType::Double => 8,
        }
    }

    /// Value `i` of big-endian `bytes` (which hold at least `i + 1` values) as `f64`.
    fn decode(self, bytes: &[u8], i: usize) -> f64 {
        let s = self.size();
        let b = &bytes[i * s..(i + 1) * s];
        match self {
            NcType::Byte => f64::from(b[0] as i8),
            NcType::Char => f64::from(b[0]),
            NcType::Short => f64::from(i16::from_be_bytes([b[0], b[1]])),
            NcType::Int => f64::from(i32::from_be_bytes([b[0], b[1], b[2], b[3]])),
            NcType::Float => f64::from(f32::from_be_bytes([b[0], b[1], b[2], b[3]])),
            NcType::Double => f64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        }
    }
}

/// A dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dimension {
    /// Its name.
    pub name: String,
    /// Its length (for the record dimension: the file's number of records).
    pub len: usize,
    /// Whether it is the unlimited (record) dimension.
    pub unlimited: bool,
}

/// An attribute's values.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// A `char` attribute, as text (trailing NUL bytes removed).
    Text(String),
    /// A numeric attribute, each value converted to `f64` (exactly: every NetCDF-3 number type fits).
    Numbers(NcType, Vec<f64>),
}

/// A named attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    /// Its name.
    pub name: String,
    /// Its values.
    pub value: AttrValue,
}

/// A variable of the header.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// Its dimensions, as indices into [`NcFile::dimensions`] (C order: the last varies fastest).
    pub dims: Vec<usize>,
    /// Its attributes.
    pub attributes: Vec<Attribute>,
    /// Its type.
    pub nc_type: NcType,
    /// Byte offset of its data (of its first record, for a record variable).
    pub begin: u64,
    /// Whether its first dimension is the record dimension.
    pub is_record: bool,
}

impl Variable {
    /// The attribute `name`, if present.
    pub fn attribute(&self, name: &str) -> Option<&AttrValue> {
        self.attributes
            .iter()
            .find(|a| a.name == name)
            .map(|a| &a.value)
    }

    /// The text of attribute `name`, if present and of type `char`.
    pub fn text_attribute(&self, name: &str) -> Option<&str> {
        match self.attribute(name) {
            Some(AttrValue::Text(t)) => Some(t),
            _ => None,
        }
    }

    /// The fill value: the first value of `_FillValue`, else of `missing_value`, when numeric.
    pub fn fill_value(&self) -> Option<f64> {
        ["_FillValue", "missing_value"]
            .iter()
            .find_map(|n| match self.attribute(n) {
                Some(AttrValue::Numbers(_, v)) => v.first().copied(),
                _ => None,
            })
    }
}

/// A NetCDF-3 classic file held in memory, with its parsed header.
#[derive(Debug, Clone)]
pub struct NcFile {
    what: String,
    bytes: Vec<u8>,
    /// Format version: 1 (classic) or 2 (64-bit offsets).
    pub version: u8,
    /// Number of records.
    pub numrecs: usize,
    /// The dimensions, in header order.
    pub dimensions: Vec<Dimension>,
    /// The global attributes.
    pub attributes: Vec<Attribute>,
    /// The variables, in header order.
    pub variables: Vec<Variable>,
    /// Bytes from one record to the next.
    pub recsize: u64,
}

const TAG_DIMENSION: u32 = 0x0A;
const TAG_VARIABLE: u32 = 0x0B;
const TAG_ATTRIBUTE: u32 = 0x0C;

/// A cursor over the header that turns every shortfall into an error naming the file and the item.
struct Cursor<'a> {
    what: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn error(&self, msg: impl std::fmt::Display) -> RfxError {
        RfxError::Data(format!(
            "{}: not a valid NetCDF-3 file: {msg} (header byte {})",
            self.what, self.pos
        ))
    }

    fn take(&mut self, n: usize, item: &str) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                self.error(format!(
                    "the header is truncated: {item} needs {n} bytes, the file has {} left",
                    self.bytes.len().saturating_sub(self.pos)
                ))
            })?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn u32(&mut self, item: &str) -> Result<u32> {
        let b = self.take(4, item)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self, item: &str) -> Result<u64> {
        let b = self.take(8, item)?;
        Ok(u64::from_be_bytes([
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
        ]))
    }

    /// A count of items of at least `min_bytes` each: refused when the rest of the file cannot hold them.
    fn count(&mut self, item: &str, min_bytes: usize) -> Result<usize> {
        let n = self.u32(item)? as usize;
        let left = self.bytes.len().saturating_sub(self.pos);
        if n.saturating_mul(min_bytes) > left {
            return Err(self.error(format!(
                "{item} is {n}, more than the {left} bytes left in the file can hold"
            )));
        }
        Ok(n)
    }

    /// `n` bytes followed by padding to a multiple of 4.
    fn padded(&mut self, n: usize, item: &str) -> Result<&'a [u8]> {
        let s = self.take(n, item)?;
        self.take((4 - n % 4) % 4, item)?;
        Ok(s)
    }

    fn name(&mut self, item: &str) -> Result<String> {
        let n = self.count(&format!("the length of {item}"), 1)?;
        let b = self.padded(n, item)?;
        String::from_utf8(b.to_vec()).map_err(|_| self.error(format!("{item} is not UTF-8")))
    }

    fn nc_type(&mut self, item: &str) -> Result<NcType> {
        let code = self.u32(item)?;
        NcType::from_code(code)
            .ok_or_else(|| self.error(format!("{item} has the unknown type code {code}")))
    }

    /// The tag of a list and its length; an absent list is two zero words.
    fn list(&mut self, tag: u32, item: &str) -> Result<usize> {
        let t = self.u32(&format!("the tag of the {item} list"))?;
        let n = self.count(&format!("the number of {item}"), 4)?;
        if t == tag || (t == 0 && n == 0) {
            Ok(n)
        } else {
            Err(self.error(format!(
                "expected the {item} list (tag {tag:#x}), found tag {t:#x}"
            )))
        }
    }

    fn attributes(&mut self, owner: &str) -> Result<Vec<Attribute>> {
        let n = self.list(TAG_ATTRIBUTE, &format!("attributes of {owner}"))?;
        (0..n)
            .map(|_| {
                let name = self.name(&format!("an attribute name of {owner}"))?;
                let item = format!("attribute {name} of {owner}");
                let nc_type = self.nc_type(&item)?;
                let count =
                    self.count(&format!("the number of values of {item}"), nc_type.size())?;
                let bytes = self.padded(count * nc_type.size(), &item)?;
                let value = if nc_type == NcType::Char {
                    AttrValue::Text(
                        String::from_utf8_lossy(bytes)
                            .trim_end_matches('\0')
                            .to_string(),
                    )
                } else {
                    AttrValue::Numbers(
                        nc_type,
                        (0..count).map(|i| nc_type.decode(bytes, i)).collect(),
                    )
                };
                Ok(Attribute { name, value })
            })
            .collect()
    }
}

impl NcFile {
    /// Reads the file at `path` (a gzip layer is removed, as for every cached file) and parses it.
    pub fn read(path: &Path) -> Result<NcFile> {
        let mut bytes = Vec::new();
        crate::io::open_payload(path)?
            .read_to_end(&mut bytes)
            .map_err(|e| RfxError::io(path, e))?;
        NcFile::parse(bytes, &path.display().to_string())
    }

    /// Parses the header of the NetCDF-3 file `bytes`; `what` names the file in errors.
    pub fn parse(bytes: Vec<u8>, what: &str) -> Result<NcFile> {
        let mut c = Cursor {
            what,
            bytes: &bytes,
            pos: 0,
        };
        let magic = c.take(4, "the magic number")?;
        if &magic[..3] != b"CDF" {
            return Err(c.error("it does not start with `CDF`"));
        }
        let version = magic[3];
        if version != 1 && version != 2 {
            return Err(c.error(format!(
                "format version {version} is not supported (1: classic, 2: 64-bit offsets; \
                 5 and HDF5-based NetCDF-4 are not read)"
            )));
        }
        let numrecs = c.u32("the number of records")?;
        if numrecs == u32::MAX {
            return Err(c.error("the number of records is 'streaming' (not written)"));
        }
        let numrecs = numrecs as usize;
        let ndims = c.list(TAG_DIMENSION, "dimensions")?;
        let mut dimensions = Vec::with_capacity(ndims);
        for _ in 0..ndims {
            let name = c.name("a dimension name")?;
            let len = c.u32(&format!("the length of dimension {name}"))? as usize;
            let unlimited = len == 0;
            if unlimited && dimensions.iter().any(|d: &Dimension| d.unlimited) {
                return Err(c.error(format!("dimension {name} is a second unlimited dimension")));
            }
            dimensions.push(Dimension {
                name,
                len: if unlimited { numrecs } else { len },
                unlimited,
            });
        }
        let attributes = c.attributes("the file")?;
        let nvars = c.list(TAG_VARIABLE, "variables")?;
        let mut variables = Vec::with_capacity(nvars);
        for _ in 0..nvars {
            let name = c.name("a variable name")?;
            let nd = c.count(&format!("the number of dimensions of {name}"), 4)?;
            let mut dims = Vec::with_capacity(nd);
            for k in 0..nd {
                let id = c.u32(&format!("dimension {k} of {name}"))? as usize;
                let dim = dimensions.get(id).ok_or_else(|| {
                    c.error(format!(
                        "variable {name} uses dimension id {id}, but the file has {ndims}"
                    ))
                })?;
                if dim.unlimited && k != 0 {
                    return Err(c.error(format!(
                        "variable {name} has the record dimension in place {k}, not first"
                    )));
                }
                dims.push(id);
            }
            let var_attributes = c.attributes(&format!("variable {name}"))?;
            let nc_type = c.nc_type(&format!("variable {name}"))?;
            let _vsize = c.u32(&format!("the size of variable {name}"))?;
            let begin = if version == 1 {
                u64::from(c.u32(&format!("the offset of variable {name}"))?)
            } else {
                c.u64(&format!("the offset of variable {name}"))?
            };
            let is_record = dims.first().is_some_and(|&d| dimensions[d].unlimited);
            variables.push(Variable {
                name,
                dims,
                attributes: var_attributes,
                nc_type,
                begin,
                is_record,
            });
        }
        let header_end = c.pos;
        let mut file = NcFile {
            what: what.to_string(),
            bytes: Vec::new(),
            version,
            numrecs,
            dimensions,
            attributes,
            variables,
            recsize: 0,
        };
        let records: Vec<u64> = file
            .variables
            .iter()
            .filter(|v| v.is_record)
            .map(|v| file.slab_bytes(v))
            .collect::<Result<_>>()?;
        file.recsize = match records.as_slice() {
            [one] => *one,
            many => many
                .iter()
                .try_fold(0u64, |a, &s| a.checked_add(s.next_multiple_of(4)))
                .ok_or_else(|| file.error("the record size overflows"))?,
        };
        let len = bytes.len() as u64;
        for v in &file.variables {
            let slab = file.slab_bytes(v)?;
            let end = if v.is_record && file.numrecs == 0 {
                Some(v.begin)
            } else if v.is_record {
                (file.numrecs as u64 - 1)
                    .checked_mul(file.recsize)
                    .and_then(|o| o.checked_add(v.begin))
                    .and_then(|o| o.checked_add(slab))
            } else {
                v.begin.checked_add(slab)
            };
            match end {
                Some(e) if e <= len && (slab == 0 || v.begin >= header_end as u64) => {}
                _ => {
                    return Err(file.error(format!(
                        "the data of variable {} (offset {}, {slab} bytes per {}) lies outside the \
                         file's data part (bytes {header_end}..{len})",
                        v.name,
                        v.begin,
                        if v.is_record { "record" } else { "variable" }
                    )))
                }
            }
        }
        file.bytes = bytes;
        Ok(file)
    }

    fn error(&self, msg: impl std::fmt::Display) -> RfxError {
        RfxError::Data(format!("{}: not a valid NetCDF-3 file: {msg}", self.what))
    }

    /// Bytes of one slab of `v`: all its values (fixed variable) or one record's (record variable).
    fn slab_bytes(&self, v: &Variable) -> Result<u64> {
        let skip = usize::from(v.is_record);
        v.dims[skip..]
            .iter()
            .try_fold(v.nc_type.size() as u64, |a, &d| {
                a.checked_mul(self.dimensions[d].len as u64)
            })
            .ok_or_else(|| self.error(format!("the size of variable {} overflows", v.name)))
    }

    /// The variable `name`; an unknown name is an error listing the file's variables.
    pub fn variable(&self, name: &str) -> Result<&Variable> {
        self.variables
            .iter()
            .find(|v| v.name == name)
            .ok_or_else(|| {
                let have: Vec<&str> = self.variables.iter().map(|v| v.name.as_str()).collect();
                RfxError::Data(format!(
                    "{}: no variable {name} (it has {})",
                    self.what,
                    have.join(", ")
                ))
            })
    }

    /// The lengths of the dimensions of `v` (the record dimension's is the number of records).
    pub fn shape(&self, v: &Variable) -> Vec<usize> {
        v.dims.iter().map(|&d| self.dimensions[d].len).collect()
    }

    /// The values of variable `name` in C order (records first), as `f64`; values equal to the variable's
    /// fill value ([`Variable::fill_value`], compared in the variable's type) are `NaN`. A `char` variable
    /// is refused.
    pub fn values(&self, name: &str) -> Result<Vec<f64>> {
        let v = self.variable(name)?;
        if v.nc_type == NcType::Char {
            return Err(RfxError::Data(format!(
                "{}: variable {name} holds characters, not numbers",
                self.what
            )));
        }
        // both bounds were checked against the file's length in `parse`
        let slab = self.slab_bytes(v)? as usize;
        let (records, step) = if v.is_record {
            (self.numrecs, self.recsize as usize)
        } else {
            (1, 0)
        };
        let per = slab / v.nc_type.size();
        let fill = v.fill_value();
        let is_fill = |x: f64| match (fill, v.nc_type) {
            (Some(f), NcType::Float) => x as f32 == f as f32,
            (Some(f), _) => x == f,
            (None, _) => false,
        };
        let mut out = Vec::with_capacity(records * per);
        for r in 0..records {
            let start = v.begin as usize + r * step;
            let bytes = &self.bytes[start..start + slab];
            out.extend((0..per).map(|i| {
                let x = v.nc_type.decode(bytes, i);
                if is_fill(x) {
                    f64::NAN
                } else {
                    x
                }
            }));
        }
        Ok(out)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A tiny NetCDF-3 file written by hand, following the specification: dimensions `lon` (3), `lat` (2)
    /// and the record dimension `time` (2 records); a global text attribute; fixed variables `lon`
    /// (double, units `degrees_east`: 10, 190, 350), `lat` (short, units `degrees_north`: −45, 45) and
    /// `z[lat, lon]` (float, `_FillValue` −1e34: 1.5, fill, 3, 4, 5, 6.25); record variables `t` (int,
    /// one per record) and `w[time, lat, lon]` (float, `missing_value` −99).
    pub(crate) fn tiny(version: u8) -> Vec<u8> {
        fn w32(b: &mut Vec<u8>, x: u32) {
            b.extend(x.to_be_bytes());
        }
        fn name(b: &mut Vec<u8>, s: &str) {
            w32(b, s.len() as u32);
            b.extend(s.as_bytes());
            b.resize(b.len().next_multiple_of(4), 0);
        }
        enum Attr {
            None,
            Fill(&'static str, f32),
            Units(&'static str),
        }
        // variables: (name, dim ids, type, vsize, attribute)
        let vars: [(&str, &[u32], u32, u32, Attr); 5] = [
            ("lon", &[0], 6, 24, Attr::Units("degrees_east")),
            ("lat", &[1], 3, 4, Attr::Units("degrees_north")),
            ("z", &[1, 0], 5, 24, Attr::Fill("_FillValue", -1e34)),
            ("t", &[2], 4, 4, Attr::None),
            ("w", &[2, 1, 0], 5, 24, Attr::Fill("missing_value", -99.0)),
        ];
        // the data: lon, lat, z (fixed), then 2 records of (t, w)
        let mut data = Vec::new();
        for x in [10.0f64, 190.0, 350.0] {
            data.extend(x.to_be_bytes());
        }
        for y in [-45i16, 45] {
            data.extend(y.to_be_bytes());
        }
        for z in [1.5f32, -1e34, 3.0, 4.0, 5.0, 6.25] {
            data.extend(z.to_be_bytes());
        }
        let fixed = data.len();
        for r in 0..2i32 {
            data.extend((100 * (r + 1)).to_be_bytes());
            for k in 0..6 {
                let v: f32 = if r == 1 && k == 2 {
                    -99.0
                } else {
                    (10 * r + k) as f32
                };
                data.extend(v.to_be_bytes());
            }
        }
        let header_len = |b: &[u8]| b.len() as u32;
        // build the header twice: the first pass finds its length, the second writes the offsets
        let mut begin0 = 0u32;
        let mut h = Vec::new();
        for _ in 0..2 {
            h.clear();
            h.extend(b"CDF");
            h.push(version);
            w32(&mut h, 2);
            w32(&mut h, TAG_DIMENSION);
            w32(&mut h, 3);
            for (n, l) in [("lon", 3), ("lat", 2), ("time", 0)] {
                name(&mut h, n);
                w32(&mut h, l);
            }
            w32(&mut h, TAG_ATTRIBUTE);
            w32(&mut h, 1);
            name(&mut h, "history");
            w32(&mut h, 2);
            w32(&mut h, 5);
            h.extend(b"hand\0\0\0\0");
            w32(&mut h, TAG_VARIABLE);
            w32(&mut h, vars.len() as u32);
            let offsets = [0u32, 24, 28, fixed as u32, fixed as u32 + 4];
            for ((n, dims, ty, vsize, fill), off) in vars.iter().zip(offsets) {
                name(&mut h, n);
                w32(&mut h, dims.len() as u32);
                for &d in *dims {
                    w32(&mut h, d);
                }
                match fill {
                    Attr::Fill(a, v) => {
                        w32(&mut h, TAG_ATTRIBUTE);
                        w32(&mut h, 1);
                        name(&mut h, a);
                        w32(&mut h, 5);
                        w32(&mut h, 1);
                        h.extend(v.to_be_bytes());
                    }
                    Attr::Units(u) => {
                        w32(&mut h, TAG_ATTRIBUTE);
                        w32(&mut h, 1);
                        name(&mut h, "units");
                        w32(&mut h, 2);
                        name(&mut h, u);
                    }
                    Attr::None => {
                        w32(&mut h, 0);
                        w32(&mut h, 0);
                    }
                }
                w32(&mut h, *ty);
                w32(&mut h, *vsize);
                if version == 2 {
                    h.extend(u64::from(begin0 + off).to_be_bytes());
                } else {
                    w32(&mut h, begin0 + off);
                }
            }
            begin0 = header_len(&h);
        }
        h.extend(data);
        h
    }

    #[test]
    fn a_hand_built_file_is_read_with_fill_values_and_records() {
        for version in [1, 2] {
            let f = NcFile::parse(tiny(version), "tiny.nc").unwrap();
            assert_eq!((f.version, f.numrecs), (version, 2));
            assert_eq!(
                f.dimensions
                    .iter()
                    .map(|d| (d.name.as_str(), d.len, d.unlimited))
                    .collect::<Vec<_>>(),
                [("lon", 3, false), ("lat", 2, false), ("time", 2, true)]
            );
            assert_eq!(f.attributes[0].value, AttrValue::Text("hand".to_string()));
            // two record variables: 4 + 24 bytes per record
            assert_eq!(f.recsize, 28);
            assert_eq!(f.values("lon").unwrap(), [10.0, 190.0, 350.0]);
            let lon = f.variable("lon").unwrap();
            assert_eq!(lon.text_attribute("units"), Some("degrees_east"));
            assert_eq!(lon.fill_value(), None);
            assert_eq!(
                f.variable("z").unwrap().fill_value(),
                Some(f64::from(-1e34f32))
            );
            assert_eq!(f.values("lat").unwrap(), [-45.0, 45.0]);
            let z = f.values("z").unwrap();
            assert_eq!(z.len(), 6);
            assert!(z[1].is_nan());
            assert_eq!([z[0], z[2], z[5]], [1.5, 3.0, 6.25]);
            assert_eq!(f.values("t").unwrap(), [100.0, 200.0]);
            let w = f.values("w").unwrap();
            assert_eq!(f.shape(f.variable("w").unwrap()), [2, 2, 3]);
            assert!(w[8].is_nan());
            let rest: Vec<f64> = w.iter().copied().filter(|x| !x.is_nan()).collect();
            assert_eq!(rest, [0., 1., 2., 3., 4., 5., 10., 11., 13., 14., 15.]);
            let e = f.values("nope").unwrap_err().to_string();
            assert!(
                e.contains("tiny.nc") && e.contains("lon, lat, z, t, w"),
                "{e}"
            );
        }
    }

    fn parse_err(bytes: Vec<u8>) -> String {
        NcFile::parse(bytes, "bad.nc").unwrap_err().to_string()
    }

    #[test]
    fn truncated_and_corrupted_files_are_errors_naming_file_and_fault() {
        let good = tiny(1);
        // every truncation is an error, never a panic; inside the header it says so
        for n in 0..good.len() {
            let e = parse_err(good[..n].to_vec());
            assert!(
                e.starts_with("bad.nc: not a valid NetCDF-3 file"),
                "{n}: {e}"
            );
        }
        assert!(parse_err(good[..50].to_vec()).contains("truncated"));
        assert!(parse_err(good[..good.len() - 1].to_vec()).contains("variable w"));
        let mut bad = good.clone();
        bad[0] = b'H';
        assert!(parse_err(bad).contains("does not start with `CDF`"));
        let mut bad = good.clone();
        bad[3] = 5;
        assert!(parse_err(bad).contains("version 5"));
        // the type code of variable `lon`: find `lon`'s variable entry (the second "lon" name)
        let pos = |b: &[u8], pat: &[u8], nth: usize| {
            b.windows(pat.len())
                .enumerate()
                .filter(|(_, w)| *w == pat)
                .nth(nth)
                .map(|(i, _)| i)
                .unwrap()
        };
        let lon_var = pos(&good, b"\0\0\0\x03lon\0", 1);
        // name (8) + ndims (4) + dimid (4) + attribute list (tag, count, name `units` 12, type, text
        // `degrees_east` 16: 40) -> nc_type
        let ty = lon_var + 56;
        assert_eq!(good[ty..ty + 4], [0, 0, 0, 6]);
        let mut bad = good.clone();
        bad[ty + 3] = 9;
        let e = parse_err(bad);
        assert!(
            e.contains("variable lon has the unknown type code 9"),
            "{e}"
        );
        // an offset beyond the end of the file
        let mut bad = good.clone();
        bad[ty + 8..ty + 12].copy_from_slice(&1_000_000u32.to_be_bytes());
        let e = parse_err(bad);
        assert!(e.contains("variable lon") && e.contains("outside"), "{e}");
        // a huge count
        let mut bad = good.clone();
        bad[lon_var - 4..lon_var].copy_from_slice(&u32::MAX.to_be_bytes());
        let e = parse_err(bad);
        assert!(e.contains("more than the"), "{e}");
        // a dimension id that does not exist
        let mut bad = good.clone();
        bad[lon_var + 12..lon_var + 16].copy_from_slice(&7u32.to_be_bytes());
        assert!(parse_err(bad).contains("dimension id 7"));
        // a wrong list tag
        let mut bad = good;
        bad[8..12].copy_from_slice(&0x0Bu32.to_be_bytes());
        assert!(parse_err(bad).contains("expected the dimensions list"));
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        use rand::{Rng, SeedableRng};
        let good = tiny(1);
        let mut rng = rand::rngs::StdRng::seed_from_u64(30);
        for _ in 0..2000 {
            let mut b = good.clone();
            for _ in 0..rng.gen_range(1..4) {
                let i = rng.gen_range(0..b.len());
                b[i] = rng.gen();
            }
            if let Ok(f) = NcFile::parse(b, "fuzz.nc") {
                for v in ["lon", "lat", "z", "t", "w"] {
                    let _ = f.values(v);
                }
            }
        }
    }
}
