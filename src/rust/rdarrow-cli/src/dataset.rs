//! `rdarrow to-dataset`: R data files written as one Arrow dataset.

use clap::{Args, ValueEnum};
use crate::progress::{Progress, Spinner};
use rdarrow_arrow::files::dataset::write_dataset;
use rdarrow_arrow::files::dataset::DatasetEvent;
use rdarrow_arrow::files::dataset::DatasetFormat;
use rdarrow_arrow::files::dataset::DatasetOptions;
use rdarrow_arrow::ReadOptions;
use std::path::PathBuf;
use crate::failure::*;
use crate::arrow::Codec;

#[derive(Args)]
pub(crate) struct ToDatasetArgs {
    /// The R data files (.RData/.rda/.rds/.qs/.qs2/.qdata/.fst), all with the same columns (a directory: its R data files, in subdirectories too)
    #[arg(required = true, num_args = 1..)]
    pub(crate) files: Vec<PathBuf>,
    /// The dataset directory (created; must be new or empty)
    #[arg(short, long, value_name = "DIR")]
    pub(crate) output: PathBuf,
    /// Columns to partition by, hive style (DIR/col=value/part-0.arrow)
    #[arg(long, value_name = "COL,...", value_delimiter = ',')]
    pub(crate) partitioning: Vec<String>,
    /// File format: parquet (.parquet), arrow (.arrow) or feather (.feather, the same bytes as arrow)
    #[arg(long, value_enum, default_value_t = DsFormat::Parquet)]
    pub(crate) format: DsFormat,
    /// The object to take from each .RData file [default: every data frame]
    #[arg(long, value_name = "NAME")]
    pub(crate) object: Option<String>,
    /// Where the object is a list of data frames: the partition column of their names in the list
    #[arg(long, value_name = "COL", default_value = rdarrow_arrow::files::dataset::DEFAULT_NAMES_TO)]
    pub(crate) names_to: String,
    /// Compression [default: zstd for parquet, none for arrow and feather]
    #[arg(long, value_enum)]
    pub(crate) compression: Option<Codec>,
    /// Rows per record batch [default: one batch per file]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) chunk_size: Option<u64>,
    /// Threads writing partitions [default: the number of cores]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) threads: Option<u32>,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum DsFormat {
    Parquet,
    Arrow,
    Feather,
}

pub(crate) fn to_dataset(a: ToDatasetArgs, read: &ReadOptions, progress: &Progress) -> Outcome {
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
    let summary = res.map_err(|e| Failure::Data(message_of(&e)))?;
    for (file, damage) in &summary.damage {
        warn(file, damage);
    }
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
