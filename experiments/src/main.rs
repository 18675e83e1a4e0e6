//! The `rfx` binary; see `rfx --help`.

fn main() {
    std::process::exit(rfx_experiments::cli::main());
}
