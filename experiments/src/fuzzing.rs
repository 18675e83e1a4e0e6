//! Entry points for fuzzing the parsers that read user files (issue 60): each takes arbitrary bytes and
//! must return — an error is fine, a panic, an abort, a hang or an allocation beyond the bound is a bug.
//! The `cargo fuzz` targets in `fuzz/` call them (nightly, libFuzzer); `experiments/tests/fuzz_bounded.rs`
//! runs them on stable over the committed corpora (`fuzz/corpus/<target>`) and seeded mutations of it, for
//! a bounded time, in `make test`.

use std::io::Write;

/// The memory cap the fuzzed readers run under (bytes): a header may declare any size, the reader must
/// refuse what exceeds the file or this cap before allocating it.
pub const FUZZ_MEMORY_CAP: u64 = 64 << 20;

/// A `.npy` file: the header parser alone, then the whole reader (size checks, payload) on a file.
pub fn npy_file(data: &[u8]) {
    let _ = crate::npy::parse_header(data);
    let _ = crate::npy::read_header(&mut &data[..]);
    if let Some(path) = scratch("fuzz.npy", data) {
        let _ = crate::matrix_io::read_matrix(
            &path,
            crate::matrix_io::HeaderMode::Auto,
            "--input",
            FUZZ_MEMORY_CAP,
        );
    }
}

/// A CSV file read whole and in blocks of rows.
pub fn csv_file(data: &[u8]) {
    if let Some(path) = scratch("fuzz.csv", data) {
        let _ = crate::matrix_io::read_matrix(
            &path,
            crate::matrix_io::HeaderMode::Auto,
            "--input",
            FUZZ_MEMORY_CAP,
        );
        if let Ok(mut blocks) = crate::matrix_io::RowBlocks::open(
            &path,
            crate::matrix_io::HeaderMode::Auto,
            "--input",
            FUZZ_MEMORY_CAP,
        ) {
            while let Ok(Some(_)) = blocks.next_block(3) {}
        }
    }
}

/// An experiment file, validated in both variants (what `rfx validate` does), and its cells enumerated when
/// it is valid.
pub fn experiment_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let kinds = crate::kinds::registry();
    let path = std::path::Path::new("fuzz.toml");
    for quick in [false, true] {
        if let Ok(spec) = rfx_harness::spec::Spec::parse(path, text, quick, &kinds) {
            let _ = spec.cells().len();
        }
    }
}

/// Writes `data` to a file named `name` in this thread's scratch folder (one per thread, so that parallel
/// test threads do not share it); `None` if that fails.
fn scratch(name: &str, data: &[u8]) -> Option<std::path::PathBuf> {
    thread_local! {
        static DIR: Option<tempfile::TempDir> = tempfile::tempdir().ok();
    }
    DIR.with(|d| {
        let path = d.as_ref()?.path().join(name);
        let mut f = std::fs::File::create(&path).ok()?;
        f.write_all(data).ok()?;
        Some(path)
    })
}
