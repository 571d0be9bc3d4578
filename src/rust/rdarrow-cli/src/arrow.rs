//! `rdarrow to-arrow` and `to-parquet`: an object's table as Arrow IPC or
//! Parquet.

use clap::{Args, ValueEnum};
use crate::progress::Progress;
use rdarrow_arrow::files::ipc::write_ipc;
use rdarrow_arrow::files::ipc::write_ipc_file;
use rdarrow_arrow::files::ipc::IpcCompression;
use rdarrow_arrow::files::ipc::IpcFormat;
use rdarrow_arrow::read_table;
use rdarrow_arrow::ColumnRef;
use rdarrow_arrow::TableOptions;
use rdarrow_arrow::Error;
use rdarrow_arrow::ReadOptions;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use crate::failure::*;

#[derive(Args)]
pub(crate) struct ToArrowArgs {
    /// The R data file (.RData/.rda/.rds/.qs/.qs2/.qdata/.fst, told by its bytes)
    pub(crate) file: PathBuf,
    /// Output file, or - for standard output [default: FILE with the extension .arrow]
    #[arg(short, long, value_name = "OUT")]
    pub(crate) output: Option<PathBuf>,
    /// The object to convert [default: the file's only data frame]
    #[arg(long, value_name = "NAME")]
    pub(crate) object: Option<String>,
    /// IPC file format (random access, Feather v2) or stream format
    #[arg(long, value_enum, default_value_t = IpcKind::File)]
    pub(crate) format: IpcKind,
    /// Buffer compression
    #[arg(long, value_enum, default_value_t = Codec::None)]
    pub(crate) compression: Codec,
    /// Rows per record batch [default: one batch]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) chunk_size: Option<u64>,
    /// Columns to keep, in this order (comma-separated names)
    #[arg(long, value_name = "COL,...", value_delimiter = ',')]
    pub(crate) columns: Option<Vec<String>>,
}

#[derive(Args)]
pub(crate) struct ToParquetArgs {
    /// The R data file (.RData/.rda/.rds/.qs/.qs2/.qdata/.fst, told by its bytes)
    pub(crate) file: PathBuf,
    /// Output file [default: FILE with the extension .parquet]
    #[arg(short, long, value_name = "OUT")]
    pub(crate) output: Option<PathBuf>,
    /// The object to convert [default: the file's only data frame]
    #[arg(long, value_name = "NAME")]
    pub(crate) object: Option<String>,
    /// Compression codec: zstd, snappy, gzip, lz4, uncompressed
    #[arg(long, default_value = "zstd")]
    pub(crate) compression: String,
    /// Compression level (zstd 1-22, gzip 0-9) [default: the codec's]
    #[arg(long, value_name = "N")]
    pub(crate) level: Option<i32>,
    /// Rows per row group [default: up to 1048576, as memory allows]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) row_group_size: Option<u64>,
    /// About how much memory the conversion may use, in MiB
    #[arg(long, value_name = "MIB", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) memory: u64,
    /// Columns to keep, in this order (comma-separated names)
    #[arg(long, value_name = "COL,...", value_delimiter = ',')]
    pub(crate) columns: Option<Vec<String>>,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum IpcKind {
    File,
    Stream,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Codec {
    #[value(alias = "uncompressed")]
    None,
    Lz4,
    Zstd,
}

impl Codec {
    pub(crate) fn ipc(self) -> IpcCompression {
        match self {
            Codec::None => IpcCompression::Uncompressed,
            Codec::Lz4 => IpcCompression::Lz4,
            Codec::Zstd => IpcCompression::Zstd,
        }
    }

    pub(crate) fn parquet(self) -> rdarrow_arrow::files::parquet_layout::ParquetCompression {
        use rdarrow_arrow::files::parquet_layout::ParquetCompression;
        match self {
            Codec::None => ParquetCompression::Uncompressed,
            Codec::Lz4 => ParquetCompression::Lz4,
            Codec::Zstd => ParquetCompression::Zstd,
        }
    }
}

pub(crate) fn to_arrow(a: ToArrowArgs, read_opts: &ReadOptions, progress: &Progress) -> Outcome {
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
            Failure::Data(message_of(&e))
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

pub(crate) fn to_parquet(a: ToParquetArgs, read: &ReadOptions, progress: &Progress) -> Outcome {
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
