//! The fuzz targets (`fuzz/fuzz_targets`, issue 60) on stable, for a bounded time: each entry point of
//! `rfx_experiments::fuzzing` runs on every file of its committed corpus (`fuzz/corpus/<target>`) and on
//! seeded mutations of them — bytes flipped, inserted, deleted, runs duplicated, corpus files spliced —
//! until its time budget (`RFX_FUZZ_SECONDS`, default 8 s per target) is spent. A panic fails the test with
//! the input written to `target/fuzz-failures/` (replay it with `cargo +nightly fuzz run <target> <file>`);
//! an abort or a hang fails the test binary. The same seed gives the same inputs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A small deterministic generator (xorshift64*), so that a failure is replayed by the same run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bytes that matter to the parsers (quotes, brackets, separators, digits, NUL, high bytes).
const INTERESTING: &[u8] = b"\0\n\r\t ,;:'\"()[]{}=#_-+.0123456789xeEfF<>|\x93\xff";

fn mutate(rng: &mut Rng, input: &[u8], corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(v.len() + 1);
        match rng.below(6) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] = INTERESTING[rng.below(INTERESTING.len())];
            }
            1 => v.insert(at, INTERESTING[rng.below(INTERESTING.len())]),
            2 if at < v.len() => {
                let end = (at + 1 + rng.below(8)).min(v.len());
                v.drain(at..end);
            }
            3 if at < v.len() => {
                // duplicate a run (grows numbers, nests brackets)
                let end = (at + 1 + rng.below(16)).min(v.len());
                let run = v[at..end].to_vec();
                v.splice(at..at, run);
            }
            4 if !corpus.is_empty() => {
                // splice the tail of another corpus file
                let other = &corpus[rng.below(corpus.len())];
                let from = rng.below(other.len() + 1);
                v.truncate(at);
                v.extend_from_slice(&other[from..]);
            }
            _ if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] = rng.next() as u8;
            }
            _ => v.push(rng.next() as u8),
        }
    }
    v
}

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let c: Vec<Vec<u8>> = files.iter().map(|p| std::fs::read(p).unwrap()).collect();
    assert!(!c.is_empty(), "{}: empty corpus", dir.display());
    c
}

fn budget() -> Duration {
    let s = std::env::var("RFX_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(8.0);
    Duration::from_secs_f64(s)
}

/// Runs `f` on the corpus of `target`, then on mutations until the budget is spent; returns the count.
fn fuzz(target: &str, f: fn(&[u8])) -> usize {
    let corpus = corpus(target);
    let run = |input: &[u8]| {
        if std::panic::catch_unwind(|| f(input)).is_err() {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/fuzz-failures");
            std::fs::create_dir_all(&dir).unwrap();
            let file = dir.join(format!("{target}-{:016x}", fnv(input)));
            std::fs::write(&file, input).unwrap();
            panic!("{target}: panic on the input saved in {}", file.display());
        }
    };
    for c in &corpus {
        run(c);
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ fnv(target.as_bytes()));
    let (start, budget) = (Instant::now(), budget());
    let mut n = corpus.len();
    while start.elapsed() < budget {
        let base = &corpus[rng.below(corpus.len())];
        run(&mutate(&mut rng, base, &corpus));
        n += 1;
    }
    eprintln!(
        "fuzz {target}: {n} inputs in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    n
}

fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[test]
fn npy_header() {
    assert!(fuzz("npy_header", rfx_experiments::fuzzing::npy_file) > 5);
}

#[test]
fn csv_reader() {
    assert!(fuzz("csv_reader", rfx_experiments::fuzzing::csv_file) > 4);
}

#[test]
fn experiment_file() {
    assert!(fuzz("experiment_file", rfx_experiments::fuzzing::experiment_file) > 1);
}
