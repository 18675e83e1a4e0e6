//! Property tests of the file loaders on generated and mutated inputs (issue 27): the IDX parser, the
//! numeric CSV reader and the KEEL reader return a value or an error for any bytes, never panic, and never
//! accept a non-finite value. Bounded: a few hundred cases each (well under a second per loader); the R data
//! reader and the NetCDF-3 reader are fuzzed in their unit tests (`rdata.rs`, with its stream writer;
//! `netcdf.rs`, with a hand-built file, every truncation and random byte edits).

use std::io::Write;

use proptest::prelude::*;
use rfx_data::csv::{read_csv, CsvOptions};
use rfx_data::idx::{encode_idx, parse_idx};
use rfx_data::keel::{read_keel, Categorical};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 384,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Applies byte edits (replace, insert, remove) to `b`.
fn mutate(mut b: Vec<u8>, edits: &[(usize, u8, u8)]) -> Vec<u8> {
    for &(at, byte, op) in edits {
        let at = at % (b.len() + 1);
        match op {
            0 if at < b.len() => b[at] = byte,
            1 => b.insert(at, byte),
            _ if at < b.len() => {
                b.remove(at);
            }
            _ => {}
        }
    }
    b
}

fn edits() -> impl Strategy<Value = Vec<(usize, u8, u8)>> {
    prop::collection::vec((0usize..256, any::<u8>(), 0u8..3), 0..6)
}

/// Bytes that look like delimited text: digits, signs, separators, letters, quotes, newlines, and now and
/// then any byte.
fn texty() -> impl Strategy<Value = Vec<u8>> {
    let alphabet: Vec<u8> = b"0123456789.,,,;\n\n\r -+eEinfaNI\"@{}x \t".to_vec();
    prop::collection::vec(
        prop_oneof![9 => prop::sample::select(alphabet), 1 => any::<u8>()],
        0..200,
    )
}

fn write_temp(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.path().join(name);
    std::fs::File::create(&p)
        .and_then(|mut f| f.write_all(bytes))
        .expect("temp file");
    p
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn idx_parses_or_refuses_any_mutation(
        n in 0usize..4, r in 0usize..4, c in 0usize..4, e in edits(),
    ) {
        let data: Vec<u8> = (0..n * r * c).map(|i| i as u8).collect();
        let valid = encode_idx(&[n, r, c], &data);
        let bytes = mutate(valid, &e);
        if let Ok(a) = parse_idx(&bytes, "fuzz") {
            // whatever is accepted is consistent: the values fill the declared shape
            prop_assert_eq!(a.dims.iter().product::<usize>(), a.data.len());
        }
    }

    #[test]
    fn idx_header_claims_are_checked_against_the_size(dims in prop::collection::vec(any::<u32>(), 0..5), tail in 0usize..64) {
        let mut b = vec![0u8, 0, 8, dims.len() as u8];
        for d in &dims {
            b.extend(d.to_be_bytes());
        }
        b.extend(std::iter::repeat_n(1u8, tail));
        let claimed = dims.iter().try_fold(1u128, |a, &d| a.checked_mul(u128::from(d)));
        let ok = parse_idx(&b, "fuzz").is_ok();
        prop_assert_eq!(ok, claimed == Some(tail as u128));
    }

    #[test]
    fn csv_reads_or_refuses_any_text(bytes in texty()) {
        let dir = tempfile::tempdir().unwrap();
        let p = write_temp(&dir, "x.csv", &bytes);
        for opts in [CsvOptions::default(), CsvOptions::whitespace()] {
            if let Ok(t) = read_csv(&p, &opts) {
                prop_assert!(t.data.iter().all(|v| v.is_finite()));
            }
        }
    }

    #[test]
    fn keel_reads_or_refuses_any_mutation(e in edits(), extra in texty()) {
        let valid = b"@relation t\n@attribute a real [0.0, 9.0]\n@attribute k {u, v}\n@attribute class {p, n}\n@inputs a, k\n@outputs class\n@data\n1.5, u, p\n2.5, v, n\n3.0, u, n\n".to_vec();
        let mut bytes = mutate(valid, &e);
        bytes.extend(extra);
        let dir = tempfile::tempdir().unwrap();
        let p = write_temp(&dir, "x.dat", &bytes);
        for cat in [Categorical::OneHot, Categorical::Error] {
            if let Ok(d) = read_keel(&p, "fuzz", cat) {
                prop_assert!(d.x.iter().all(|v| v.is_finite()));
            }
        }
    }
}
