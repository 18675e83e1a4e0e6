//! The IDX format of MNIST and Fashion-MNIST (gzip transparent).
//!
//! An IDX file is two zero bytes, a type byte, the number of dimensions `k`, then `k` big-endian `u32`
//! sizes and the values in row-major order. Only the unsigned-byte type (`0x08`) is supported, which is
//! what the image and label files use.

use std::path::Path;

use ndarray::Array2;
use rfx_core::{Result, RfxError};

use crate::io::read_payload;

/// The raw content of an unsigned-byte IDX file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdxArray {
    /// Sizes of the dimensions, outermost first (`[n, rows, cols]` for images, `[n]` for labels).
    pub dims: Vec<usize>,
    /// The values in row-major order; `data.len()` is the product of `dims`.
    pub data: Vec<u8>,
}

/// Parses an unsigned-byte IDX payload; `name` is used in error messages.
pub fn parse_idx(bytes: &[u8], name: &str) -> Result<IdxArray> {
    let bad = |msg: String| RfxError::Data(format!("{name}: not a valid IDX file: {msg}"));
    if bytes.len() < 4 {
        return Err(bad(format!(
            "{} bytes, too short for a header",
            bytes.len()
        )));
    }
    if bytes[0] != 0 || bytes[1] != 0 {
        return Err(bad("the first two bytes must be zero".into()));
    }
    if bytes[2] != 0x08 {
        return Err(bad(format!(
            "element type 0x{:02x}; only unsigned bytes (0x08) are supported",
            bytes[2]
        )));
    }
    let k = usize::from(bytes[3]);
    let header = 4 + 4 * k;
    if bytes.len() < header {
        return Err(bad(format!("truncated header for {k} dimensions")));
    }
    let dims: Vec<usize> = (0..k)
        .map(|i| {
            let b = &bytes[4 + 4 * i..8 + 4 * i];
            u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize
        })
        .collect();
    let count = dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| bad(format!("dimensions {dims:?} overflow")))?;
    let body = &bytes[header..];
    if body.len() != count {
        return Err(bad(format!(
            "dimensions {dims:?} need {count} values, the file holds {}",
            body.len()
        )));
    }
    Ok(IdxArray {
        dims,
        data: body.to_vec(),
    })
}

/// Reads an IDX file (gzip transparent).
pub fn read_idx(path: &Path) -> Result<IdxArray> {
    parse_idx(&read_payload(path)?, &path.display().to_string())
}

/// Reads an IDX image file (`n × rows × cols` bytes) as an `n × (rows·cols)` matrix of the raw pixel
/// values `0.0..=255.0` (no scaling; see [`crate::preprocess`] for that).
pub fn read_idx_images(path: &Path) -> Result<Array2<f64>> {
    let a = read_idx(path)?;
    if a.dims.len() < 2 {
        return Err(RfxError::Data(format!(
            "{}: expected an image file with at least 2 dimensions, found {:?}",
            path.display(),
            a.dims
        )));
    }
    let n = a.dims[0];
    let d: usize = a.dims[1..].iter().product();
    let values = a.data.iter().map(|&b| f64::from(b)).collect();
    Ok(Array2::from_shape_vec((n, d), values).expect("size checked by parse_idx"))
}

/// Reads an IDX label file (one dimension) as class indices.
pub fn read_idx_labels(path: &Path) -> Result<Vec<usize>> {
    let a = read_idx(path)?;
    if a.dims.len() != 1 {
        return Err(RfxError::Data(format!(
            "{}: expected a label file with 1 dimension, found {:?}",
            path.display(),
            a.dims
        )));
    }
    Ok(a.data.iter().map(|&b| usize::from(b)).collect())
}

/// Encodes `dims` and `data` as an unsigned-byte IDX payload (the inverse of [`parse_idx`]; used to write
/// small test files).
pub fn encode_idx(dims: &[usize], data: &[u8]) -> Vec<u8> {
    assert_eq!(
        dims.iter().product::<usize>(),
        data.len(),
        "dims and data disagree"
    );
    let k = u8::try_from(dims.len()).expect("at most 255 dimensions");
    let mut out = vec![0, 0, 0x08, k];
    for &d in dims {
        out.extend_from_slice(&u32::try_from(d).expect("dimension fits u32").to_be_bytes());
    }
    out.extend_from_slice(data);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn synthetic_images_and_labels_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        // Three 2x3 images with pixel value 10*i + j, gzipped like the real files.
        let pixels: Vec<u8> = (0..3u8)
            .flat_map(|i| (0..6u8).map(move |j| 10 * i + j))
            .collect();
        let img = dir.path().join("img-idx3-ubyte.gz");
        let mut enc = flate2::write::GzEncoder::new(
            std::fs::File::create(&img).unwrap(),
            flate2::Compression::fast(),
        );
        enc.write_all(&encode_idx(&[3, 2, 3], &pixels)).unwrap();
        enc.finish().unwrap();
        let x = read_idx_images(&img).unwrap();
        assert_eq!(x.dim(), (3, 6));
        assert_eq!(x[[2, 5]], 25.0);
        assert_eq!(x[[1, 0]], 10.0);

        let lab = dir.path().join("lab-idx1-ubyte"); // uncompressed also works
        std::fs::write(&lab, encode_idx(&[3], &[7, 0, 9])).unwrap();
        assert_eq!(read_idx_labels(&lab).unwrap(), vec![7, 0, 9]);
        // Wrong kind of file for each reader.
        assert!(read_idx_images(&lab).is_err());
        assert!(read_idx_labels(&img).is_err());
    }

    #[test]
    fn malformed_files_are_rejected() {
        let good = encode_idx(&[2, 2], &[1, 2, 3, 4]);
        assert!(parse_idx(&good, "t").is_ok());
        let err = parse_idx(&good[..good.len() - 1], "t")
            .unwrap_err()
            .to_string();
        assert!(err.contains("need 4 values, the file holds 3"), "{err}");
        let mut float = good.clone();
        float[2] = 0x0d;
        assert!(parse_idx(&float, "t")
            .unwrap_err()
            .to_string()
            .contains("0x0d"));
        assert!(parse_idx(&[0, 0, 8], "t").is_err());
        assert!(parse_idx(&[0, 0, 8, 2, 0, 0], "t").is_err());
    }
}
