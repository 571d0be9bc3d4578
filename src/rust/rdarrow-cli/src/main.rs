//! The `rdarrow` binary: the program of this crate's library.

use std::process::ExitCode;

fn main() -> ExitCode {
    match rdarrow_cli::run(std::env::args_os().collect(), &[]) {
        rdarrow_cli::Ran::Exit(code) => ExitCode::from(code),
        rdarrow_cli::Ran::Host(_) => ExitCode::from(2), // no host commands here
    }
}
