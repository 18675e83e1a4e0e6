//! The `rfx` binary; see `rfx --help`.

fn main() {
    restore_default_sigpipe();
    remove_temporaries_on_signal();
    std::process::exit(rfx_experiments::cli::main());
}

/// On SIGINT, SIGTERM or SIGHUP, removes the temporary files being written (a partial `gram` or
/// `features` output, a report file) and exits with 130, the shell's code for an interrupted command. A
/// run's `cells.csv` needs no cleanup: every finished cell is already flushed, and a rerun resumes.
fn remove_temporaries_on_signal() {
    // the handler runs on its own thread (not in signal context), so it may take a lock and remove files
    let _ = ctrlc::set_handler(|| {
        rfx_harness::io::remove_temporaries();
        std::process::exit(130);
    });
}

/// Rust ignores SIGPIPE, so printing to a closed pipe (`rfx list | head`) would panic in `println!`;
/// with the default action the process ends quietly, as command-line tools do.
#[cfg(unix)]
fn restore_default_sigpipe() {
    // SAFETY: called first thing in `main`, before any other thread exists; setting a signal's disposition
    // to SIG_DFL installs no handler code.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn restore_default_sigpipe() {}
