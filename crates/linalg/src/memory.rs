//! Memory estimates checked against a cap before large allocations.

use rfx_core::{Result, RfxError};

/// Default memory cap for [`check_memory`]: 8 GiB (a third of the 24 GB reference machine).
pub const DEFAULT_MEMORY_CAP: u64 = 8 << 30;

/// Bytes taken by `count` `f64` values (saturating).
pub fn f64_bytes(count: u128) -> u64 {
    u64::try_from(count.saturating_mul(8)).unwrap_or(u64::MAX)
}

/// Returns [`RfxError::OutOfMemory`] if `needed_bytes > cap_bytes`; call it *before* allocating.
pub fn check_memory(what: &str, needed_bytes: u64, cap_bytes: u64) -> Result<()> {
    if needed_bytes > cap_bytes {
        Err(RfxError::OutOfMemory {
            what: what.to_string(),
            needed_bytes,
            cap_bytes,
        })
    } else {
        Ok(())
    }
}
