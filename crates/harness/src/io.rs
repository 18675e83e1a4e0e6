//! File helpers: atomic writes and small utilities.

use std::io::Write;
use std::path::{Path, PathBuf};

/// A temporary path next to `path` that keeps its extension (plot backends pick the format from it). It
/// names the host and the process, so that shards on several machines writing the same file of a shared
/// folder (`.fingerprint`, `config.toml`) never share a temporary file.
pub fn temp_path(path: &Path) -> PathBuf {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("out");
    let owner = format!("{}-{}", host_tag(), std::process::id());
    let name = match path.extension().and_then(|e| e.to_str()) {
        Some(ext) => format!(".{stem}.tmp-{owner}.{ext}"),
        None => format!(".{stem}.tmp-{owner}"),
    };
    path.with_file_name(name)
}

/// The host name reduced to file-name-safe characters (`host` when it cannot be read).
fn host_tag() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let tag: String = name
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(32)
        .collect();
    if tag.is_empty() {
        "host".into()
    } else {
        tag
    }
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, fsync, then rename.
/// A reader sees either the old file or the new one, never a mix; a crash leaves the old file intact.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = temp_path(path);
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

/// Runs `write` on a temporary path next to `path`, then renames it into place.
pub fn with_atomic_path<E>(
    path: &Path,
    write: impl FnOnce(&Path) -> Result<(), E>,
) -> Result<(), String>
where
    E: std::fmt::Display,
{
    let tmp = temp_path(path);
    match write(&tmp) {
        Ok(()) => std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display())),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(format!("{}: {e}", path.display()))
        }
    }
}

/// The current time as an ISO-8601 UTC string (`2026-11-22T05:54:12Z`).
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.csv");
        write_atomic(&p, b"old").unwrap();
        write_atomic(&p, b"new contents").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new contents");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary left"
        );
    }

    #[test]
    fn utc_format() {
        let s = utc_now();
        assert_eq!(s.len(), 20);
        assert!(s.starts_with("20") && s.ends_with('Z'));
    }
}
