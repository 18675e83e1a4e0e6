//! The `rfx` binary; see `rfx --help`.

fn main() {
    restore_default_sigpipe();
    std::process::exit(rfx_experiments::cli::main());
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
