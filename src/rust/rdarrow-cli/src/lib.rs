//! `rdarrow`: R data files (`.RData`, `.rda`, `.rds`, and the `.qs`,
//! `.qs2` and `.qdata` files of qs and qs2) and Apache Arrow on the
//! command line, without R.
//!
//! Exit status: 0 success, 1 a data error (the message names the file, the
//! object and the byte offset where known), 2 a usage error.
//!
//! The program is this library's [`run`]: the `rdarrow` binary runs it,
//! and so does the Python package's `rdarrow` command, which adds commands
//! of its own (`to-h5ad`, `from-h5ad`) to the same help.

// The commands, by job.
mod arrow;
mod dataset;
mod list;
mod tensor;
mod write;

// What they share.
mod failure;
mod progress;

use arrow::{ToArrowArgs, ToParquetArgs};
use dataset::ToDatasetArgs;
use failure::Failure;
use list::LsArgs;
use tensor::ToTensorArgs;
use write::ToRdataArgs;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use progress::Progress;
use rdarrow_arrow::ReadOptions;
use std::ffi::OsString;
use std::io::IsTerminal;

#[derive(Parser)]
#[command(
    name = "rdarrow",
    version,
    about = "List R data files (.RData/.rda/.rds, and qs's .qs, qs2's .qs2/.qdata, fst's .fst) and convert them to and from Apache Arrow, without R",
    after_help = "Exit status: 0 success, 1 data error, 2 usage error.\n\
                  Progress is shown on standard error when it is a terminal."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// An option of the object store of s3://, gs:// and az:// paths, in
    /// the names of the object_store crate (aws_access_key_id,
    /// endpoint_url, region, allow_http, ...); beyond the environment's
    /// (AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL, ...). Repeat for several.
    #[arg(long = "storage-option", value_name = "KEY=VALUE", global = true)]
    storage_option: Vec<String>,
    /// Recover what is intact from a damaged R data file (cut short, or
    /// failing a checksum) instead of refusing it: the objects, list
    /// elements and data frame columns read whole before the damage, with
    /// a warning on standard error saying what was lost and where (every
    /// command; an array, for to-tensor, only where its data and dim were
    /// read whole)
    #[arg(long, global = true)]
    salvage: bool,
}

#[derive(Subcommand)]
enum Command {
    /// List the objects of an R data file: name, class, type, length, rows, columns, bytes
    Ls(LsArgs),
    /// Write an object of an R data file as an Arrow IPC file or stream
    ToArrow(ToArrowArgs),
    /// Write an object of an R data file as a Parquet file, row group by row group in bounded memory
    ToParquet(ToParquetArgs),
    /// Write an R array (matrix, array, vector) of an R data file as an Arrow Tensor message
    ToTensor(ToTensorArgs),
    /// Write an Arrow IPC file or stream, a Parquet file, an Arrow Tensor message, or an R data file of any kind (a .qs file: its rescue), as .RData, .rds, .qs2 or .qdata
    ToRdata(ToRdataArgs),
    /// Write the data frames of many R data files as one Arrow dataset directory
    ToDataset(ToDatasetArgs),
}

/// A command of the program's host (the Python package's `to-h5ad`), shown
/// in the help beside the program's own: its name and one line about it.
pub struct HostCommand {
    pub name: &'static str,
    pub about: &'static str,
}

/// What [`run`] did: the exit status, or the host command the arguments
/// name (its own arguments follow its name), for the host to run.
pub enum Ran {
    Exit(u8),
    Host(String),
}

/// Run the program on `args` (the first is the program's name): 0 success,
/// 1 a data error, 2 a usage error (the help and version exit 0), each
/// message on standard error as the binary prints it.
pub fn run(args: Vec<OsString>, host: &[HostCommand]) -> Ran {
    let mut cmd = Cli::command();
    for h in host {
        cmd = cmd.subcommand(
            clap::Command::new(h.name)
                .about(h.about)
                .disable_help_flag(true)
                .arg(
                    clap::Arg::new("args")
                        .num_args(0..)
                        .trailing_var_arg(true)
                        .allow_hyphen_values(true),
                ),
        );
    }
    let matches = match cmd.try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) => {
            // --help, --version: exit 0; a usage error: 2
            let _ = e.print();
            return Ran::Exit(e.exit_code() as u8);
        }
    };
    if let Some((name, _)) = matches.subcommand() {
        if host.iter().any(|h| h.name == name) {
            return Ran::Host(name.to_string());
        }
    }
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return Ran::Exit(e.exit_code() as u8);
        }
    };
    let progress = Progress::new(std::io::stderr().is_terminal());
    let res = match rdarrow_arrow::StorageOptions::from_words(&cli.storage_option) {
        Err(e) => Err(Failure::Usage(e.message)),
        Ok(storage) => {
            let read = ReadOptions {
                storage,
                salvage: cli.salvage,
                ..Default::default()
            };
            match cli.command {
                Command::Ls(a) => list::ls(a, &read),
                Command::ToArrow(a) => arrow::to_arrow(a, &read, &progress),
                Command::ToParquet(a) => arrow::to_parquet(a, &read, &progress),
                Command::ToTensor(a) => tensor::to_tensor(a, &read, &progress),
                Command::ToRdata(a) => write::to_rdata(a, &read, &progress),
                Command::ToDataset(a) => dataset::to_dataset(a, &read, &progress),
            }
        }
    };
    Ran::Exit(match res {
        Ok(()) => 0,
        Err(Failure::Data(m)) => {
            eprintln!("rdarrow: error: {m}");
            1
        }
        Err(Failure::Usage(m)) => {
            eprintln!("rdarrow: error: {m}\n\nFor more information, try '--help'.");
            2
        }
    })
}

// --- ls ----------------------------------------------------------------------

// --- to-arrow ----------------------------------------------------------------

// --- to-parquet --------------------------------------------------------------

// --- to-tensor ---------------------------------------------------------------

// --- to-rdata ----------------------------------------------------------------

// --- to-dataset --------------------------------------------------------------
