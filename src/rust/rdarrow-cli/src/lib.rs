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

mod progress;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use progress::{Progress, Spinner};
use rdarrow_arrow::files::dataset::write_dataset;
use rdarrow_arrow::files::dataset::DatasetEvent;
use rdarrow_arrow::files::dataset::DatasetFormat;
use rdarrow_arrow::files::dataset::DatasetOptions;
use rdarrow_arrow::from_arrow::frame::object_from_batches;
use rdarrow_arrow::files::ipc::read_ipc_bytes;
use rdarrow_arrow::files::ipc::write_ipc;
use rdarrow_arrow::files::ipc::write_ipc_file;
use rdarrow_arrow::files::ipc::IpcCompression;
use rdarrow_arrow::files::ipc::IpcFormat;
use rdarrow_arrow::read_table;
use rdarrow_arrow::ColumnRef;
use rdarrow_arrow::TableOptions;
use rdarrow_arrow::write::write_object_file;
use rdarrow_arrow::write::ObjectFileOptions;
use rdarrow_arrow::Error;
use rdarrow_arrow::ReadOptions;
use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(
    name = "rdarrow",
    version,
    about = "List R data files (.RData/.rda/.rds, and qs's .qs, qs2's .qs2/.qdata) and convert them to and from Apache Arrow, without R",
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

#[derive(Args)]
struct LsArgs {
    /// The R data files (.RData/.rda/.rds/.qs/.qs2/.qdata, told by their bytes): paths, URLs, directories or glob patterns (** across folders); several get a file column
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Print a JSON array instead of a table
    #[arg(long)]
    json: bool,
    /// List what lists hold too, each named by its object path (lst$a, lst[[2]])
    #[arg(short, long)]
    recursive: bool,
}

#[derive(Args)]
struct ToArrowArgs {
    /// The R data file (.RData/.rda/.rds/.qs/.qs2/.qdata, told by its bytes)
    file: PathBuf,
    /// Output file, or - for standard output [default: FILE with the extension .arrow]
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// The object to convert [default: the file's only data frame]
    #[arg(long, value_name = "NAME")]
    object: Option<String>,
    /// IPC file format (random access, Feather v2) or stream format
    #[arg(long, value_enum, default_value_t = IpcKind::File)]
    format: IpcKind,
    /// Buffer compression
    #[arg(long, value_enum, default_value_t = Codec::None)]
    compression: Codec,
    /// Rows per record batch [default: one batch]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    chunk_size: Option<u64>,
    /// Columns to keep, in this order (comma-separated names)
    #[arg(long, value_name = "COL,...", value_delimiter = ',')]
    columns: Option<Vec<String>>,
}

#[derive(Args)]
struct ToParquetArgs {
    /// The R data file (.RData/.rda/.rds/.qs/.qs2/.qdata, told by its bytes)
    file: PathBuf,
    /// Output file [default: FILE with the extension .parquet]
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// The object to convert [default: the file's only data frame]
    #[arg(long, value_name = "NAME")]
    object: Option<String>,
    /// Compression codec: zstd, snappy, gzip, lz4, uncompressed
    #[arg(long, default_value = "zstd")]
    compression: String,
    /// Compression level (zstd 1-22, gzip 0-9) [default: the codec's]
    #[arg(long, value_name = "N")]
    level: Option<i32>,
    /// Rows per row group [default: up to 1048576, as memory allows]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    row_group_size: Option<u64>,
    /// About how much memory the conversion may use, in MiB
    #[arg(long, value_name = "MIB", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    memory: u64,
    /// Columns to keep, in this order (comma-separated names)
    #[arg(long, value_name = "COL,...", value_delimiter = ',')]
    columns: Option<Vec<String>>,
}

#[derive(Args)]
struct ToTensorArgs {
    /// The R data file (.RData/.rda/.rds/.qs/.qs2/.qdata, told by its bytes)
    file: PathBuf,
    /// Output file [default: FILE with the extension .tensor]
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// The array to write [default: the file's only array]
    #[arg(long, value_name = "NAME")]
    object: Option<String>,
}

#[derive(Args)]
struct ToRdataArgs {
    /// The Arrow IPC file or stream, Parquet file, Arrow Tensor message, or R data file (.rds, .RData, .qs, .qs2, .qdata), told by its first bytes (- for standard input: IPC)
    arrow_file: PathBuf,
    /// Output file: .RData/.rda (save() format), .rds (saveRDS() format), .qs2 (qs2::qs_read()) or .qdata (qs2::qd_read())
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// The object's name in the .RData file [default: ARROW_FILE's stem]
    #[arg(long)]
    name: Option<String>,
    /// Compression of the R data file: gzip, bzip2, xz or none (a .qs2 or .qdata file: zstd)
    #[arg(long, default_value = "gzip")]
    compress: String,
    /// Compression level (gzip 0-9, bzip2 1-9, xz 0-9, zstd of .qs2/.qdata 1-22) [default: as R's save(), zstd 3]
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    level: Option<i64>,
    /// Threads compressing independent blocks [default: the number of cores]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    threads: Option<u32>,
}

#[derive(Args)]
struct ToDatasetArgs {
    /// The R data files (.RData/.rda/.rds/.qs/.qs2/.qdata), all with the same columns (a directory: its R data files, in subdirectories too)
    #[arg(required = true, num_args = 1..)]
    files: Vec<PathBuf>,
    /// The dataset directory (created; must be new or empty)
    #[arg(short, long, value_name = "DIR")]
    output: PathBuf,
    /// Columns to partition by, hive style (DIR/col=value/part-0.arrow)
    #[arg(long, value_name = "COL,...", value_delimiter = ',')]
    partitioning: Vec<String>,
    /// File format: parquet (.parquet), arrow (.arrow) or feather (.feather, the same bytes as arrow)
    #[arg(long, value_enum, default_value_t = DsFormat::Parquet)]
    format: DsFormat,
    /// The object to take from each .RData file [default: every data frame]
    #[arg(long, value_name = "NAME")]
    object: Option<String>,
    /// Where the object is a list of data frames: the partition column of their names in the list
    #[arg(long, value_name = "COL", default_value = rdarrow_arrow::files::dataset::DEFAULT_NAMES_TO)]
    names_to: String,
    /// Compression [default: zstd for parquet, none for arrow and feather]
    #[arg(long, value_enum)]
    compression: Option<Codec>,
    /// Rows per record batch [default: one batch per file]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    chunk_size: Option<u64>,
    /// Threads writing partitions [default: the number of cores]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    threads: Option<u32>,
}

#[derive(Clone, Copy, ValueEnum)]
enum IpcKind {
    File,
    Stream,
}

#[derive(Clone, Copy, ValueEnum)]
enum Codec {
    #[value(alias = "uncompressed")]
    None,
    Lz4,
    Zstd,
}

impl Codec {
    fn ipc(self) -> IpcCompression {
        match self {
            Codec::None => IpcCompression::Uncompressed,
            Codec::Lz4 => IpcCompression::Lz4,
            Codec::Zstd => IpcCompression::Zstd,
        }
    }

    fn parquet(self) -> rdarrow_arrow::files::parquet_layout::ParquetCompression {
        use rdarrow_arrow::files::parquet_layout::ParquetCompression;
        match self {
            Codec::None => ParquetCompression::Uncompressed,
            Codec::Lz4 => ParquetCompression::Lz4,
            Codec::Zstd => ParquetCompression::Zstd,
        }
    }
}


#[derive(Clone, Copy, ValueEnum)]
enum DsFormat {
    Parquet,
    Arrow,
    Feather,
}

/// A failure: a data error (exit 1) or a usage error found after parsing (exit 2).
enum Failure {
    Data(String),
    Usage(String),
}

type Outcome = std::result::Result<(), Failure>;

/// A data error about `file`, unless the engine's message names it already.
fn data_error(file: &Path, e: Error) -> Failure {
    let label = file.display().to_string();
    let msg = e.to_string();
    if msg.contains(&label) {
        Failure::Data(msg)
    } else {
        Failure::Data(format!("{label}: {msg}"))
    }
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
                ..Default::default()
            };
            match cli.command {
                Command::Ls(a) => ls(a, &read),
                Command::ToArrow(a) => to_arrow(a, &read, &progress),
                Command::ToParquet(a) => to_parquet(a, &read, &progress),
                Command::ToTensor(a) => to_tensor(a, &read, &progress),
                Command::ToRdata(a) => to_rdata(a, &read, &progress),
                Command::ToDataset(a) => to_dataset(a, &read, &progress),
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

/// The files `given` names, each argument through the engine's one rule
/// (`expand_each`: a glob's matches, a directory's R data files, a store
/// prefix's objects), in order.
fn expand_all(given: &[PathBuf], read: &ReadOptions) -> Result<Vec<PathBuf>, Failure> {
    let given: Vec<String> = given.iter().map(|f| f.to_string_lossy().into_owned()).collect();
    rdarrow_arrow::expand_each(&given, read).map_err(|e| Failure::Usage(e.message))
}

fn ls(a: LsArgs, read: &ReadOptions) -> Outcome {
    let files = expand_all(&a.files, read)?;
    let several = files.len() > 1;
    let mut infos = Vec::new();
    let mut of_file = Vec::new();
    for file in &files {
        // a small file is read on this thread, as the engine rules
        let (_, listed) = rdarrow_arrow::read_small_here_or(file, read, |opts| {
            rdarrow_arrow::list_file(file, opts, &stream_name(file), a.recursive)
        })
        .map_err(|e| data_error(file, e))?;
        of_file.extend(std::iter::repeat_n(file.display().to_string(), listed.len()));
        infos.extend(listed);
    }
    let num = |x: f64| {
        if x.fract() == 0.0 && x.abs() < 9.0e15 {
            format!("{}", x as i64)
        } else {
            format!("{x}")
        }
    };
    let mut out = std::io::stdout().lock();
    let res = if a.json {
        // one object per row, its keys in this order (as pretty JSON)
        let opt = |x: Option<f64>| x.map(|v| serde_json::json!(v as i64)).unwrap_or_default();
        let rows: Vec<String> = infos
            .iter()
            .zip(&of_file)
            .map(|(i, file)| {
                let mut fields = vec![
                    ("name", serde_json::json!(i.name)),
                    ("class", serde_json::json!(i.class)),
                    ("type", serde_json::json!(i.type_name)),
                    ("length", opt(i.length)),
                    ("rows", opt(i.nrow)),
                    ("columns", opt(i.ncol)),
                    (
                        "bytes",
                        i.bytes.map(serde_json::Value::from).unwrap_or_default(),
                    ),
                ];
                if several {
                    fields.insert(0, ("file", serde_json::json!(file)));
                }
                let body: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("    \"{k}\": {v}"))
                    .collect();
                format!("  {{\n{}\n  }}", body.join(",\n"))
            })
            .collect();
        let text = if rows.is_empty() {
            "[]".to_string()
        } else {
            format!("[\n{}\n]", rows.join(",\n"))
        };
        writeln!(out, "{text}")
    } else {
        let mut header = vec![
            "name", "class", "type", "length", "rows", "columns", "bytes",
        ];
        if several {
            header.insert(0, "file");
        }
        // the first column of numbers, right-aligned
        let numbers = header.len() - 4;
        let dash = |x: Option<f64>| x.map(num).unwrap_or_else(|| "-".to_string());
        let rows: Vec<Vec<String>> = infos
            .iter()
            .zip(&of_file)
            .map(|(i, file)| {
                let mut row = vec![
                    i.name.clone(),
                    i.class.clone(),
                    i.type_name.clone(),
                    dash(i.length),
                    dash(i.nrow),
                    dash(i.ncol),
                    i.bytes.map_or_else(|| "-".to_string(), |b| b.to_string()),
                ];
                if several {
                    row.insert(0, file.clone());
                }
                row
            })
            .collect();
        let mut width: Vec<usize> = header.iter().map(|h| h.len()).collect();
        for r in &rows {
            for (w, c) in width.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cells: &[String]| -> String {
            let mut s = String::new();
            for (k, c) in cells.iter().enumerate() {
                let pad = width[k] - c.chars().count();
                if k > 0 {
                    s.push_str("  ");
                }
                if k >= numbers {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(c);
                } else {
                    s.push_str(c);
                    if k + 1 < cells.len() {
                        s.push_str(&" ".repeat(pad));
                    }
                }
            }
            s
        };
        let header: Vec<String> = header.into_iter().map(String::from).collect();
        let mut text = line(&header);
        text.push('\n');
        for r in &rows {
            text.push_str(&line(r));
            text.push('\n');
        }
        out.write_all(text.as_bytes())
    };
    res.and_then(|_| out.flush())
        .map_err(|e| Failure::Data(format!("cannot write the listing: {e}")))
}

// --- to-arrow ----------------------------------------------------------------

fn to_arrow(a: ToArrowArgs, read_opts: &ReadOptions, progress: &Progress) -> Outcome {
    let to_stdout = a.output.as_deref() == Some(Path::new("-"));
    if to_stdout && std::io::stdout().is_terminal() {
        return Err(Failure::Usage(
            "refusing to write Arrow data to a terminal; redirect standard output or use -o FILE"
                .into(),
        ));
    }
    let out = match &a.output {
        Some(p) => p.clone(),
        None => a.file.with_extension("arrow"),
    };
    if !to_stdout && out == a.file {
        return Err(Failure::Usage(format!(
            "the output would overwrite the input '{}'; choose another with -o",
            a.file.display()
        )));
    }
    if !to_stdout {
        rdarrow_arrow::check_sink_name(
            &out,
            rdarrow_arrow::DataFileKind::Ipc,
            "to-parquet",
        )
        .map_err(|e| Failure::Usage(e.to_string()))?;
    }
    let format = match a.format {
        IpcKind::File => IpcFormat::File,
        IpcKind::Stream => IpcFormat::Stream,
    };
    let spin = progress.spinner(format!("reading {}", a.file.display()));
    let opts = TableOptions {
        col_select: a
            .columns
            .clone()
            .map(|c| c.into_iter().map(ColumnRef::Name).collect()),
        chunk_size: a.chunk_size.map(|c| c as usize),
        default_tz: rdarrow_arrow::session_zone(),
        ..Default::default()
    };
    let table = rdarrow_arrow::read_small_here_or(&a.file, read_opts, |read| {
        read_table(
            &a.file,
            a.object.as_deref(),
            &stream_name(&a.file),
            opts.clone(),
            read.clone(),
        )
    })
    .map(|(_, t)| t);
    let table = table.map_err(|e| {
        spin.clear();
        data_error(&a.file, e)
    })?;
    for w in &table.warnings {
        spin.clear();
        eprintln!("rdarrow: warning: {}: {w}", a.file.display());
    }
    spin.set_message(format!(
        "writing {}",
        if to_stdout {
            "to standard output".to_string()
        } else {
            out.display().to_string()
        }
    ));
    let res = if to_stdout {
        let stdout = std::io::stdout().lock();
        match format {
            // the file format needs its footer's offsets: build it in memory
            IpcFormat::File => {
                write_ipc(&table, Vec::new(), format, a.compression.ipc()).and_then(|buf| {
                    let mut s = stdout;
                    s.write_all(&buf)
                        .and_then(|_| s.flush())
                        .map_err(|e| Error::io(&e, "cannot write to standard output"))
                })
            }
            IpcFormat::Stream => write_ipc(
                &table,
                std::io::BufWriter::with_capacity(1 << 20, stdout),
                format,
                a.compression.ipc(),
            )
            .and_then(|mut w| {
                w.flush()
                    .map_err(|e| Error::io(&e, "cannot write to standard output"))
            }),
        }
    } else {
        write_ipc_file(
            &table,
            &out,
            format,
            a.compression.ipc(),
            &read_opts.storage,
        )
    };
    spin.clear();
    res.map_err(|e| {
        if to_stdout {
            Failure::Data(e.to_string())
        } else {
            data_error(&out, e)
        }
    })?;
    progress.note(format!(
        "wrote {} rows, {} columns to {}",
        table.num_rows(),
        table.schema.fields().len(),
        if to_stdout {
            "standard output".to_string()
        } else {
            out.display().to_string()
        }
    ));
    Ok(())
}

/// The name of an `.rds` file's one object: the file's name without its
/// extension (as `rdata_objects()` and `rdata_to_arrow()` in R name it).
fn stream_name(file: &Path) -> String {
    rdarrow_arrow::stream_object_name(file)
}

// --- to-parquet --------------------------------------------------------------

fn to_parquet(a: ToParquetArgs, read: &ReadOptions, progress: &Progress) -> Outcome {
    use rdarrow_arrow::files::parquet_layout::ParquetCompression;
    use rdarrow_arrow::files::parquet_layout::ParquetOptions;
    use rdarrow_arrow::check_sink_name;
    use rdarrow_arrow::convert_to_file;
    use rdarrow_arrow::DataFileKind;
    use rdarrow_arrow::FileOutput;
    let out = a
        .output
        .clone()
        .unwrap_or_else(|| a.file.with_extension("parquet"));
    if out == a.file {
        return Err(Failure::Usage(format!(
            "the output would overwrite the input '{}'; choose another with -o",
            a.file.display()
        )));
    }
    let compression =
        ParquetCompression::parse(&a.compression).map_err(|e| Failure::Usage(e.to_string()))?;
    check_sink_name(&out, DataFileKind::Parquet, "to-arrow")
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let spin = progress.spinner(format!("converting {}", a.file.display()));
    let opts = TableOptions {
        col_select: a
            .columns
            .clone()
            .map(|c| c.into_iter().map(ColumnRef::Name).collect()),
        default_tz: rdarrow_arrow::session_zone(),
        ..Default::default()
    };
    let popts = ParquetOptions {
        compression,
        level: a.level,
        row_group_rows: a.row_group_size.map(|r| r as usize),
        ..Default::default()
    };
    let res = convert_to_file(
        &a.file,
        a.object.as_deref(),
        &stream_name(&a.file),
        opts,
        read.clone(),
        &out,
        &FileOutput::Parquet(popts),
        a.memory << 20,
    );
    spin.clear();
    let (_, rows, warnings) = res.map_err(|e| data_error(&a.file, e))?;
    for w in &warnings {
        eprintln!("rdarrow: warning: {}: {w}", a.file.display());
    }
    progress.note(format!("wrote {rows} rows to {}", out.display()));
    Ok(())
}

// --- to-tensor ---------------------------------------------------------------

fn to_tensor(a: ToTensorArgs, read: &ReadOptions, progress: &Progress) -> Outcome {
    let out = a
        .output
        .clone()
        .unwrap_or_else(|| a.file.with_extension("tensor"));
    if out == a.file {
        return Err(Failure::Usage(format!(
            "the output would overwrite the input '{}'; choose another with -o",
            a.file.display()
        )));
    }
    let spin = progress.spinner(format!("converting {}", a.file.display()));
    let res = rdarrow_arrow::files::tensor::rdata_to_tensor(
        &a.file,
        a.object.as_deref(),
        &stream_name(&a.file),
        read.clone(),
        &out,
    );
    spin.clear();
    let (name, shape) = res.map_err(|e| data_error(&a.file, e))?;
    let shape: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    progress.note(format!(
        "wrote {name} ({}) to {}",
        shape.join(" x "),
        out.display()
    ));
    Ok(())
}

// --- to-rdata ----------------------------------------------------------------

fn to_rdata(a: ToRdataArgs, read: &ReadOptions, progress: &Progress) -> Outcome {
    let from_stdin = a.arrow_file == Path::new("-");
    let rds = rdarrow_arrow::path_is_rds(&a.output.to_string_lossy());
    let name = match (&a.name, from_stdin) {
        (Some(n), _) => n.clone(),
        (None, true) => "data".to_string(),
        (None, false) => rdarrow_arrow::stream_object_name(&a.arrow_file),
    };
    if name.is_empty() {
        return Err(Failure::Usage(
            "the object name (--name) must not be empty".into(),
        ));
    }
    let (compression, level) =
        rdarrow_arrow::compression_for_path(&a.output.to_string_lossy(), &a.compress, a.level)
            .map_err(|e| Failure::Usage(e.message))?;
    let threads = a.threads.map(|t| t as usize).unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let opts = ObjectFileOptions {
        name: name.clone(),
        compression,
        level,
        threads,
        rds,
        storage: read.storage.clone(),
        ..ObjectFileOptions::default()
    };
    let limit = read.memory_limit();
    if !from_stdin && is_r_data_file(&a.arrow_file) {
        // an R data file of any kind (a .qs file among them), rewritten
        // as R's own
        let spin = progress.spinner(format!("rewriting {}", a.arrow_file.display()));
        let res = rdarrow_arrow::rewrite_file(a.arrow_file.as_path(), &a.output, &opts, read);
        spin.clear();
        let n = res.map_err(|e| {
            if e.to_string().contains(&a.output.display().to_string()) {
                data_error(&a.output, e)
            } else {
                data_error(&a.arrow_file, e)
            }
        })?;
        progress.note(format!(
            "wrote {} ({n} object{}){}",
            a.output.display(),
            if n == 1 { "" } else { "s" },
            if rds { String::new() } else { format!(" as '{name}'") }
        ));
        return Ok(());
    }
    let spin = progress.spinner(format!("converting {}", a.arrow_file.display()));
    let (rows, columns) = if from_stdin {
        let mut buf = Vec::new();
        let (schema, batches) = std::io::stdin()
            .lock()
            .read_to_end(&mut buf)
            .map_err(|e| Error::io(&e, "cannot read standard input"))
            .and_then(|_| read_ipc_bytes(buf, "standard input", limit))
            .map_err(|e| {
                spin.clear();
                data_error(&a.arrow_file, e)
            })?;
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        let res = object_from_batches(&schema, &batches).and_then(|f| {
            drop(batches);
            write_object_file(&a.output, f.object, f.refs, &opts)
        });
        spin.clear();
        res.map_err(|e| data_error(&a.output, e))?;
        (rows, schema.fields().len())
    } else {
        // a Parquet file is converted one column at a time
        let res = rdarrow_arrow::data_file_to_rdata(&a.arrow_file, &a.output, &opts, limit);
        spin.clear();
        res.map_err(|e| {
            // a write error names the output; any other is the input's
            if e.to_string().contains(&a.output.display().to_string()) {
                data_error(&a.output, e)
            } else {
                data_error(&a.arrow_file, e)
            }
        })?
    };
    progress.note(format!(
        "wrote {} ({} rows, {} columns){}",
        a.output.display(),
        rows,
        columns,
        if rds {
            String::new()
        } else {
            format!(" as '{name}'")
        }
    ));
    Ok(())
}

/// Whether the local file at `path` is an R data file, by its first bytes
/// (the engine's rule); not one that cannot be read (the converter says
/// why).
fn is_r_data_file(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; rdarrow_arrow::compression::DETECT_LEN];
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k,
        }
    }
    rdarrow_arrow::looks_like_r_data(&head[..n])
}

