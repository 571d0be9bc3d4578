//! The command line, run from Python's `rdarrow` entry point.

use pyo3::prelude::*;

/// The command line (the `rdarrow` program of the `rdarrow-cli` crate) run
/// on `argv`, with the interpreter free: its exit status, or the name of a
/// command of the Python package's (`host`: name and help line) for
/// Python to run.
#[pyfunction]
pub(crate) fn command_line(
    py: Python<'_>,
    argv: Vec<String>,
    host: Vec<(String, String)>,
) -> (u8, Option<String>) {
    // the help's lines live as long as the program (a handful, once per run)
    let host: Vec<rdarrow_cli::HostCommand> = host
        .into_iter()
        .map(|(n, a)| rdarrow_cli::HostCommand {
            name: Box::leak(n.into_boxed_str()),
            about: Box::leak(a.into_boxed_str()),
        })
        .collect();
    let args = argv.into_iter().map(std::ffi::OsString::from).collect();
    match py.detach(|| rdarrow_cli::run(args, &host)) {
        rdarrow_cli::Ran::Exit(code) => (code, None),
        rdarrow_cli::Ran::Host(name) => (0, Some(name)),
    }
}
