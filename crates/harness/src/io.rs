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

/// The temporary files being written by this process ([`Temporary`]), removed by
/// [`remove_temporaries`] when a signal ends the process.
static LIVE: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A temporary file next to its destination ([`temp_path`]): registered while it exists, so that a
/// signal handler can remove it ([`remove_temporaries`]); removed when dropped uncommitted, and when its
/// rename into place fails.
#[derive(Debug)]
pub struct Temporary {
    path: PathBuf,
    done: bool,
}

impl Temporary {
    /// The temporary path for `dest`, registered (nothing is created yet).
    pub fn new(dest: &Path) -> Self {
        let path = temp_path(dest);
        live().push(path.clone());
        Temporary { path, done: false }
    }

    /// The temporary path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the temporary file to `dest`; on failure (e.g. `dest` is a directory) the temporary file is
    /// removed and the error returned.
    pub fn commit(mut self, dest: &Path) -> std::io::Result<()> {
        let r = std::fs::rename(&self.path, dest);
        if r.is_ok() {
            self.done = true;
        }
        r
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.path);
        }
        live().retain(|p| p != &self.path);
    }
}

/// Removes every temporary file this process is writing (called by the CLI's SIGINT/SIGTERM handler just
/// before it exits, so that an interrupted `gram` or `features` leaves no partial output behind).
pub fn remove_temporaries() {
    remove_temporaries_where(|_| true);
}

/// Removes the registered temporary files whose path satisfies `which` and forgets them.
fn remove_temporaries_where(which: impl Fn(&Path) -> bool) {
    live().retain(|p| {
        if which(p) {
            let _ = std::fs::remove_file(p);
            false
        } else {
            true
        }
    });
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, fsync, then rename.
/// A reader sees either the old file or the new one, never a mix; a crash leaves the old file intact, and
/// a failure (a full disk, `path` a directory) leaves no temporary file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = Temporary::new(path);
    {
        let mut f = std::fs::File::create(tmp.path())?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    tmp.commit(path)
}

/// Runs `write` on a temporary path next to `path`, then renames it into place (the temporary file
/// removed on any failure).
pub fn with_atomic_path<E>(
    path: &Path,
    write: impl FnOnce(&Path) -> Result<(), E>,
) -> Result<(), String>
where
    E: std::fmt::Display,
{
    let tmp = Temporary::new(path);
    match write(tmp.path()) {
        Ok(()) => tmp
            .commit(path)
            .map_err(|e| format!("{}: {e}", path.display())),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// Opens the input file `path` for reading without ever blocking in `open`, and refuses at once what is not
/// a file to read: a directory, a socket, a block device, a FIFO (unless `pipes`: an experiment file may be
/// `<(cat file)` or `/dev/stdin`), a character device other than `/dev/null` and `/dev/zero` (a terminal would
/// wait for typing). The error is "is a FIFO, expected {expected}" (the caller names flag and path). The file
/// is opened `O_NONBLOCK` (a FIFO with no writer would hang `open` forever) and checked again after opening;
/// an accepted pipe is then switched back to blocking reads, which end at once when it has no writer.
pub fn open_input(path: &Path, pipes: bool, expected: &str) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
    let check = |meta: &std::fs::Metadata| -> std::io::Result<()> {
        let t = meta.file_type();
        let dev = (
            rustix::fs::major(meta.rdev()),
            rustix::fs::minor(meta.rdev()),
        );
        let kind = if t.is_file() {
            return Ok(());
        } else if t.is_dir() {
            "a directory"
        } else if t.is_fifo() {
            if pipes {
                return Ok(());
            }
            "a FIFO"
        } else if t.is_socket() {
            "a socket"
        } else if t.is_block_device() {
            "a block device"
        } else if t.is_char_device() {
            // the kernel's memory devices null (1, 3) and zero (1, 5) never block
            if matches!(dev, (1, 3) | (1, 5)) {
                return Ok(());
            }
            "a character device"
        } else {
            "not a regular file"
        };
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("is {kind}, expected {expected}"),
        ))
    };
    check(&std::fs::metadata(path)?)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)?;
    let meta = file.metadata()?;
    check(&meta)?;
    if !meta.file_type().is_file() {
        let flags = rustix::fs::fcntl_getfl(&file)?;
        rustix::fs::fcntl_setfl(&file, flags - rustix::fs::OFlags::NONBLOCK)?;
    }
    Ok(file)
}

/// The whole of the input file `path` ([`open_input`] without pipes: a regular file).
pub fn read_input(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    open_input(path, false, "a regular file")?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// [`read_input`] as UTF-8 text.
pub fn read_input_text(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read_input(path)?)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()))
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
    fn failed_renames_and_signals_leave_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        // the destination is a directory: the rename fails, the temporary file goes
        let dest = dir.path().join("manifest.json");
        std::fs::create_dir(&dest).unwrap();
        assert!(write_atomic(&dest, b"{}").is_err());
        assert!(with_atomic_path(&dest, |p| std::fs::write(p, b"x")).is_err());
        let names = |d: &Path| -> Vec<String> {
            std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(names(dir.path()), vec!["manifest.json".to_string()]);
        // a temporary being written is removed by the signal path, and forgotten after a commit
        let out = dir.path().join("k.npy");
        let t = Temporary::new(&out);
        std::fs::write(t.path(), b"partial").unwrap();
        assert!(live().contains(&t.path().to_path_buf()));
        // (only this test's folder: tests run in parallel threads of one process)
        remove_temporaries_where(|p| p.starts_with(dir.path()));
        assert!(!t.path().exists());
        let t2 = Temporary::new(&out);
        std::fs::write(t2.path(), b"whole").unwrap();
        let p2 = t2.path().to_path_buf();
        t2.commit(&out).unwrap();
        assert!(!live().contains(&p2));
        assert_eq!(std::fs::read(&out).unwrap(), b"whole");
        drop(t);
    }

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
    fn inputs_that_are_not_files_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("f.csv");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_bits_truncate(0o600),
            0,
        )
        .unwrap();
        // no writer: refused at once (it hung in open before), accepted as a pipe where pipes are, and
        // then read as empty
        let e = open_input(&fifo, false, "a regular .csv or .npy file").unwrap_err();
        assert_eq!(
            e.to_string(),
            "is a FIFO, expected a regular .csv or .npy file"
        );
        let mut text = String::new();
        std::io::Read::read_to_string(&mut open_input(&fifo, true, "x").unwrap(), &mut text)
            .unwrap();
        assert!(text.is_empty());
        let e = open_input(dir.path(), false, "a file").unwrap_err();
        assert_eq!(e.to_string(), "is a directory, expected a file");
        assert!(open_input(Path::new("/dev/null"), false, "a file").is_ok());
        let file = dir.path().join("a.csv");
        std::fs::write(&file, "1,2\n").unwrap();
        assert_eq!(read_input(&file).unwrap(), b"1,2\n");
        assert_eq!(
            read_input(&fifo).unwrap_err().to_string(),
            "is a FIFO, expected a regular file"
        );
    }

    #[test]
    fn utc_format() {
        let s = utc_now();
        assert_eq!(s.len(), 20);
        assert!(s.starts_with("20") && s.ends_with('Z'));
    }
}