// --- to-dataset --------------------------------------------------------------

fn to_dataset(a: ToDatasetArgs, read: &ReadOptions, progress: &Progress) -> Outcome {
    let opts = DatasetOptions {
        partitioning: a
            .partitioning
            .iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        format: match a.format {
            DsFormat::Parquet => DatasetFormat::Parquet,
            DsFormat::Arrow => DatasetFormat::Arrow,
            DsFormat::Feather => DatasetFormat::Feather,
        },
        object: a.object.clone(),
        names_to: a.names_to.clone(),
        compression: a.compression.map(Codec::ipc),
        parquet: {
            let mut p = rdarrow_arrow::files::parquet_layout::ParquetOptions::default();
            if let Some(c) = a.compression {
                p.compression = c.parquet();
            }
            p
        },
        chunk_size: a.chunk_size.map(|c| c as usize),
        default_tz: rdarrow_arrow::session_zone(),
        read: read.clone(),
        threads: a.threads.map(|t| t as usize).unwrap_or(0),
    };
    // globs, directories and store prefixes: the files they name
    let inputs = expand_all(&a.files, read)?;
    let files = progress.bar(inputs.len() as u64, "files");
    let mut current: Option<Spinner> = None;
    let mut on_event = |ev: DatasetEvent| match ev {
        DatasetEvent::Input { path, .. } => {
            current = Some(progress.spinner(format!("reading {}", path.display())));
        }
        DatasetEvent::Object { name, rows, .. } => {
            if let Some(s) = &current {
                s.set_message(format!(
                    "writing {} ({rows} rows)",
                    if name.is_empty() { "the object" } else { name }
                ));
            }
        }
        DatasetEvent::InputDone { .. } => {
            if let Some(s) = current.take() {
                s.clear();
            }
            files.inc(1);
        }
    };
    let res = write_dataset(&inputs, &a.output, &opts, &mut on_event);
    if let Some(s) = current.take() {
        s.clear();
    }
    files.finish_and_clear();
    let summary = res.map_err(|e| Failure::Data(e.to_string()))?;
    progress.note(format!(
        "wrote {} file{} ({} rows from {} object{}) to {}",
        summary.files.len(),
        if summary.files.len() == 1 { "" } else { "s" },
        summary.rows,
        summary.objects,
        if summary.objects == 1 { "" } else { "s" },
        a.output.display()
    ));
    Ok(())
}
