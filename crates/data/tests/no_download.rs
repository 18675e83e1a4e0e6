//! `RFX_DATA_NO_DOWNLOAD` turns a download into an error that names the fetch command, for every kind of
//! origin (a plain URL, and a file extracted from a package even when a mirror is set). This binary holds
//! only this test, because it sets the variable for its whole process.

use rfx_data::{fetch, Source, ENV_NO_DOWNLOAD};

#[test]
fn no_download_makes_a_missing_file_an_error_naming_the_fetch_command() {
    std::env::set_var(ENV_NO_DOWNLOAD, "1");
    let cache = tempfile::tempdir().unwrap();
    let empty_mirror = tempfile::tempdir().unwrap();
    for (name, source) in [
        ("uci/yacht", Source::Download),
        ("sklego/abalone", Source::Download),
        // a mirror without the file: abalone, shuttle and etopo60 come from their packages (pip, apt-get)
        (
            "sklego/abalone",
            Source::Mirror(empty_mirror.path().to_path_buf()),
        ),
        (
            "mlbench/shuttle",
            Source::Mirror(empty_mirror.path().to_path_buf()),
        ),
        (
            "ferret/etopo60",
            Source::Mirror(empty_mirror.path().to_path_buf()),
        ),
    ] {
        let err = fetch(name, cache.path(), &source).unwrap_err().to_string();
        assert!(
            err.contains(ENV_NO_DOWNLOAD) && err.contains(&format!("rfx fetch {name}")),
            "{name} from {source:?}: {err}"
        );
    }
    // Nothing was left behind, not even a temporary file.
    let left = walk(cache.path());
    assert!(left.is_empty(), "files left in the cache: {left:?}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
