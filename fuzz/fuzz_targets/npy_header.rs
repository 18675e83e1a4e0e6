#![no_main]
// A .npy / CSV / experiment file of arbitrary bytes must be read or refused: never a panic, an abort or a
// hang. The entry point lives in rfx_experiments::fuzzing (also run on stable by tests/fuzz_bounded.rs).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rfx_experiments::fuzzing::npy_file(data);
});
